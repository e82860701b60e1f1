// The copy pipeline of the fetch pattern (docs/benchmarks/patterns.md, "transferTo") without
// hadroNIO, Java or UCX: a writer process on core 0 copies 64 KiB chunks into a ring of send
// slots, a reader process on core 1 fetches each chunk with process_vm_readv (what UCX's cma
// rendezvous does) into a 1 MiB buffer, one chunk at a time, each acknowledged before its slot
// is written again. It says how fast this machine's two cores can move the bytes the way
// hadroNIO moves them.
//
//   gcc -O2 -o /tmp/cma-pipeline docs/repro/cma-pipeline.c
//   /tmp/cma-pipeline SOURCE BYTES [REMAP_BYTES]
//
// SOURCE: "memory" (a 16 MiB buffer of the writer's) or a file (a 1 GiB file in /dev/shm, as the
// fetch pattern serves), mapped read-only 8 MiB at a time as FileChannel.transferTo maps it, and
// mapped again every REMAP_BYTES (default 8 MiB; 262144 is about what one transferTo of the fetch
// pattern takes over UCX). Prints GB/s moved.
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CHUNK (64 * 1024)
#define SLOTS 32
#define MAP (8L << 20)
#define DST (1 << 20)

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    sched_setaffinity(0, sizeof s, &s);
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s memory|FILE BYTES [REMAP_BYTES]\n", argv[0]);
        return 2;
    }
    const char *source = argv[1];
    long total = atol(argv[2]);
    long remap = argc > 3 ? atol(argv[3]) : MAP;
    long chunks = total / CHUNK;
    char *slots = aligned_alloc(2 << 20, SLOTS * CHUNK);
    memset(slots, 1, SLOTS * CHUNK);
    // [0]: chunks published by the writer, [1]: chunks the reader has fetched
    _Atomic long *counts = mmap(0, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    pid_t writer = fork();
    if (writer == 0) {
        pin(0);
        int fd = strcmp(source, "memory") == 0 ? -1 : open(source, O_RDONLY);
        long fileSize = fd < 0 ? 0 : lseek(fd, 0, SEEK_END);
        char *memory = fd < 0 ? malloc(16 << 20) : NULL;
        if (memory) {
            memset(memory, 2, 16 << 20);
        }
        char *mapped = NULL;
        long mappedAt = -1;
        for (long k = 0; k < chunks; k++) {
            while (k - atomic_load(&counts[1]) >= SLOTS) {
            }
            const char *from;
            if (fd < 0) {
                from = memory + (k * CHUNK) % (16 << 20);
            } else {
                long off = (k * CHUNK) % fileSize;
                long at = off / remap * remap;
                if (at != mappedAt) {
                    if (mapped) {
                        munmap(mapped, MAP);
                    }
                    mapped = mmap(0, MAP, PROT_READ, MAP_SHARED, fd, at);
                    mappedAt = at;
                }
                from = mapped + (off - at);
            }
            memcpy(slots + (k % SLOTS) * CHUNK, from, CHUNK);
            atomic_store(&counts[0], k + 1);
        }
        while (atomic_load(&counts[1]) < chunks) {
        }
        _exit(0);
    }
    pin(1);
    char *dst = aligned_alloc(4096, DST);
    memset(dst, 0, DST);
    double start = now();
    for (long k = 0; k < chunks; k++) {
        while (atomic_load(&counts[0]) <= k) {
        }
        struct iovec local = {dst + (k % (DST / CHUNK)) * CHUNK, CHUNK};
        struct iovec remote = {slots + (k % SLOTS) * CHUNK, CHUNK};
        if (process_vm_readv(writer, &local, 1, &remote, 1, 0) != CHUNK) {
            perror("process_vm_readv");
            return 1;
        }
        atomic_store(&counts[1], k + 1);
    }
    double seconds = now() - start;
    waitpid(writer, NULL, 0);
    printf("%s, remap every %ld bytes: %.2f GB/s\n", source, remap, total / seconds / 1e9);
    return 0;
}
