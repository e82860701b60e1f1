package io.hadronio.app.evaluate;

import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio evaluate}: runs the evaluation (issue 11) and writes its results, figures
 * and report; {@code hadronio evaluate render} re-draws figures and report from a results
 * directory.
 */
@Command(name = "evaluate", mixinStandardHelpOptions = true,
        description = {"Run the evaluation: JDK provider, hadroNIO and the UCX binding; blocking, non-blocking (Selector) "
                + "and Netty; throughput and latency over message sizes. Starts the server/client JVM pairs itself.",
            "Writes results.json, runs.csv, summary.csv, figures/ (SVG and PNG) and a report into --output."},
        subcommands = {EvaluateCommand.Render.class})
public final class EvaluateCommand implements Callable<Integer> {
    private static final long LOAD_TIMEOUT_SECONDS = 60;

    @Spec
    CommandSpec spec;

    @Option(names = "--readme", paramLabel = "FILE",
            description = "Also replace the generated results table in FILE (README.md) with this run's headline figures.")
    Path readme;

    @Option(names = {"-p", "--profile"}, defaultValue = "quick",
            description = "smoke (CI: 2 sizes, 1 run), quick (sizes in powers of 4, 3 runs, medians), full (powers of 2, 5 runs), "
                    + "steady (64 KiB and 1 MiB, 3-s windows, 5 runs); default: ${DEFAULT-VALUE}.")
    String profile;

    @Option(names = {"-o", "--output"}, paramLabel = "DIR",
            description = "Results directory (default: docs/evaluation/<profile>).")
    Path output;

    @Option(names = "--report", paramLabel = "FILE",
            description = "Where the Markdown report goes (default: <output>/EVALUATION.md; docs/EVALUATION.md to publish).")
    Path report;

    @Option(names = "--modes", split = ",", paramLabel = "MODE",
            description = "Any of blocking, nonblocking, netty, nio2, raw (default: all).")
    List<String> modes;

    @Option(names = "--providers", split = ",", paramLabel = "PROVIDER",
            description = "Any of jdk, hadronio, ucx (default: all).")
    List<String> providers;

    @Option(names = "--metrics", split = ",", paramLabel = "METRIC",
            description = "Any of throughput, latency (default: both).")
    List<String> metrics;

    @Option(names = "--sizes", split = ",", paramLabel = "BYTES", description = "Message sizes instead of the profile's.")
    List<Integer> sizes;

    @Option(names = "--repetitions", paramLabel = "N", description = "Runs per point instead of the profile's.")
    Integer repetitions;

    @Option(names = "--server-cpu", defaultValue = "0", description = "Core of the server JVM (default: ${DEFAULT-VALUE}).")
    int serverCpu;

    @Option(names = "--client-cpu", defaultValue = "1", description = "Core of the client JVM (default: ${DEFAULT-VALUE}).")
    int clientCpu;

    @Option(names = "--timeout", defaultValue = "180", paramLabel = "SECONDS",
            description = "Longest one size may take: a client that prints no result for so long fails "
                    + "(default: ${DEFAULT-VALUE}).")
    long timeoutSeconds;

    @Option(names = "--load", negatable = true,
            description = "Also run the load mode (N connections at offered rates); default: on for smoke and full, "
                    + "off for quick and steady, so that the demo's profile takes about four minutes (--no-load skips it).")
    Boolean load;

    @Option(names = "--transfers", negatable = true, defaultValue = "true", fallbackValue = "true",
            description = "Also send a file with FileChannel.transferTo and store one with transferFrom, on both "
                    + "providers (a broker's shape; the profile sets the size; default: on, --no-transfers skips it).")
    boolean transfers;

    @Option(names = "--revision", defaultValue = "", paramLabel = "TEXT",
            description = "What was measured, for the report (scripts/demo.sh passes the git commit).")
    String revision;

