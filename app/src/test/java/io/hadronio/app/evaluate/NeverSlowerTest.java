package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary's "never slower than the JDK" line: every point both providers measured, the ones behind worst first. */
class NeverSlowerTest {

    private static RunRecord run(Provider p, Mode m, Metric metric, int size, double bytesPerSec, double meanUs) {
        return new RunRecord(1, p, m, metric, size, 1000, bytesPerSec / size, bytesPerSec, meanUs, meanUs, meanUs,
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
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 1 of 3 points (mode, metric, size; medians);"
                + " behind (the JDK's speed = 1) at: blocking throughput 4 B 0.50×, netty latency 4 B 0.80×.\n", line);
    }

    @Test
    void shouldSaySoWhenNothingIsBehind() {
        String line = line(List.of(
                run(Provider.JDK, Mode.NONBLOCKING, Metric.LATENCY, 8, 0, 30),
                run(Provider.HADRONIO, Mode.NONBLOCKING, Metric.LATENCY, 8, 0, 1)));
        assertEquals("Never slower than the JDK: hadroNIO at or ahead in 1 of 1 points (mode, metric, size; medians).\n",
                line);
    }
}
