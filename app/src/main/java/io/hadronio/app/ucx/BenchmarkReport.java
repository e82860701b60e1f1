package io.hadronio.app.ucx;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The outcome of one benchmark as the client saw it: the transports UCX chose for the
 * endpoint and one result per measured run. {@link #resultLine()} is the
 * machine-readable summary (medians over the runs) that scripts parse.
 *
 * @param settings   what was measured
 * @param transports transports of the endpoint's lanes, e.g. {@code [cma, sysv]}
 * @param lanes      the lanes as transport/device, e.g. {@code [cma/memory, sysv/memory]}
 * @param runs       one entry per measured run (empty on the server side)
 */
public record BenchmarkReport(BenchmarkSettings settings, Set<String> transports, Set<String> lanes, List<Run> runs) {

    /** The result of one measured run. */
    public sealed interface Run permits LatencyRun, ThroughputRun {
        /** One line for people, e.g. "round trip median 0.41 us, ...". */
        String describe();
    }

    /**
     * Round-trip times of one ping-pong run, in microseconds.
     *
     * @param medianUs median of the per-message round trips
     * @param avgUs    total time of the run divided by the messages
     * @param p99Us    99th percentile of the per-message round trips
     * @param p999Us   99.9th percentile of the per-message round trips
     * @param minUs    fastest round trip
     */
    public record LatencyRun(double medianUs, double avgUs, double p99Us, double p999Us, double minUs) implements Run {
        /** Summarises per-message round trips (nanoseconds); sorts the array given. */
        static LatencyRun of(long[] roundTripNanos, int count, long totalNanos) {
            Arrays.sort(roundTripNanos, 0, count);
            double median = count % 2 == 1 ? roundTripNanos[count / 2]
                    : (roundTripNanos[count / 2 - 1] + roundTripNanos[count / 2]) / 2.0;
            int p99Index = Math.max(0, (int) Math.ceil(count * 0.99) - 1);
            int p999Index = Math.max(0, (int) Math.ceil(count * 0.999) - 1);
            return new LatencyRun(median / 1e3, totalNanos / 1e3 / count, roundTripNanos[p99Index] / 1e3,
                    roundTripNanos[p999Index] / 1e3, roundTripNanos[0] / 1e3);
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "round trip median %.3f us, avg %.3f us, p99 %.3f us, min %.3f us",
                    medianUs, avgUs, p99Us, minUs);
        }
    }

    /**
     * One streaming run: from the first send until the receiver acknowledged the last message.
     *
     * @param seconds  duration of the run
     * @param gbPerS   payload bytes per second / 1e9
     * @param mmsgPerS messages per second / 1e6
     */
    public record ThroughputRun(double seconds, double gbPerS, double mmsgPerS) implements Run {
        static ThroughputRun of(long messages, long length, long nanos) {
            double seconds = nanos / 1e9;
            return new ThroughputRun(seconds, messages * (double) length / seconds / 1e9, messages / seconds / 1e6);
        }

        @Override
        public String describe() {
            return String.format(Locale.ROOT, "%.3f GB/s, %.3f M msg/s (%.3f s)", gbPerS, mmsgPerS, seconds);
        }
    }

    public BenchmarkReport {
        transports = Set.copyOf(transports);
        lanes = Set.copyOf(lanes);
        runs = List.copyOf(runs);
    }

    /** Median over the runs of one value. */
    public double median(ToDoubleFunction<Run> value) {
        double[] v = runs.stream().mapToDouble(value).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static String joined(Set<String> names) {
        return names.isEmpty() ? "unknown" : String.join(",", names.stream().sorted().toList());
    }

    /**
     * The summary line, {@code RESULT key=value ...}: medians over the runs, e.g.
     * {@code RESULT kind=latency length=8 messages=100000 warmup=100000 runs=3 median_us=0.412 avg_us=0.430
     * p99_us=0.610 p999_us=0.900 min_us=0.380 transports=cma,sysv lanes=cma/memory,sysv/memory}.
     */
    public String resultLine() {
        BenchmarkSettings s = settings;
        StringBuilder line = new StringBuilder("RESULT kind=").append(s.kind().label())
                .append(" length=").append(s.length())
                .append(" messages=").append(s.messages())
                .append(" warmup=").append(s.warmup());
        if (s.kind() == BenchmarkSettings.Kind.THROUGHPUT) {
            line.append(" window=").append(s.window());
        }
        line.append(" runs=").append(runs.size());
        if (s.kind() == BenchmarkSettings.Kind.LATENCY) {
            line.append(String.format(Locale.ROOT, " median_us=%.3f avg_us=%.3f p99_us=%.3f p999_us=%.3f min_us=%.3f",
                    median(r -> ((LatencyRun) r).medianUs()), median(r -> ((LatencyRun) r).avgUs()),
                    median(r -> ((LatencyRun) r).p99Us()), median(r -> ((LatencyRun) r).p999Us()),
                    median(r -> ((LatencyRun) r).minUs())));
        } else {
            line.append(String.format(Locale.ROOT, " gb_per_s=%.3f mmsg_per_s=%.3f",
                    median(r -> ((ThroughputRun) r).gbPerS()), median(r -> ((ThroughputRun) r).mmsgPerS())));
        }
        line.append(" transports=").append(joined(transports)).append(" lanes=").append(joined(lanes));
        return line.toString();
    }
}