    @Override
    public Integer call() throws Exception {
        Profile p = profile();
        Set<Metric> metricSet = EnumSet.noneOf(Metric.class);
        for (String m : metrics == null ? List.of("throughput", "latency") : metrics) {
            try {
                metricSet.add(Metric.byId(m));
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), "unknown metric " + m + " (throughput, latency)");
            }
        }
        Path dir = output != null ? output : Path.of("docs", "evaluation", p.id());
        Files.createDirectories(dir.resolve("raw"));
        Set<Mode> modeSet = EnumSet.noneOf(Mode.class);
        (modes == null ? List.of("blocking", "nonblocking", "netty", "nio2", "raw") : modes).forEach(m -> modeSet.add(Mode.byId(m)));
        Set<Provider> providerSet = EnumSet.noneOf(Provider.class);
        (providers == null ? List.of("jdk", "hadronio", "ucx") : providers).forEach(x -> providerSet.add(Provider.byId(x)));
        Evaluation evaluation = new Evaluation(p, sizes != null ? sizes : p.sizes(),
                repetitions != null ? repetitions : p.repetitions(), modeSet, providerSet, metricSet);
        BenchmarkPair.Pinning pinning = pinning();
        PrintStream out = System.out;
        Environment env = Environment.now(pinning.toString(), p.id(), commandLine(), revision);
        LoadEvaluation loadEvaluation = new LoadEvaluation(p.load(), modeSet, providerSet);
        boolean load = this.load != null ? this.load : p == Profile.SMOKE || p == Profile.FULL;
        TransferEvaluation transferEvaluation = new TransferEvaluation(TransferPlan.of(p), providerSet);
        out.printf("evaluate: profile %s, %d runs on %d JVM pairs%s%s, %s; results in %s%n", p.id(), evaluation.runs(),
                evaluation.pairs(),
                load ? ", " + loadEvaluation.pairs() + " load pairs" : "",
                transfers ? ", " + transferEvaluation.pairs() + " file transfer pairs" : "", pinning, dir);
        BenchmarkPair pair = new BenchmarkPair(javaCommand(p.jvmOptions(), mainClass()), pinning, dir.resolve("raw"), timeoutSeconds);
        Console console = System.console();
        boolean inPlace = console != null && console.isTerminal();
        List<RunRecord> records = evaluation.run(pair, dir, System.err, inPlace);
        // a load run lasts about a second of traffic; one still going after a minute is stuck (hadroNIO's
        // thread-per-connection server at 1,000 connections did not finish in 120 s), not slow
        BenchmarkPair loadPair = new BenchmarkPair(javaCommand(p.jvmOptions(), mainClass()), pinning, dir.resolve("raw"),
                Math.min(timeoutSeconds, LOAD_TIMEOUT_SECONDS));
        List<LoadRecord> loadRecords = load ? loadEvaluation.run(loadPair, dir, System.err, inPlace) : List.of();
        List<TransferRecord> transferRecords = transfers
                ? transferEvaluation.run(pair, dir, System.err, inPlace) : List.of();
        Results results = Results.of(env.finishedNow(), records, loadRecords, transferRecords);
        results.write(dir);
        Path reportFile = render(results, dir, report != null ? report : dir.resolve("EVALUATION.md"));
        if (readme != null) {
            new Headline(results).writeInto(readme);
        }
        out.println();
        out.print(new EvaluationReport(results, dir, dir.resolve("figures")).summaryTable());
        out.println();
        long failed = records.stream().filter(r -> !r.ok()).count() + loadRecords.stream().filter(r -> !r.ok()).count()
                + transferRecords.stream().filter(r -> !r.ok()).count();
        out.printf("evaluate: %d runs, %d failed; %s, %s, %s, figures/ in %s; report %s%n",
                records.size() + loadRecords.size() + transferRecords.size(), failed,
                Results.JSON, Results.RUNS_CSV, Results.SUMMARY_CSV, dir, reportFile);
        return failed == 0 ? 0 : 1;
    }

    /** Draws the figures into {@code <dir>/figures} and writes the report; returns the report's path. */
    static Path render(Results results, Path dir, Path reportFile) throws IOException {
        System.setProperty("java.awt.headless", "true");
        EvaluationReport report = new EvaluationReport(results, dir, dir.resolve("figures"));
        report.drawFigures();
        report.write(reportFile);
        return reportFile;
    }

    private Profile profile() {
        try {
            return Profile.valueOf(profile.toUpperCase(java.util.Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new CommandLine.ParameterException(spec.commandLine(), "unknown profile " + profile
                    + " (smoke, quick, full, steady)");
        }
    }

    /** Separate cores for server and client where the machine has two and {@code taskset} exists. */
    private BenchmarkPair.Pinning pinning() {
        int cores = Runtime.getRuntime().availableProcessors();
        boolean taskset = List.of(System.getenv().getOrDefault("PATH", "").split(":")).stream()
                .anyMatch(d -> Files.isExecutable(Path.of(d, "taskset")));
        if (cores < 2 || !taskset || serverCpu == clientCpu || Math.max(serverCpu, clientCpu) >= cores) {
            return BenchmarkPair.Pinning.NONE;
        }
        return new BenchmarkPair.Pinning(serverCpu, clientCpu);
    }

    /** The class of the {@code hadronio} command this one runs under: what the benchmark JVMs run. */
    private String mainClass() {
        return spec.root().userObject().getClass().getName();
    }

    /** This JVM's java with {@code jvmOptions} and this JVM's class path, running {@code mainClass}. */
    static List<String> javaCommand(List<String> jvmOptions, String mainClass) {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(jvmOptions);
        cmd.add("--enable-native-access=ALL-UNNAMED");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        return cmd;
    }

    private String commandLine() {
        List<String> args = new ArrayList<>(List.of("hadronio"));
        args.addAll(spec.commandLine().getParseResult().originalArgs());
        return String.join(" ", args);
    }

    /** {@code hadronio evaluate render DIR}: figures and report again from {@code DIR/results.json}. */
    @Command(name = "render", mixinStandardHelpOptions = true,
            description = "Re-draw figures (DIR/figures) and the report from DIR/results.json.")
    static final class Render implements Callable<Integer> {
        @CommandLine.Parameters(paramLabel = "DIR", description = "A results directory of 'hadronio evaluate'.")
        Path dir;

        @Option(names = "--report", paramLabel = "FILE", description = "Where the report goes (default: DIR/EVALUATION.md).")
        Path report;

        @Option(names = "--readme", paramLabel = "FILE",
                description = "Also replace the generated results table in FILE (README.md) with these results' headline figures.")
        Path readme;

        @Override
        public Integer call() throws IOException {
            Results results = Results.read(dir);
            Path file = render(results, dir, report != null ? report : dir.resolve("EVALUATION.md"));
            if (readme != null) {
                new Headline(results).writeInto(readme);
                System.out.println("evaluate render: results table in " + readme);
            }
            System.out.print(new EvaluationReport(results, dir, dir.resolve("figures")).summaryTable());
            System.out.println("evaluate render: " + file + " and " + dir.resolve("figures"));
            return 0;
        }
    }
}
