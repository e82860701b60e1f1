package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hadronio.app.HadronioCommand;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * CI's run of {@code hadronio evaluate --profile smoke}: every provider and mode at two sizes,
 * one repetition, as real JVM pairs (one per provider, mode and metric, sweeping both sizes),
 * and the load mode at one rate with 10 connections. It checks that the evaluation runs and writes what it
 * promises (JSON, CSV, SVG and PNG figures, the report) and that {@code render} reproduces the
 * report from the JSON; no figure is checked for speed.
 */
@Tag("slow")
@Timeout(value = 600, unit = TimeUnit.SECONDS)
class EvaluateSmokeTest {
    private static final List<String> FIGURES = List.of("throughput-blocking", "latency-blocking",
            "throughput-nonblocking", "latency-nonblocking", "throughput-netty", "latency-netty",
            "throughput-nio2", "latency-nio2",
            "load-latency-blocking", "load-cpu-blocking", "load-latency-nonblocking", "load-cpu-nonblocking",
            "load-latency-netty", "load-cpu-netty", "load-latency-nio2", "load-cpu-nio2");
    // load mode: four server models x two providers, one rate, one connection count
    private static final int LOAD_RUNS = 8;

    @TempDir
    Path dir;

    @Test
    void shouldRunTheSmokeProfileAndWriteResultsFiguresAndReport() throws Exception {
        Path report = dir.resolve("EVALUATION.md");
        int exit = HadronioCommand.commandLine().execute("evaluate", "--profile", "smoke", "--output", dir.toString(),
                "--report", report.toString());
        assertEquals(0, exit, "evaluate failed; runs.csv:\n" + read(dir.resolve(Results.RUNS_CSV)) + stuckPairs());

        // four modes on two providers, and raw UCX
        int points = Profile.SMOKE.sizes().size() * Metric.values().length * (4 * 2 + 1);
        JsonNode json = new ObjectMapper().readTree(dir.resolve(Results.JSON).toFile());
        assertEquals(points, json.get("runs").size(), "one run per point");
        assertEquals(points, json.get("summary").size(), "one summary per point");
        assertTrue(json.get("environment").get("ucx").asText().startsWith("UCX "), json.get("environment").toString());
        for (JsonNode run : json.get("runs")) {
            assertTrue(run.get("error").isNull(), run.toString());
            // each size of a pair has its own CPU window
            assertTrue(run.get("clientCpuUsPerOp").asDouble() > 0, run.toString());
            assertTrue(run.get("opsPerSec").asDouble() > 0, run.toString());
            assertTrue(run.get("clientPeakRssKb").asLong() > 0 && run.get("serverPeakRssKb").asLong() > 0, run.toString());
            assertTrue(!run.get("transport").asText().isEmpty(), run.toString());
        }

        assertEquals(LOAD_RUNS, json.get("load").size(), "one load run per server model and provider");
        for (JsonNode run : json.get("load")) {
            assertTrue(run.get("error").isNull(), run.toString());
            assertTrue(!run.get("transport").asText().isEmpty(), run.toString());
        }
        assertEquals(LOAD_RUNS + 1, Files.readAllLines(dir.resolve(Results.LOAD_CSV)).size());
        assertEquals(LOAD_RUNS, json.get("loadSummary").size(), "one load summary per point");
        assertEquals(LOAD_RUNS + 1, Files.readAllLines(dir.resolve(Results.LOAD_SUMMARY_CSV)).size());

        // the file transfers: fetch and upload on both providers, every byte checked by the client
        assertEquals(4, json.get("transfers").size(), "one pair per pattern and provider");
        for (JsonNode pair : json.get("transfers")) {
            assertTrue(pair.get("error").isNull(), pair.toString());
            assertTrue(pair.get("mbPerSec").asDouble() > 0, pair.toString());
            assertTrue(!pair.get("transport").asText().isEmpty(), pair.toString());
        }
        assertEquals(5, Files.readAllLines(dir.resolve(Results.TRANSFERS_CSV)).size());

        List<String> csv = Files.readAllLines(dir.resolve(Results.RUNS_CSV));
        assertEquals(points + 1, csv.size(), "header and one row per run");
        assertEquals(points + 1, Files.readAllLines(dir.resolve(Results.SUMMARY_CSV)).size());
        for (String f : FIGURES) {
            assertTrue(read(dir.resolve("figures/" + f + ".svg")).contains("<svg"), f + ".svg");
            assertTrue(Files.size(dir.resolve("figures/" + f + ".png")) > 1000, f + ".png");
        }
        String md = read(report);
        assertTrue(md.contains("## Summary") && md.contains("figures/throughput-blocking.png")
                && md.contains("## Load") && md.contains("figures/load-latency-netty.png")
                && md.contains("## Files: transferTo and transferFrom") && md.contains("| fetch |"), md);

        // the report is a function of results.json: rendering it again gives the same file
        Files.delete(report);
        assertEquals(0, HadronioCommand.commandLine().execute("evaluate", "render", dir.toString(), "--report",
                report.toString()));
        assertEquals(md, read(report));
    }

    private static String read(Path p) throws Exception {
        return Files.exists(p) ? Files.readString(p) : "(missing " + p + ")";
    }

    /** What the JVMs of a stuck pair were doing (the runner's thread dumps) and the end of their logs. */
    private String stuckPairs() throws Exception {
        StringBuilder b = new StringBuilder();
        Path raw = dir.resolve("raw");
        if (!Files.isDirectory(raw)) {
            return "";
        }
        try (var files = Files.list(raw)) {
            for (Path dump : files.filter(f -> f.getFileName().toString().endsWith("-threads.txt")).sorted().toList()) {
                String name = dump.getFileName().toString();
                Path log = raw.resolve(name.replace("-threads.txt", ".log"));
                b.append("\n---- ").append(name).append(" ----\n").append(read(dump));
                if (Files.exists(log)) {
                    List<String> lines = Files.readAllLines(log);
                    b.append("\n---- last lines of ").append(log.getFileName()).append(" ----\n")
                            .append(String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size())));
                }
            }
        }
        return b.toString();
    }
}
