package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The README's generated results table: what it shows, and that it replaces only its own block. */
class HeadlineTest {

    private static RunRecord latency(Provider p, Mode m, double p50, double p99) {
        return new RunRecord(1, p, m, Metric.LATENCY, 4, 1000, 1e6 / p50, 4e6 / p50, p50, p50, p99, p99, 1, 1, 1000, 1000,
                p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0, null);
    }

    private static RunRecord streaming(Provider p, Mode m, double bytesPerSec) {
        return new RunRecord(1, p, m, Metric.THROUGHPUT, 65536, 1000, bytesPerSec / 65536, bytesPerSec, Double.NaN,
                Double.NaN, Double.NaN, Double.NaN, 1, 1, 1000, 1000, p == Provider.JDK ? "kernel-tcp" : "cma,sysv", 1.0,
                null);
    }

    private static Headline headline() {
        Environment env = new Environment("Some CPU", 2, 1, "Linux 6.1", "Java 25 (OpenJDK 64-Bit Server VM)", "UCX 1.13.1",
                "abc1234", "", "", "server on core 0, client on core 1", "quick", "hadronio evaluate --profile quick",
                "2026-12-06T01:00:00Z", "2026-12-06T01:05:00Z");
        return new Headline(Results.of(env, List.of(
                latency(Provider.JDK, Mode.BLOCKING, 50, 100),
                latency(Provider.HADRONIO, Mode.BLOCKING, 1, 200),
                streaming(Provider.JDK, Mode.BLOCKING, 2e9),
                streaming(Provider.HADRONIO, Mode.BLOCKING, 8e9),
                latency(Provider.UCX, Mode.RAW, 0.4, 0.5)), List.of()));
    }

    @Test
    void shouldShowMedianAndTailSideBySideWithSpeedUpsThatReadTheSameWay() {
        String md = headline().markdown();
        assertTrue(md.startsWith(Headline.BEGIN), md);
        assertTrue(md.endsWith(Headline.END + "\n"), md);
        assertTrue(md.contains("Measured 2026-12-06, commit abc1234, on 2 × Some CPU, Java 25, UCX 1.13.1;"), md);
        assertTrue(md.contains("hadronio evaluate --profile quick"), md);
        assertTrue(md.contains("| blocking | round trip 4 B, p50 µs | 50.0 | 1.00 | **50×** |"), md);
        // the tail behind the JDK's: shown as a speed-up below 1, not hidden behind the median
        assertTrue(md.contains("| blocking | round trip 4 B, p99 µs | 100 | 200 | 0.50× |"), md);
        assertTrue(md.contains("| blocking | streaming 64 KiB, GB/s | 2.00 | 8.00 | **4.00×** |"), md);
        assertTrue(md.contains("UCX driven directly through the binding: round trip 4 B p50 0.400 µs, p99 0.500 µs"), md);
        assertTrue(md.contains("hadroNIO's connections ran on cma,sysv."), md);
        assertTrue(md.contains("Never slower than the JDK"), md);
    }

    @Test
    void shouldReplaceOnlyItsOwnBlock(@TempDir Path dir) throws IOException {
        Path readme = dir.resolve("README.md");
        Files.writeString(readme, "# Title\n\nbefore\n\n" + Headline.BEGIN + " old -->\nold table\n" + Headline.END
                + "\n\nafter\n");
        headline().writeInto(readme);
        String text = Files.readString(readme);
        assertTrue(text.startsWith("# Title\n\nbefore\n\n" + Headline.BEGIN), text);
        assertTrue(text.endsWith(Headline.END + "\n\nafter\n"), text);
        assertTrue(!text.contains("old table"), text);
        // rendering twice gives the same file
        headline().writeInto(readme);
        assertEquals(text, Files.readString(readme));
    }

    @Test
    void shouldRefuseAFileWithoutTheBlock(@TempDir Path dir) throws IOException {
        Path readme = dir.resolve("README.md");
        Files.writeString(readme, "# Title\n");
        IOException e = assertThrows(IOException.class, () -> headline().writeInto(readme));
        assertTrue(e.getMessage().contains("no generated headline"), e.getMessage());
        assertEquals("# Title\n", Files.readString(readme));
    }
}
