package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary's tails line: hadroNIO's p99 round trip against the JDK's, point by point, the ones above worst first. */
class TailsLineTest {

    private static RunRecord latency(Provider p, Mode m, int size, double p50, double p99) {
        return new RunRecord(1, p, m, Metric.LATENCY, size, 1000, 1e6 / p50, size * 1e6 / p50, p50, p50, p99, p99, 1, 1,
                1000, 1000, p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0, null);
    }

    private static String line(List<RunRecord> runs) {
        Environment env = new Environment("cpu", 2, 1, "linux", "25", "1.13.1", "dev", "", "", "", "quick", "", "", "");
        return new EvaluationReport(Results.of(env, runs, List.of()), Path.of("."), Path.of(".")).tails();
    }

    @Test
    void shouldNameTheRoundTripsWhoseTailIsAboveTheJdksWorstFirst() {
        String line = line(List.of(
                // a median far ahead, a tail behind: named
                latency(Provider.JDK, Mode.NETTY, 4, 50, 3000),
                latency(Provider.HADRONIO, Mode.NETTY, 4, 2, 4000),
                // ahead on both
                latency(Provider.JDK, Mode.BLOCKING, 4, 50, 100),
                latency(Provider.HADRONIO, Mode.BLOCKING, 4, 1, 3),
                // behind by more: named first
                latency(Provider.JDK, Mode.NONBLOCKING, 64, 50, 100),
                latency(Provider.HADRONIO, Mode.NONBLOCKING, 64, 2, 1000),
                // the binding is the ceiling, not a side of the comparison
                latency(Provider.UCX, Mode.RAW, 4, 0.4, 0.6)));
        assertEquals("Tails (p99 round trip, medians of the runs' p99): hadroNIO at or below the JDK's in 1 of 3 points;"
                + " above at: nonblocking 64 B (1,000 against 100 µs), netty 4 B (4,000 against 3,000 µs).\n", line);
    }
}
