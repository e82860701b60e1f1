package io.hadronio.app.evaluate;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * What an evaluation produced: where it ran and every run. Stored in a results directory as
 * {@code results.json} (this record plus the per-point summary), {@code runs.csv} (one row per
 * run) and {@code summary.csv} (one row per point: mean, standard deviation, median).
 * {@code results.json} is what {@code hadronio evaluate render} reads back. NaN (a value a
 * run does not have, e.g. latency of a throughput run) is written as the string {@code "NaN"}.
 *
 * @param environment machine, JDK, UCX, command line
 * @param runs        every run, in the order they ran
 * @param summary     one entry per point, derived from {@code runs}
 * @param load        every run of the load mode (also in {@code load.csv}); empty without it
 * @param loadSummary one entry per load point over its repetitions (also in {@code load-summary.csv}), derived
 *                    from {@code load}
 */
public record Results(Environment environment, List<RunRecord> runs, List<PointSummary> summary, List<LoadRecord> load,
                      List<LoadSummary> loadSummary, List<TransferRecord> transfers) {
    public static final String JSON = "results.json";
    public static final String LOAD_CSV = "load.csv";
    public static final String LOAD_SUMMARY_CSV = "load-summary.csv";
    public static final String RUNS_CSV = "runs.csv";
    public static final String SUMMARY_CSV = "summary.csv";
    public static final String TRANSFERS_CSV = "transfers.csv";

    private static final ObjectMapper MAPPER = new ObjectMapper()
            .enable(SerializationFeature.INDENT_OUTPUT)
            .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

    static Results of(Environment environment, List<RunRecord> runs, List<LoadRecord> load) {
        return of(environment, runs, load, List.of());
    }

    static Results of(Environment environment, List<RunRecord> runs, List<LoadRecord> load, List<TransferRecord> transfers) {
        List<LoadRecord> l = load == null ? List.of() : List.copyOf(load);
        List<TransferRecord> t = transfers == null ? List.of() : List.copyOf(transfers);
        return new Results(environment, List.copyOf(runs), PointSummary.of(runs), l, LoadSummary.of(l), t);
    }

    /** Writes the three files into {@code dir}. */
    void write(Path dir) throws IOException {
        Files.createDirectories(dir);
        MAPPER.writeValue(dir.resolve(JSON).toFile(), this);
        writeRunsCsv(dir.resolve(RUNS_CSV), runs);
        writeSummaryCsv(dir.resolve(SUMMARY_CSV));
        if (!load.isEmpty()) {
            writeLoadCsv(dir.resolve(LOAD_CSV), load);
            writeLoadSummaryCsv(dir.resolve(LOAD_SUMMARY_CSV));
        }
        if (!transfers.isEmpty()) {
            writeTransfersCsv(dir.resolve(TRANSFERS_CSV), transfers);
        }
    }

    static Results read(Path dir) throws IOException {
        Results r = MAPPER.readValue(dir.resolve(JSON).toFile(), Results.class);
        // the summary is derived: recomputed, so that a results file edited by hand stays consistent
        // results written before the file transfers existed have none
        return of(r.environment(), r.runs(), r.load(), r.transfers());
    }

    private static final List<Column<RunRecord>> RUN_COLUMNS = List.of(
            new Column<>("repetition", r -> Integer.toString(r.repetition())),
            new Column<>("provider", r -> r.provider().id()),
            new Column<>("mode", r -> r.mode().id()),
            new Column<>("metric", r -> r.metric().id()),
            new Column<>("size_bytes", r -> Integer.toString(r.size())),
            new Column<>("messages", r -> Long.toString(r.messages())),
            new Column<>("ops_per_s", r -> num(r.opsPerSec())),
            new Column<>("bytes_per_s", r -> num(r.bytesPerSec())),
            new Column<>("latency_mean_us", r -> num(r.latencyMeanUs())),
            new Column<>("latency_p50_us", r -> num(r.latencyP50Us())),
            new Column<>("latency_p99_us", r -> num(r.latencyP99Us())),
            new Column<>("latency_p999_us", r -> num(r.latencyP999Us())),
            new Column<>("client_cpu_us_per_op", r -> num(r.clientCpuUsPerOp())),
            new Column<>("server_cpu_us_per_op", r -> num(r.serverCpuUsPerOp())),
            new Column<>("client_peak_rss_kb", r -> Long.toString(r.clientPeakRssKb())),
            new Column<>("server_peak_rss_kb", r -> Long.toString(r.serverPeakRssKb())),
            new Column<>("transport", RunRecord::transport),
            new Column<>("elapsed_s", r -> num(r.elapsedSeconds())),
            new Column<>("error", r -> r.error() == null ? "" : r.error()));

    /** Writes {@code runs} as CSV (also after every run, so that an interrupted evaluation keeps what it measured). */
    static void writeRunsCsv(Path file, List<RunRecord> runs) {
        writeCsv(file, RUN_COLUMNS, runs);
    }

    /** The medians of every load point, one per point, for figures and tables. */
    List<LoadRecord> loadMedians() {
        return loadSummary.stream().map(LoadSummary::medians).toList();
    }

    private static final List<Column<LoadRecord>> LOAD_COLUMNS = List.of(
            new Column<>("repetition", r -> Integer.toString(r.repetition())),
            new Column<>("provider", r -> r.provider().id()),
            new Column<>("mode", r -> r.mode().id()),
            new Column<>("connections", r -> Integer.toString(r.connections())),
            new Column<>("size_bytes", r -> Integer.toString(r.length())),
            new Column<>("offered_per_s", r -> num(r.offeredPerSec())),
            new Column<>("achieved_per_s", r -> num(r.achievedPerSec())),
            new Column<>("latency_mean_us", r -> num(r.latencyMeanUs())),
            new Column<>("latency_p50_us", r -> num(r.latencyP50Us())),
            new Column<>("latency_p99_us", r -> num(r.latencyP99Us())),
            new Column<>("latency_p999_us", r -> num(r.latencyP999Us())),
            new Column<>("client_cpu_us_per_request", r -> num(r.clientCpuUsPerRequest())),
            new Column<>("server_cpu_us_per_request", r -> num(r.serverCpuUsPerRequest())),
            new Column<>("client_peak_rss_kb", r -> Long.toString(r.clientPeakRssKb())),
            new Column<>("server_peak_rss_kb", r -> Long.toString(r.serverPeakRssKb())),
            new Column<>("transport", LoadRecord::transport),
            new Column<>("elapsed_s", r -> num(r.elapsedSeconds())),
            new Column<>("error", r -> r.error() == null ? "" : r.error()));

    private static final List<Column<TransferRecord>> TRANSFER_COLUMNS = List.of(
            new Column<>("repetition", r -> Integer.toString(r.repetition())),
            new Column<>("provider", r -> r.provider().id()),
            new Column<>("pattern", TransferRecord::pattern),
            new Column<>("bytes", r -> Long.toString(r.bytes())),
            new Column<>("mb_per_s", r -> num(r.mbPerSec())),
            new Column<>("transport", TransferRecord::transport),
            new Column<>("elapsed_s", r -> num(r.elapsedSeconds())),
            new Column<>("error", r -> r.error() == null ? "" : r.error()));

    /** Writes the file transfers' pairs as CSV (also after every pair). */
    static void writeTransfersCsv(Path file, List<TransferRecord> transfers) {
        writeCsv(file, TRANSFER_COLUMNS, transfers);
    }

    /** Writes the load mode's runs as CSV (also after every run). */
    static void writeLoadCsv(Path file, List<LoadRecord> load) {
        writeCsv(file, LOAD_COLUMNS, load);
    }

    private void writeLoadSummaryCsv(Path file) {
        List<Column<LoadSummary>> columns = new ArrayList<>(List.of(
                new Column<>("provider", s -> s.provider().id()),
                new Column<>("mode", s -> s.mode().id()),
                new Column<>("connections", s -> Integer.toString(s.connections())),
                new Column<>("size_bytes", s -> Integer.toString(s.length())),
                new Column<>("offered_per_s", s -> num(s.offeredPerSec())),
                new Column<>("runs", s -> Integer.toString(s.runs())),
                new Column<>("failed", s -> Integer.toString(s.failed()))));
        addStat(columns, "achieved_per_s", LoadSummary::achievedPerSec);
        addStat(columns, "latency_mean_us", LoadSummary::latencyMeanUs);
        addStat(columns, "latency_p50_us", LoadSummary::latencyP50Us);
        addStat(columns, "latency_p99_us", LoadSummary::latencyP99Us);
        addStat(columns, "latency_p999_us", LoadSummary::latencyP999Us);
        addStat(columns, "client_cpu_us_per_request", LoadSummary::clientCpuUsPerRequest);
        addStat(columns, "server_cpu_us_per_request", LoadSummary::serverCpuUsPerRequest);
        columns.add(new Column<>("client_peak_rss_kb", s -> Long.toString(s.clientPeakRssKb())));
        columns.add(new Column<>("server_peak_rss_kb", s -> Long.toString(s.serverPeakRssKb())));
        columns.add(new Column<>("transports", LoadSummary::transports));
        writeCsv(file, columns, loadSummary);
    }

    private void writeSummaryCsv(Path file) {
        List<Column<PointSummary>> columns = new ArrayList<>(List.of(
                new Column<>("provider", s -> s.point().provider().id()),
                new Column<>("mode", s -> s.point().mode().id()),
                new Column<>("metric", s -> s.point().metric().id()),
                new Column<>("size_bytes", s -> Integer.toString(s.point().size())),
                new Column<>("runs", s -> Integer.toString(s.runs())),
                new Column<>("failed", s -> Integer.toString(s.failed()))));
        addStat(columns, "ops_per_s", PointSummary::opsPerSec);
        addStat(columns, "bytes_per_s", PointSummary::bytesPerSec);
        addStat(columns, "latency_mean_us", PointSummary::latencyMeanUs);
        addStat(columns, "latency_p50_us", PointSummary::latencyP50Us);
        addStat(columns, "latency_p99_us", PointSummary::latencyP99Us);
        addStat(columns, "latency_p999_us", PointSummary::latencyP999Us);
        addStat(columns, "client_cpu_us_per_op", PointSummary::clientCpuUsPerOp);
        addStat(columns, "server_cpu_us_per_op", PointSummary::serverCpuUsPerOp);
        columns.add(new Column<>("client_peak_rss_kb", s -> Long.toString(s.clientPeakRssKb())));
        columns.add(new Column<>("server_peak_rss_kb", s -> Long.toString(s.serverPeakRssKb())));
        columns.add(new Column<>("transports", PointSummary::transports));
        writeCsv(file, columns, summary);
    }

    private static <T> void addStat(List<Column<T>> columns, String name, Function<T, Stat> stat) {
        columns.add(new Column<>(name + "_mean", s -> num(stat.apply(s).mean())));
        columns.add(new Column<>(name + "_sd", s -> num(stat.apply(s).sd())));
        columns.add(new Column<>(name + "_median", s -> num(stat.apply(s).median())));
    }

    private record Column<T>(String name, Function<T, String> value) {
    }

    private static <T> void writeCsv(Path file, List<Column<T>> columns, List<T> rows) {
        StringBuilder out = new StringBuilder();
        out.append(String.join(",", columns.stream().map(Column::name).toList())).append('\n');
        for (T row : rows) {
            out.append(String.join(",", columns.stream().map(c -> csv(c.value().apply(row))).toList())).append('\n');
        }
        try {
            Files.writeString(file, out, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String num(double v) {
        return Double.isNaN(v) ? "" : String.format(Locale.ROOT, "%.6g", v);
    }

    private static String csv(String v) {
        return v.contains(",") || v.contains("\"") || v.contains("\n") ? '"' + v.replace("\"", "\"\"") + '"' : v;
    }
}
