package io.hadronio.app.grpc.ycsb;

import java.util.Arrays;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Latencies of one benchmark phase per operation: every sample is kept (a phase is bounded
 * by its operation count), for exact percentiles at the end, and running counts and sums
 * for the live status lines.
 */
final class Latencies {
    /** One operation's samples from one thread: appended without locking, merged at the end. */
    static final class Samples {
        private long[] nanos = new long[1024];
        private int size;

        void add(long n) {
            if (size == nanos.length) {
                nanos = Arrays.copyOf(nanos, size * 2);
            }
            nanos[size++] = n;
        }
    }

    /** The figures of one operation: count, mean, percentiles and maximum in µs, failures. */
    record Summary(long count, double meanUs, double p50Us, double p95Us, double p99Us, double p999Us, double maxUs,
                   long failures) {
        String json() {
            return String.format(Locale.ROOT, "{\"count\": %d, \"failures\": %d, \"mean_us\": %.1f, \"p50_us\": %.1f, "
                    + "\"p95_us\": %.1f, \"p99_us\": %.1f, \"p999_us\": %.1f, \"max_us\": %.1f}",
                    count, failures, meanUs, p50Us, p95Us, p99Us, p999Us, maxUs);
        }
    }

    private final Map<Operation, LongAdder> counts = new EnumMap<>(Operation.class);
    private final Map<Operation, LongAdder> sums = new EnumMap<>(Operation.class);
    private final Map<Operation, LongAdder> failures = new EnumMap<>(Operation.class);

    Latencies() {
        for (Operation op : Operation.values()) {
            counts.put(op, new LongAdder());
            sums.put(op, new LongAdder());
            failures.put(op, new LongAdder());
        }
    }

    void record(Operation op, Samples samples, long nanos, boolean ok) {
        samples.add(nanos);
        counts.get(op).increment();
        sums.get(op).add(nanos);
        if (!ok) {
            failures.get(op).increment();
        }
    }

    long count(Operation op) {
        return counts.get(op).sum();
    }

    long sumNanos(Operation op) {
        return sums.get(op).sum();
    }

    long failures(Operation op) {
        return failures.get(op).sum();
    }

    long total() {
        return Arrays.stream(Operation.values()).mapToLong(this::count).sum();
    }

    long totalFailures() {
        return Arrays.stream(Operation.values()).mapToLong(this::failures).sum();
    }

    /** The figures of {@code op} over the samples every thread kept for it. */
    Summary summary(Operation op, Iterable<Samples> perThread) {
        int n = 0;
        for (Samples s : perThread) {
            n += s.size;
        }
        long[] all = new long[n];
        int at = 0;
        for (Samples s : perThread) {
            System.arraycopy(s.nanos, 0, all, at, s.size);
            at += s.size;
        }
        Arrays.sort(all);
        return new Summary(n, n == 0 ? 0 : sumNanos(op) / 1e3 / n, percentile(all, 0.50), percentile(all, 0.95),
                percentile(all, 0.99), percentile(all, 0.999), n == 0 ? 0 : all[n - 1] / 1e3, failures(op));
    }

    private static double percentile(long[] sorted, double p) {
        return sorted.length == 0 ? 0 : sorted[(int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)] / 1e3;
    }
}
