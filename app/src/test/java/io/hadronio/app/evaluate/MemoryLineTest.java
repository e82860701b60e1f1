package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary's memory line: each JVM pair's peak resident memory, hadroNIO's next to the JDK's. */
class MemoryLineTest {
    private static final Environment ENV = new Environment("cpu", 2, 1, "linux", "25", "1.13.1", "dev", "", "", "",
            "quick", "", "", "");

    private static RunRecord run(int repetition, Provider p, Mode m, int size, long clientKb, long serverKb) {
        return new RunRecord(repetition, p, m, Metric.LATENCY, size, 1000, 1e5, size * 1e5, 10, 10, 10, 10, 1, 1,
                clientKb, serverKb, p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0, null);
    }

    @Test
    void shouldGiveEachModesPairPeakAgainstTheJdksMediansOfTheRepetitions() {
        List<RunRecord> runs = List.of(
                // one pair per repetition: every size carries the pair's peak
                run(1, Provider.JDK, Mode.BLOCKING, 4, 80 << 10, 76 << 10),
                run(1, Provider.JDK, Mode.BLOCKING, 64, 80 << 10, 76 << 10),
                run(2, Provider.JDK, Mode.BLOCKING, 4, 82 << 10, 74 << 10),
                run(3, Provider.JDK, Mode.BLOCKING, 4, 78 << 10, 78 << 10),
                run(1, Provider.HADRONIO, Mode.BLOCKING, 4, 100 << 10, 95 << 10),
                run(2, Provider.HADRONIO, Mode.BLOCKING, 4, 120 << 10, 90 << 10),
                run(3, Provider.HADRONIO, Mode.BLOCKING, 4, 96 << 10, 99 << 10),
                // the binding has no JDK side: not a point
                run(1, Provider.UCX, Mode.RAW, 4, 50 << 10, 50 << 10),
                // a mode only one provider ran: not a point
                run(1, Provider.HADRONIO, Mode.NETTY, 4, 200 << 10, 200 << 10));
        String line = new EvaluationReport(Results.of(ENV, runs, List.of()), Path.of("."), Path.of(".")).memory();
        assertEquals("Memory next to the JDK (peak RSS of each JVM pair, client / server, MiB, medians of the "
                + "repetitions; ×: hadroNIO / JDK): blocking latency 100 / 95 against 80 / 76 (1.25× / 1.25×).\n", line);
    }

    @Test
    void shouldSayNothingWithoutBothProviders() {
        String line = new EvaluationReport(Results.of(ENV, List.of(run(1, Provider.JDK, Mode.BLOCKING, 4, 1, 1)),
                List.of()), Path.of("."), Path.of(".")).memory();
        assertEquals("", line);
    }
}
