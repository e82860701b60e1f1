/*
 * The experiment that chose hadroNIO's wait strategy (docs/architecture.md, "The wait strategy"):
 * a waiter thread and a thread busy 2 ms out of every 4 share core 0; a writer thread on core 1
 * publishes a message every 20-220 us (random) and signals an eventfd when the waiter sleeps.
 * Printed: the time from a message to the waiter seeing it (p50/p99/p99.9/max/mean, us), and the
 * waiter's yields (how many took 50 us or more: another thread ran on the core meanwhile).
 *
 *   gcc -O2 -pthread -o /tmp/wait-strategy docs/repro/wait-strategy.c
 *   /tmp/wait-strategy MODE BUSY [SLICE_US]
 *     MODE 0: spin 2 us, then sched_yield until the message (hadroNIO before the hold)
 *          1: spin 2 us, then sleep on the eventfd (poll)
 *          2: as 0, but a yield of 50 us or more makes the waiter sleep instead for 20 ms
 *          3: spin with CPU pauses only, never yield or sleep
 *          4: as 1, with a 100-us slice set before each sleep and the default set back after it
 *          5: as 0, but a yield of 250 us or more starts a hold (8 ms, doubling while yields stay
 *             slow): through it the waiter sleeps, with a 100-us slice (hadroNIO's AdaptiveSpin)
 *     BUSY 1: the busy thread runs; 0: it does not
 *     SLICE_US: the waiter's sched_setattr slice (SCHED_OTHER, Linux 6.12+), e.g. 100
 */
#define _GNU_SOURCE
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

struct sched_attr_v0 {
    uint32_t size, sched_policy;
    uint64_t sched_flags;
    int32_t sched_nice;
    uint32_t sched_priority;
    uint64_t sched_runtime, sched_deadline, sched_period;
};

#define N 3000
static _Atomic uint64_t sent;
static _Atomic int sleeping;
static int efd, busy;
static volatile int stop;
static uint64_t lat[N];

static uint64_t now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1000000000ull + t.tv_nsec;
}

static void pin(int cpu) {
    cpu_set_t s;
    CPU_ZERO(&s);
    CPU_SET(cpu, &s);
    pthread_setaffinity_np(pthread_self(), sizeof s, &s);
}

static void *busy_thread(void *a) {
    pin(0);
    while (!stop) {
        uint64_t t = now();
        while (now() - t < 2000000) {
        }
        usleep(2000);
    }
    return 0;
}

static void *writer(void *a) {
    pin(1);
    srand(1);
    for (int i = 0; i < N && !stop; i++) {
        uint64_t d = 20000 + rand() % 200000, t = now();
        while (now() - t < d) {
        }
        atomic_store(&sent, now());
        if (atomic_load(&sleeping)) {
            uint64_t one = 1;
            if (write(efd, &one, 8) < 0) {
                perror("write");
            }
        }
        while (atomic_load(&sent) != 0 && !stop) {
        }
    }
    stop = 1;
    return 0;
}

static int cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *) a, y = *(const uint64_t *) b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc < 3) {
        fprintf(stderr, "usage: %s MODE BUSY [SLICE_US]\n", argv[0]);
        return 2;
    }
    int mode = atoi(argv[1]);
    busy = atoi(argv[2]);
    efd = eventfd(0, EFD_NONBLOCK);
    pthread_t b, w;
    pin(0);
    if (busy) {
        pthread_create(&b, 0, busy_thread, 0);
    }
    pthread_create(&w, 0, writer, 0);
    if (argc > 3) {
        /* after the threads are made: they would inherit it */
        struct sched_attr_v0 at;
        memset(&at, 0, sizeof at);
        at.size = sizeof at;
        at.sched_runtime = atoll(argv[3]) * 1000;
        if (syscall(SYS_sched_setattr, 0, &at, 0)) {
            perror("sched_setattr");
        }
    }
    uint64_t hold_until = 0, yields = 0, long_yields = 0, hold = 8000000; int inhold = 0;
    int n = 0;
    while (n < N && !stop) {
        uint64_t start = now(), s;
        while (!(s = atomic_load(&sent))) {
            uint64_t t = now();
            if (t - start < 2000) {
                __builtin_ia32_pause();
                continue;
            }
            if (mode == 5) {
                if (inhold && t >= hold_until) {
                    struct sched_attr_v0 at; memset(&at, 0, sizeof at); at.size = sizeof at; at.sched_runtime = 0;
                    syscall(SYS_sched_setattr, 0, &at, 0);
                    inhold = 0;
                }
                if (!inhold) {
                    sched_yield();
                    uint64_t took = now() - t;
                    yields++;
                    if (took >= 250000) {
                        long_yields++;
                        inhold = 1; hold_until = now() + hold; if (hold < 1000000000) hold *= 2;
                        struct sched_attr_v0 at; memset(&at, 0, sizeof at); at.size = sizeof at; at.sched_runtime = 100000;
                        syscall(SYS_sched_setattr, 0, &at, 0);
                    } else {
                        hold = 8000000;
                    }
                    continue;
                }
            }
            if (mode == 3) {
                __builtin_ia32_pause();
                continue;
            }
            if (mode == 0 || (mode == 2 && t >= hold_until)) {
                sched_yield();
                uint64_t took = now() - t;
                yields++;
                if (took >= 50000) {
                    long_yields++;
                    if (mode == 2) {
                        hold_until = now() + 20000000;
                    }
                }
                continue;
            }
            atomic_store(&sleeping, 1);
            if ((s = atomic_load(&sent))) {
                atomic_store(&sleeping, 0);
                break;
            }
            struct pollfd p = {efd, POLLIN, 0};
            if (mode == 4) {
                struct sched_attr_v0 at; memset(&at, 0, sizeof at); at.size = sizeof at; at.sched_runtime = 100000;
                syscall(SYS_sched_setattr, 0, &at, 0);
            }
            poll(&p, 1, 100);
            if (mode == 4) {
                struct sched_attr_v0 at; memset(&at, 0, sizeof at); at.size = sizeof at; at.sched_runtime = 0;
                syscall(SYS_sched_setattr, 0, &at, 0);
            }
            uint64_t v;
            if (read(efd, &v, 8) < 0) {
                /* nothing to drain: woken by the timeout */
            }
            atomic_store(&sleeping, 0);
        }
        lat[n++] = now() - s;
        atomic_store(&sent, 0);
    }
    stop = 1;
    qsort(lat, n, sizeof lat[0], cmp);
    double mean = 0;
    for (int i = 0; i < n; i++) {
        mean += lat[i];
    }
    mean /= n;
    printf("mode=%d busy=%d slice=%s n=%d p50=%.1f p99=%.1f p99.9=%.1f max=%.1f mean=%.1f us yields=%lu long=%lu\n",
           mode, busy, argc > 3 ? argv[3] : "-", n, lat[n / 2] / 1e3, lat[n * 99 / 100] / 1e3,
           lat[n * 999 / 1000] / 1e3, lat[n - 1] / 1e3, mean / 1e3, yields, long_yields);
    return 0;
}
