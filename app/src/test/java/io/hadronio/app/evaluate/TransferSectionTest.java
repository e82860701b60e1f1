package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The report's file transfers: medians of each provider's pairs, their ratio, every pair, and what failed. */
class TransferSectionTest {
    private static final Environment ENV = new Environment("cpu", 2, 1, "linux", "25", "1.13.1", "dev", "", "", "",
            "quick", "hadronio evaluate", "", "");

    private static TransferRecord pair(int rep, Provider p, String pattern, double mbPerSec) {
        return new TransferRecord(rep, p, pattern, 256L << 20, mbPerSec, p == Provider.JDK ? "tcp" : "ucx:cma,sysv", 3.0, null);
    }

    private static EvaluationReport report(List<TransferRecord> transfers) {
        return new EvaluationReport(Results.of(ENV, List.of(), List.of(), transfers), Path.of("."), Path.of("."));
    }

    @Test
    void shouldGiveEachPatternsMediansTheirRatioAndEveryPair() {
        String md = report(List.of(
                pair(1, Provider.JDK, "fetch", 1000), pair(1, Provider.HADRONIO, "fetch", 4000),
                pair(2, Provider.JDK, "fetch", 1400), pair(2, Provider.HADRONIO, "fetch", 2000),
                pair(3, Provider.JDK, "fetch", 1200), pair(3, Provider.HADRONIO, "fetch", 3000),
                pair(1, Provider.JDK, "upload", 1000), pair(1, Provider.HADRONIO, "upload", 1500))).transferSection();
        assertTrue(md.contains("a file of 256 MiB"), md);
        assertTrue(md.contains("| fetch | 1,200 | 3,000 | 2.50× | 1,000, 1,400, 1,200 | 4,000, 2,000, 3,000 | ucx:cma,sysv |"), md);
        assertTrue(md.contains("| upload | 1,000 | 1,500 | 1.50× |"), md);
    }

    @Test
    void shouldLeaveAFailedPairOutOfTheMedianAndSaySo() {
        TransferRecord failed = new TransferRecord(2, Provider.HADRONIO, "fetch", 256L << 20, Double.NaN, "", 1.0, "boom");
        EvaluationReport r = report(List.of(pair(1, Provider.JDK, "fetch", 1000), pair(1, Provider.HADRONIO, "fetch", 3000),
                failed));
        String md = r.transferSection();
        assertTrue(md.contains("| fetch | 1,000 | 3,000 | 3.00× | 1,000 | 3,000, failed |"), md);
    }

    @Test
    void shouldSayWhenNoneRan() {
        assertTrue(report(List.of()).transferSection().contains("Not run"));
    }
}
