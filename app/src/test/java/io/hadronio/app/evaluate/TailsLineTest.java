package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The summary's tails line: the distribution's targets (p99 at or below the JDK's p50 and the mean
 * within 2x the p50 up to 4 KiB; p99 within 2x the UCX binding's from 16 to 64 KiB), point by point,
 * the ones that miss worst first.
 */
class TailsLineTest {

    private static RunRecord latency(Provider p, Mode m, int size, double mean, double p50, double p99) {
        return new RunRecord(1, p, m, Metric.LATENCY, size, 1000, 1e6 / mean, size * 1e6 / mean, mean, p50, p99, p99, 1,
                1, 1000, 1000, p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0, null);
    }

    private static String line(List<RunRecord> runs) {
        Environment env = new Environment("cpu", 2, 1, "linux", "25", "1.13.1", "dev", "", "", "", "quick", "", "", "");
        return new EvaluationReport(Results.of(env, runs, List.of()), Path.of("."), Path.of(".")).tails();
    }

    @Test
    void shouldCountThePointsThatMeetEachTargetAndNameTheOthersWorstFirst() {
        String line = line(List.of(
                // a median far ahead, a tail of scheduler ticks: misses both small-size targets
                latency(Provider.JDK, Mode.NETTY, 4, 60, 50, 3000),
                latency(Provider.HADRONIO, Mode.NETTY, 4, 100, 2, 4000),
                // meets both
                latency(Provider.JDK, Mode.BLOCKING, 4, 55, 50, 100),
                latency(Provider.HADRONIO, Mode.BLOCKING, 4, 1.2, 1, 3),
                // tail above the JDK's median by less: named after netty's
                latency(Provider.JDK, Mode.NONBLOCKING, 64, 55, 50, 100),
                latency(Provider.HADRONIO, Mode.NONBLOCKING, 64, 2.5, 2, 100),
                // mid-size: within 2x the binding's p99, and not
                latency(Provider.HADRONIO, Mode.BLOCKING, 16384, 10, 9, 20),
                latency(Provider.UCX, Mode.RAW, 16384, 8, 8, 11),
                latency(Provider.HADRONIO, Mode.BLOCKING, 65536, 20, 15, 150),
                latency(Provider.UCX, Mode.RAW, 65536, 15, 15, 20),
                // above 64 KiB: no target
                latency(Provider.HADRONIO, Mode.BLOCKING, 262144, 90, 50, 5000),
                latency(Provider.UCX, Mode.RAW, 262144, 40, 40, 50)));
        assertEquals("Tails (round trips, medians of the runs' percentiles):"
                + " p99 at or below the JDK's p50 (sizes up to 4 KiB) in 1 of 3 points, not at:"
                + " netty 4 B (4,000 against 50.0 µs), nonblocking 64 B (100 against 50.0 µs);"
                + " mean within 2× the p50 in 2 of 3, not at: netty 4 B (mean 100, p50 2.00 µs);"
                + " p99 within 2× the UCX binding's (16 KiB to 64 KiB) in 1 of 2, not at: blocking 64 KiB (150 against 20.0 µs).\n",
                line);
    }

    @Test
    void shouldSayNothingWithoutRoundTrips() {
        assertEquals("", line(List.of()));
    }
}
