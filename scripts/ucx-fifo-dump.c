/*
 * Shows the UCX 1.13 sysv receive FIFOs of a running process: head, tail, and every
 * element between them, marked "NOT WRITTEN" when a sender took it (head moved past it)
 * and never flipped its owner bit. An element that stays NOT WRITTEN while the process
 * waits for messages is the early-kill stall of docs/crash-isolation.md: a sender killed
 * in the middle of its write, and every later message queued behind it.
 *
 *   gcc -O1 -o /tmp/ucx-fifo-dump scripts/ucx-fifo-dump.c
 *   /tmp/ucx-fifo-dump PID [FIFO_SIZE=64] [FIFO_ELEM_SIZE=128]     (as the process's user or root)
 *
 * Layout (UCX src/uct/sm/mm/base/mm_iface.h, checked against Debian's libuct 1.13.1): the
 * control block at the first 64-byte boundary of the segment, head at +0 (bit 63: the
 * receiver armed its event), tail at +0x80; elements from +0xC0, with flags (bit 0 owner,
 * bit 1 inline), am_id and a 16-bit length in their first four bytes. A written element
 * of index i has owner bit (i & FIFO_SIZE) != 0.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/shm.h>

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s PID [FIFO_SIZE] [FIFO_ELEM_SIZE]\n", argv[0]);
        return 2;
    }
    long pid           = atol(argv[1]);
    uint64_t fifo_size = argc > 2 ? strtoull(argv[2], NULL, 0) : 64;
    uint64_t elem_size = argc > 3 ? strtoull(argv[3], NULL, 0) : 128;
    FILE *f            = fopen("/proc/sysvipc/shm", "r");
    char line[512];
    int found = 0;

    if (f == NULL || fgets(line, sizeof(line), f) == NULL) {
        perror("/proc/sysvipc/shm");
        return 1;
    }
    while (fgets(line, sizeof(line), f) != NULL) {
        long key, shmid, perms, size, cpid;
        if ((sscanf(line, "%ld %ld %lo %ld %ld", &key, &shmid, &perms, &size, &cpid) != 5) ||
            (cpid != pid) || (size > (1 << 20))) {
            continue; /* not this process's, or a (megabytes large) descriptor segment */
        }
        void *mem = shmat((int)shmid, NULL, SHM_RDONLY);
        if (mem == (void*)-1) {
            perror("shmat");
            continue;
        }
        uint8_t *ctl   = (uint8_t*)(((uintptr_t)mem + 63) & ~(uintptr_t)63);
        uint64_t head  = *(volatile uint64_t*)ctl & ~(1ull << 63);
        uint64_t tail  = *(volatile uint64_t*)(ctl + 0x80);
        uint8_t *elems = ctl + 0xc0;
        found++;
        printf("shmid %ld (%ld bytes): head %llu tail %llu\n", shmid, size,
               (unsigned long long)head, (unsigned long long)tail);
        for (uint64_t i = tail; (i < head) && (i - tail <= fifo_size); i++) {
            uint8_t *e = elems + (i & (fifo_size - 1)) * elem_size;
            int written_bit = (i & fifo_size) ? 1 : 0;
            printf("  [%llu] flags 0x%x am_id %u length %u %s\n", (unsigned long long)i, e[0], e[1],
                   *(uint16_t*)(e + 2),
                   ((e[0] & 1) == written_bit) ? "written" : "NOT WRITTEN (taken, owner bit not flipped)");
        }
        shmdt(mem);
    }
    if (found == 0) {
        printf("no small System V segment created by process %ld\n", pid);
    }
    return 0;
}
