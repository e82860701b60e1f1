package io.hadronio.platform;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;

/**
 * Whether the JVM's JIT compiler is busy: its accumulated compilation time
 * ({@link CompilationMXBean#getTotalCompilationTime()}) grew by at least a quarter of the wall
 * time between two samples, taken at least {@link #SAMPLE_NANOS} apart.
 *
 * <p>An adaptive waiter asks this only after a yield that kept it off its core for long
 * ({@code AdaptiveSpin}): then the question is who took the core. A thread of the application
 * (a request handed to a pool thread on the same core) is what the yield is for; the compiler
 * of a young JVM, pinned to the same core, keeps it for the rest of the kernel's time slice while
 * the answer the waiter spins for has come (every short Netty round-trip run of 2026-11-29 had
 * its p99 at 4 ms, one tick here). A compiler that only recompiles now and then (an application
 * after its warm-up) is not busy: a test of "compiled anything lately" said yes 1-2 times a
 * second in Jetty and JGroups after a 15-s warm-up, and cost them their hand-overs.
 *
 * <p>Not on a hot path: it takes a lock and, once a sample is due, asks the JVM.
 */
public final class CompilerActivity {
    /** Samples closer than this are too coarse: the JVM counts whole milliseconds. */
    static final long SAMPLE_NANOS = 100_000_000L;
    /** Busy: compiling for at least 1/BUSY_SHARE of the wall time since the previous sample. */
    static final int BUSY_SHARE = 4;

    private static final CompilationMXBean COMPILER = compiler();
    // the first sample is the JVM's start (no compilation yet): a young JVM's first long yield
    // already tells, which matters in runs of under a second
    private static long sampleMillis;
    private static long sampleNanos = startNanos();
    private static boolean busy;

    private static long startNanos() {
        try {
            return System.nanoTime() - ManagementFactory.getRuntimeMXBean().getUptime() * 1_000_000L;
        } catch (LinkageError | RuntimeException e) {
            return System.nanoTime();
        }
    }

    private CompilerActivity() {
    }

    private static CompilationMXBean compiler() {
        try {
            CompilationMXBean c = ManagementFactory.getCompilationMXBean();
            return c != null && c.isCompilationTimeMonitoringSupported() ? c : null;
        } catch (LinkageError | RuntimeException e) {
            // a runtime image without java.management, or a JVM without a JIT: never busy
            return null;
        }
    }

    /**
     * Whether the compiler was busy between the last two samples, taking a new one at
     * {@code now} ({@link System#nanoTime()}) when the last is {@link #SAMPLE_NANOS} old; false
     * without a JIT or its figures.
     */
    public static synchronized boolean busy(long now) {
        if (COMPILER == null) {
            return false;
        }
        long elapsed = now - sampleNanos;
        if (elapsed >= SAMPLE_NANOS) {
            long total = COMPILER.getTotalCompilationTime();
            busy = (total - sampleMillis) * 1_000_000L * BUSY_SHARE >= elapsed;
            sampleMillis = total;
            sampleNanos = now;
        }
        return busy;
    }
}
