package io.hadronio.app.evaluate;

/**
 * Messages (and warm-up messages) for one run, so that its measured part lasts about the
 * profile's window whichever provider runs it: the JDK's loopback TCP round trip is tens of
 * µs where hadroNIO's is a few, so equal counts would make the JDK's runs take ten times as
 * long or hadroNIO's too short to mean anything. The model below is a rough guess of the
 * cost of one operation (written from this project's earlier measurements, see
 * docs/benchmarks/); a wrong guess only makes a run shorter or longer, never wrong.
 *
 * @param messages measured operations (round trips or writes)
 * @param warmup   operations before the measured part
 */
record RunSizing(int messages, int warmup) {
    // bounds: enough operations for a p99.9, and not so many that a bad guess runs for minutes
    private static final int MIN_MESSAGES = 100;
    private static final int MAX_MESSAGES = 2_000_000;
    // warm-up never shorter than this many operations, so that the JIT has compiled the loop
    private static final int MIN_WARMUP = 2_000;

    /** A measured run of {@code point}: about one window of operations, after its warm-up. */
    static RunSizing of(Point point, double windowSeconds) {
        double micros = expectedMicros(point);
        int messages = (int) Math.max(MIN_MESSAGES, Math.min(MAX_MESSAGES, windowSeconds * 1e6 / micros));
        // the warm-up is as long as the measurement and at least MIN_WARMUP operations, whatever the size: a
        // large message takes paths of its own (several slices per message, waits for credits) that the smaller
        // sizes before it did not warm up. Capping it at one window (187 round trips of 1 MiB) measured hadroNIO
        // before the JIT had compiled them: 1 MiB round trips averaged ~1.4 ms over the first few hundred and
        // ~0.22 ms after a few thousand, while the JDK's kernel path needs no warming (docs/benchmarks/blocking.md).
        // It costs the quick profile about a minute, mostly the JDK's 1 MiB round trips.
        int warmup = Math.max(messages, MIN_WARMUP);
        return new RunSizing(messages, warmup);
    }

    /**
     * The unmeasured pass a JVM pair starts with ({@link BenchmarkPair#run}): a window's
     * operations after a warm-up of three windows (at least {@link #MIN_WARMUP} operations),
     * so that the JIT has compiled the benchmark loop and the provider's paths before the
     * first measured size. Netty needed that much: with two windows its mean round trip still
     * fell over the first four sizes.
     */
    static RunSizing warmupPass(Point point, double windowSeconds) {
        RunSizing measured = of(point, windowSeconds);
        double micros = expectedMicros(point);
        int warmup = (int) Math.max(MIN_WARMUP, Math.min(4L * MAX_MESSAGES, 3 * windowSeconds * 1e6 / micros));
        return new RunSizing(measured.messages(), warmup);
    }

    /** Expected µs per operation: a fixed cost plus the size at an expected copy rate. */
    static double expectedMicros(Point point) {
        double size = point.size();
        boolean kernel = point.provider() == Provider.JDK;
        if (point.metric() == Metric.LATENCY) {
            // a round trip: JDK ~50 µs on a loaded 2-core box, the binding on shared memory ~2-5 µs, hadroNIO
            // ~10 µs, ~25 µs under Netty (quick profile, load average ~8)
            double fixed = kernel ? 50 : point.provider() == Provider.UCX ? 4 : point.mode() == Mode.NETTY ? 25 : 10;
            return fixed + size / (kernel ? 1_000 : 2_000);
        }
        // one write of a stream: a syscall (JDK) or a few hundred ns (UCX), plus the copy
        return kernel ? 3 + size / 2_000 : 0.5 + size / 4_000;
    }
}
