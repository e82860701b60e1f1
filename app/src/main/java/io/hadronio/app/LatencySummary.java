package io.hadronio.app;

import java.util.Arrays;
import java.util.Locale;

/**
 * Round-trip times of a latency benchmark, summarised the same way by every benchmark
 * (blocking, non-blocking, Netty), so that {@code hadronio evaluate} compares like with like.
 * Percentiles are nearest-rank: the smallest time at or above which {@code p} of the
 * round trips lie.
 *
 * @param count  round trips measured
 * @param avgUs  mean round trip, µs
 * @param p50Us  median, µs
 * @param p90Us  90th percentile, µs
 * @param p99Us  99th percentile, µs
 * @param p999Us 99.9th percentile, µs
 */
public record LatencySummary(int count, double avgUs, double p50Us, double p90Us, double p99Us, double p999Us) {

    /** Summarises {@code nanos} (sorted in place). */
    public static LatencySummary of(long[] nanos) {
        if (nanos.length == 0) {
            throw new IllegalArgumentException("no round trips");
        }
        long sum = 0;
        for (long n : nanos) {
            sum += n;
        }
        Arrays.sort(nanos);
        return new LatencySummary(nanos.length, sum / 1e3 / nanos.length, percentile(nanos, 0.50),
                percentile(nanos, 0.90), percentile(nanos, 0.99), percentile(nanos, 0.999));
    }

    private static double percentile(long[] sorted, double p) {
        int i = (int) Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1);
        return sorted[Math.max(0, i)] / 1e3;
    }

    /** The fields of a {@code RESULT} line: {@code avg_us=... p50_us=... p90_us=... p99_us=... p999_us=...}. */
    public String resultFields() {
        return String.format(Locale.ROOT, "avg_us=%.3f p50_us=%.3f p90_us=%.3f p99_us=%.3f p999_us=%.3f",
                avgUs, p50Us, p90Us, p99Us, p999Us);
    }

    /** For people: {@code avg 1.23 us, p50 1.20, p90 ..., p99 ..., p99.9 ... us}. */
    public String describe() {
        return String.format(Locale.ROOT, "avg %.2f us, p50 %.2f, p90 %.2f, p99 %.2f, p99.9 %.2f us",
                avgUs, p50Us, p90Us, p99Us, p999Us);
    }
}
