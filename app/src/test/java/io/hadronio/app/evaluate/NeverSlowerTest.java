package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary's "never slower than the JDK" line: every point both providers measured, the ones behind worst first. */
class NeverSlowerTest {

    private static RunRecord run(Provider p, Mode m, Metric metric, int size, double bytesPerSec, double meanUs) {
        return run(1, p, m, metric, size, bytesPerSec, meanUs);
    }

    private static RunRecord run(int repetition, Provider p, Mode m, Metric metric, int size, double bytesPerSec,
                                 double meanUs) {
        return new RunRecord(repetition, p, m, metric, size, 1000, bytesPerSec / size, bytesPerSec, meanUs, meanUs, meanUs,
                meanUs, 1, 1, 1000, 1000, p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0, null);
    }

    private static String line(List<RunRecord> runs) {
        Environment env = new Environment("cpu", 2, 1, "linux", "25", "1.13.1", "dev", "", "", "", "quick", "", "", "");
        return new EvaluationReport(Results.of(env, runs, List.of()), Path.of("."), Path.of(".")).neverSlower();
    }

    @Test
    void shouldCountThePointsAndNameTheOnesBehindWorstFirst() {
        String line = line(List.of(
                // throughput: higher is better; 4 B behind (0.5x), 64 KiB ahead
                run(Provider.JDK, Mode.BLOCKING, Metric.THROUGHPUT, 4, 2e6, 0),
                run(Provider.HADRONIO, Mode.BLOCKING, Metric.THROUGHPUT, 4, 1e6, 0),
                run(Provider.JDK, Mode.BLOCKING, Metric.THROUGHPUT, 65536, 1e9, 0),
                run(Provider.HADRONIO, Mode.BLOCKING, Metric.THROUGHPUT, 65536, 4e9, 0),
                // latency: lower is better; Netty 4 B behind (0.8x)
                run(Provider.JDK, Mode.NETTY, Metric.LATENCY, 4, 0, 40),
                run(Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 4, 0, 50),
                // measured by one provider only: not compared
                run(Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 65536, 0, 10),
                // the binding is the ceiling, not a side of the promise
                run(Provider.UCX, Mode.RAW, Metric.LATENCY, 4, 0, 1)));
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 1 of 4 points (mode, figure, size; medians;"
                + " round trips by p50 and p99); behind (the JDK's speed = 1) at: blocking throughput 4 B 0.50×,"
                + " netty round trip p50 4 B 0.80×, netty round trip p99 4 B 0.80×.\n", line);
    }

    @Test
    void shouldSaySoWhenNothingIsBehind() {
        String line = line(List.of(
                run(Provider.JDK, Mode.NONBLOCKING, Metric.LATENCY, 8, 0, 30),
                run(Provider.HADRONIO, Mode.NONBLOCKING, Metric.LATENCY, 8, 0, 1)));
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 2 of 2 points (mode, figure, size; medians;"
                + " round trips by p50 and p99).\n", line);
    }

    @Test
    void shouldSayWhetherEveryRoundWasBehindOrTheRoundsOverlap() {
        String line = line(List.of(
                // streaming: hadroNIO's best round below the JDK's worst, so behind in every round
                run(1, Provider.JDK, Mode.NETTY, Metric.THROUGHPUT, 65536, 2.0e9, 0),
                run(2, Provider.JDK, Mode.NETTY, Metric.THROUGHPUT, 65536, 2.2e9, 0),
                run(3, Provider.JDK, Mode.NETTY, Metric.THROUGHPUT, 65536, 2.4e9, 0),
                run(1, Provider.HADRONIO, Mode.NETTY, Metric.THROUGHPUT, 65536, 1.0e9, 0),
                run(2, Provider.HADRONIO, Mode.NETTY, Metric.THROUGHPUT, 65536, 1.1e9, 0),
                run(3, Provider.HADRONIO, Mode.NETTY, Metric.THROUGHPUT, 65536, 1.9e9, 0),
                // round trip: hadroNIO's median behind, but one of its rounds faster than one of the JDK's
                run(1, Provider.JDK, Mode.NETTY, Metric.LATENCY, 16384, 0, 40),
                run(2, Provider.JDK, Mode.NETTY, Metric.LATENCY, 16384, 0, 50),
                run(3, Provider.JDK, Mode.NETTY, Metric.LATENCY, 16384, 0, 60),
                run(1, Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 16384, 0, 45),
                run(2, Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 16384, 0, 55),
                run(3, Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 16384, 0, 70),
                // ahead: no remark
                run(1, Provider.JDK, Mode.BLOCKING, Metric.LATENCY, 4, 0, 30),
                run(2, Provider.JDK, Mode.BLOCKING, Metric.LATENCY, 4, 0, 31),
                run(1, Provider.HADRONIO, Mode.BLOCKING, Metric.LATENCY, 4, 0, 1),
                run(2, Provider.HADRONIO, Mode.BLOCKING, Metric.LATENCY, 4, 0, 2)));
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 2 of 5 points (mode, figure, size; medians;"
                + " round trips by p50 and p99); behind (the JDK's speed = 1) at: netty throughput 64 KiB 0.50×"
                + " (every round behind), netty round trip p50 16 KiB 0.91× (rounds overlap),"
                + " netty round trip p99 16 KiB 0.91× (rounds overlap);"
                + " every hadroNIO round behind every JDK round at 1 of them.\n", line);
    }

    @Test
    void shouldJudgeARoundTripByItsTailAsWellAsItsMedian() {
        // the median 25 times ahead, the mean level, the tail behind: only the tail is named
        String line = line(List.of(
                new RunRecord(1, Provider.JDK, Mode.NETTY, Metric.LATENCY, 4, 1000, 1e6 / 100, 4e6 / 100, 100, 50, 2000,
                        3000, 1, 1, 1000, 1000, "kernel-tcp", 1.0, null),
                new RunRecord(1, Provider.HADRONIO, Mode.NETTY, Metric.LATENCY, 4, 1000, 1e6 / 100, 4e6 / 100, 100, 2,
                        4000, 7000, 1, 1, 1000, 1000, "cma,sysv", 1.0, null)));
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 1 of 2 points (mode, figure, size; medians;"
                + " round trips by p50 and p99); behind (the JDK's speed = 1) at: netty round trip p99 4 B 0.50×.\n",
                line);
    }
}
