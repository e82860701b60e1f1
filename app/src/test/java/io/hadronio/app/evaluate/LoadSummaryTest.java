package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import org.junit.jupiter.api.Test;

/** The load mode's repetitions of a point summarised: medians, spreads, and the runs that ran it. */
class LoadSummaryTest {

    private static LoadRecord run(int rep, double offered, double achieved, double p99) {
        return new LoadRecord(rep, Provider.HADRONIO, Mode.NETTY, 10, 64, offered, achieved, 20, 10, p99, 2 * p99,
                5, 3, 1000, 2000, "cma,sysv", 1.0, null);
    }

    @Test
    void shouldSummariseEachRateOverItsRepetitions() {
        List<LoadRecord> runs = List.of(run(1, 1000, 1000, 30), run(1, 2000, 1990, 50),
                run(2, 1000, 990, 10), run(2, 2000, 1000, 70),
                run(3, 1000, 1000, 20));
        List<LoadSummary> summary = LoadSummary.of(runs);

        assertEquals(2, summary.size(), "one summary per offered rate");
        LoadSummary low = summary.get(0);
        assertEquals(1000, low.offeredPerSec());
        assertEquals(3, low.runs());
        assertEquals(20, low.latencyP99Us().median());
        assertEquals(20, low.latencyP99Us().mean());
        assertEquals(10, low.latencyP99Us().sd(), 1e-9);
        // the third repetition saturated before 2,000/s: two runs
        LoadSummary high = summary.get(1);
        assertEquals(2, high.runs());
        assertEquals(60, high.latencyP99Us().median());
        assertEquals(1495, high.medians().achievedPerSec());
        assertEquals(0, high.medians().repetition());
    }

    @Test
    void shouldKeepAFailedRunOutOfTheFiguresButCountIt() {
        List<LoadSummary> summary = LoadSummary.of(List.of(run(1, 1000, 1000, 30),
                LoadRecord.failed(2, Provider.HADRONIO, Mode.NETTY, 10, 64, 1000, 3.0, "server died")));
        assertEquals(1, summary.get(0).runs());
        assertEquals(1, summary.get(0).failed());
        assertEquals(30, summary.get(0).medians().latencyP99Us());

        LoadSummary allFailed = LoadSummary.of(List.of(
                LoadRecord.failed(1, Provider.JDK, Mode.BLOCKING, 10, 64, 1000, 3.0, "stuck"))).get(0);
        assertFalse(allFailed.medians().ok());
    }
}
