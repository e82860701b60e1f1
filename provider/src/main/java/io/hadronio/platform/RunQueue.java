package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.hadronio.ucx.WordCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether more threads want to run than the machine has cores: the kernel's count of
 * runnable threads (the fourth field of {@code /proc/loadavg}, the asking thread included)
 * against the online CPUs.
 *
 * <p>An adaptive waiter spins so that an answer that comes within microseconds is seen
 * without a sleep and a wake-up. That only pays while the core it spins on is its own:
 * when other threads are runnable and wait for a core, every microsecond of spinning is
 * taken from them (an application's own threads, on a 2-core machine: gRPC's callers,
 * Netty's event loop). A waiter that has spun a while without an answer asks
 * {@link #crowded(long)} and sleeps at once when it says so.
 *
 * <p>Reading {@code /proc/loadavg} is a {@code pread(2)} of ~1.5–2.5 µs here, so the answer
 * is shared by all threads and refreshed at most every {@link #REFRESH_NANOS}; one thread
 * reads at a time, the others take the last answer. Without {@code /proc/loadavg} it is never
 * crowded. Allocation-free.
 *
 * <p>The figure is machine-wide, so it only speaks for a process that may run on every online
 * CPU. A process confined to fewer ({@code taskset}, a cpuset; its affinity mask when this
 * class loads) is never crowded here: the threads the count adds up may be pinned to other
 * cores, where our sleeping frees nothing for them, and the waiter's yields already hand its
 * own core to any thread queued there. Measured (docs/benchmarks/apps.md): with
 * gRPC's server and client each pinned to one core, the other process's spinning event loop
 * and its executor made the machine look crowded whenever a call was in flight, so each
 * event loop slept at once and every message needed a wake-up: sequential calls ran at
 * 2,100-6,800/s with the check and 12,400-16,300/s without it, in the same rounds. The
 * machine-wide check stays for unconfined processes, where a thread we free a core for can
 * take it; there the figures did not change. The price: in a confined process
 * with more busy threads than its cores, a waiter keeps spinning (yielding) for its window
 * where it would have slept.
 */
public final class RunQueue {
    /** How old an answer may be before a waiter reads {@code /proc/loadavg} again. */
    public static final long REFRESH_NANOS = 50_000;

    private static final int O_RDONLY = 0;
    private static final int O_CLOEXEC = 0x80000;
    private static final int SC_NPROCESSORS_ONLN = 84;
    private static final int BUFFER = 128;
    // room for 8,192 CPUs (the kernel refuses a mask smaller than its own)
    private static final int AFFINITY_MASK_BYTES = 1024;

    private static final Linker LINKER = Linker.nativeLinker();
    /** {@snippet lang=c : ssize_t pread(int fd, void *buf, size_t count, off_t offset); } */
    private static final MethodHandle MH$pread = LINKER.downcallHandle(
            LINKER.defaultLookup().find("pread").orElseThrow(),
            WordCalls.call(4));

    // the open /proc/loadavg (never closed: one fd for the process's life), -1 without it
    private static final int FD;
    private static final int CPUS;
    // the CPUs this process may run on (its affinity mask when the class loaded), 0 when unknown
    private static final int ALLOWED;
    // ALLOWED < CPUS: the machine-wide count does not speak for us
    private static final boolean CONFINED;
    // where a read lands; used by the one thread that holds READING
    private static final MemorySegment BUF;
    private static final AtomicBoolean READING = new AtomicBoolean();
    private static volatile long readAt;
    private static volatile boolean readOnce;
    private static volatile boolean crowded;

    static {
        Arena arena = Arena.global();
        BUF = arena.allocate(BUFFER);
        int fd = -1;
        int cpus = 0;
        int allowed = 0;
        try {
            MethodHandle open = LINKER.downcallHandle(LINKER.defaultLookup().find("open").orElseThrow(),
                    WordCalls.call(2));
            MethodHandle sysconf = LINKER.downcallHandle(LINKER.defaultLookup().find("sysconf").orElseThrow(),
                    WordCalls.call(1));
            MemorySegment path = arena.allocateFrom("/proc/loadavg");
            fd = (int) (long) open.invokeExact(path.address(), (long) (O_RDONLY | O_CLOEXEC), 0L, 0L);
            cpus = (int) (long) sysconf.invokeExact((long) SC_NPROCESSORS_ONLN, 0L, 0L, 0L);
        } catch (Throwable t) {
            fd = -1;
        }
        try {
            allowed = countAffinityMask(arena);
        } catch (Throwable t) {
            // unknown: the process counts as unconfined, and the machine-wide check stays
            allowed = 0;
        }
        FD = cpus > 0 ? fd : -1;
        CPUS = cpus;
        ALLOWED = allowed;
        CONFINED = allowed > 0 && allowed < cpus;
    }

    /** The CPUs in this thread's affinity mask ({@code sched_getaffinity(2)}), 0 when it cannot be read. */
    private static int countAffinityMask(Arena arena) throws Throwable {
        MethodHandle getaffinity = LINKER.downcallHandle(LINKER.defaultLookup().find("sched_getaffinity").orElseThrow(),
                WordCalls.call(3));
        MemorySegment mask = arena.allocate(AFFINITY_MASK_BYTES);
        if ((int) (long) getaffinity.invokeExact(0L, (long) AFFINITY_MASK_BYTES, mask.address(), 0L) != 0) {
            return 0;
        }
        int allowed = 0;
        for (long i = 0; i < AFFINITY_MASK_BYTES; i += Long.BYTES) {
            allowed += Long.bitCount(mask.get(JAVA_LONG, i));
        }
        return allowed;
    }

    private RunQueue() {
    }

    /**
     * True when, as of at most {@link #REFRESH_NANOS} before {@code now}
     * ({@link System#nanoTime()}), more threads were runnable than the machine has cores;
     * always false in a {@link #confined()} process.
     */
    public static boolean crowded(long now) {
        if (FD < 0 || CONFINED) {
            return false;
        }
        if (readOnce && now - readAt < REFRESH_NANOS) {
            return crowded;
        }
        if (!READING.compareAndSet(false, true)) {
            return crowded;
        }
        try {
            int running = readRunning();
            if (running >= 0) {
                crowded = running > CPUS;
            }
            readAt = now;
            readOnce = true;
        } finally {
            READING.set(false);
        }
        return crowded;
    }

    /** The runnable threads now, as {@code /proc/loadavg} tells ({@code "0.10 0.20 0.30 2/150 1234"}); -1 on failure. */
    static int readRunning() {
        long n;
        try {
            n = (long) MH$pread.invokeExact((long) FD, BUF.address(), (long) BUFFER, 0L);
        } catch (Throwable t) {
            return -1;
        }
        int spaces = 0;
        int running = -1;
        for (int i = 0; i < n; i++) {
            byte b = BUF.get(ValueLayout.JAVA_BYTE, i);
            if (spaces < 3) {
                if (b == ' ') {
                    spaces++;
                }
            } else if (b >= '0' && b <= '9') {
                running = (running < 0 ? 0 : running * 10) + (b - '0');
            } else {
                break;
            }
        }
        return running;
    }

    /** The online CPUs the answer is compared with (0 when unknown). */
    public static int cpus() {
        return CPUS;
    }

    /** The CPUs this process may run on, as its affinity mask said when this class loaded (0 when unknown). */
    public static int allowedCpus() {
        return ALLOWED;
    }

    /** True when this process may run on fewer CPUs than are online: then it is never crowded here. */
    public static boolean confined() {
        return CONFINED;
    }
}
