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

    static RunSizing of(Point point, double windowSeconds) {
        double micros = expectedMicros(point);
        int messages = (int) Math.max(MIN_MESSAGES, Math.min(MAX_MESSAGES, windowSeconds * 1e6 / micros));
        // the warm-up is as long as the measurement, within [MIN_WARMUP, time for MIN_WARMUP at 4x the window]
        int warmup = (int) Math.min(Math.max(messages, MIN_WARMUP), Math.max(MIN_MESSAGES, 4 * windowSeconds * 1e6 / micros));
        return new RunSizing(messages, warmup);
    }

    /** Expected µs per operation: a fixed cost plus the size at an expected copy rate. */
    static double expectedMicros(Point point) {
        double size = point.size();
        boolean kernel = point.provider() == Provider.JDK;
        if (point.metric() == Metric.LATENCY) {
            // a round trip: JDK ~50 µs on a loaded 2-core box, UCX shared memory ~2-5 µs
            return kernel ? 50 + size / 1_000 : 4 + size / 2_000;
        }
        // one write of a stream: a syscall (JDK) or a few hundred ns (UCX), plus the copy
        return kernel ? 3 + size / 2_000 : 0.5 + size / 4_000;
    }
}
