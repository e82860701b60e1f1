package io.hadronio.app.ucx;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.SizeSequence;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.ucx.Ucx;
import io.hadronio.ucx.UcxUnavailableException;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio ucx benchmark latency|throughput}: the binding measured between two
 * processes, one started with {@code -s} (server), the other with {@code -r HOST:PORT}.
 */
@Command(name = "benchmark",
        mixinStandardHelpOptions = true,
        description = {
            "Measure the UCX binding between two processes: start one with -s, the other with -r HOST:PORT.",
            "The client's settings (length, messages, window, runs) are sent to the server.",
            "Prints the transport UCX chose and a machine-readable RESULT line on the client."},
        subcommands = {UcxBenchmarkCommand.Latency.class, UcxBenchmarkCommand.Throughput.class})
public final class UcxBenchmarkCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: latency or throughput");
    }

    /** Options both benchmarks share; subclasses add length, messages and window with their own defaults. */
    abstract static class Base implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @Option(names = {"-s", "--server"}, description = "Run the server side (listens on --address).")
        boolean server;

        @Option(names = {"-r", "--remote"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
                description = "Run the client side against the server at HOST:PORT.")
        InetSocketAddress remote;

        @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
                defaultValue = "0.0.0.0:2998",
                description = "Server: where to listen for the TCP bootstrap connection; port 0 picks a free one"
                        + " (default: ${DEFAULT-VALUE}).")
        InetSocketAddress address;

        @Option(names = {"-n", "--runs"}, defaultValue = "3",
                description = "Measured runs of --messages each; the RESULT line gives medians (default: ${DEFAULT-VALUE}).")
        int runs;

        @Option(names = "--warmup", paramLabel = "MESSAGES", split = ",", defaultValue = "-1",
                description = "Messages before the first measured run, not measured: one value, or one per --length "
                        + "(default: as many as --messages).")
        List<Long> warmup;

        @Option(names = "--sessions", defaultValue = "1",
                description = "Server: clients to serve one after another before exiting; a client with several "
                        + "--length values is one per length (default: ${DEFAULT-VALUE}).")
        int sessions;

        @Option(names = "--connect-timeout", paramLabel = "SECONDS", defaultValue = "10",
                description = "Client: how long to retry while the server is not listening yet (default: ${DEFAULT-VALUE}).")
        int connectTimeout;

        abstract BenchmarkSettings.Kind kind();

        abstract List<Integer> lengths();

        abstract List<Long> messages();

        int window() {
            return 1;
        }

        /** Client: write each message's bytes before sending them (throughput only). */
        boolean fresh() {
            return false;
        }

        /** Server: copy each received message into an application buffer (throughput only). */
        boolean copyOut() {
            return false;
        }

        @Override
        public Integer call() throws Exception {
            if (server == (remote != null)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "give either -s/--server or -r/--remote HOST:PORT");
            }
            List<BenchmarkSettings> sizes = new ArrayList<>();
            try {
                for (SizeSequence.Step step : SizeSequence.of(lengths(), messages(), warmup, 0)) {
                    int messages = Math.toIntExact(step.messages());
                    sizes.add(new BenchmarkSettings(kind(), step.length(), messages,
                            step.warmup() < 0 ? messages : Math.toIntExact(step.warmup()), window(), runs));
                }
            } catch (IllegalArgumentException | ArithmeticException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            PrintStream out = System.out;
            try {
                Ucx.ensureAvailable();
                if (server) {
                    try (UcxBenchmark.Server s = UcxBenchmark.Server.open(kind(), address)) {
                        s.copyOut(copyOut());
                        InetSocketAddress bound = s.localAddress();
                        out.println("hadronio ucx benchmark " + kind().label() + " server (UCX " + Ucx.version()
                                + ") listening on " + bound.getHostString() + ":" + bound.getPort());
                        out.flush();
                        for (int i = 0; i < sessions; i++) {
                            s.serve(out);
                        }
                    }
                } else {
                    out.println("hadronio ucx benchmark " + kind().label() + " client (UCX " + Ucx.version() + ")");
                    for (BenchmarkSettings settings : sizes) {
                        MeasurementWindow.next();
                        BenchmarkReport report = UcxBenchmark.runClient(settings, remote,
                                Duration.ofSeconds(Math.max(0, connectTimeout)), out, fresh());
                        out.println(report.resultLine() + (fresh() ? " data=fresh" : ""));
                        out.flush();
                    }
                }
                out.flush();
                return 0;
            } catch (UcxUnavailableException | IOException e) {
                out.flush();
                System.err.println("hadronio ucx benchmark " + kind().label() + ": " + e.getMessage());
                return 1;
            }
        }
    }

    /** Tag ping-pong: round-trip times. */
    @Command(name = "latency", mixinStandardHelpOptions = true,
            description = {"Tag ping-pong with busy polling; reports round-trip median, average and p99 in µs."})
    static final class Latency extends Base {
        @Option(names = {"-l", "--length"}, paramLabel = "BYTES", split = ",", defaultValue = "8",
                description = "Bytes per message; several (comma-separated) are measured one after another, each with "
                        + "its own connection and warm-up (default: ${DEFAULT-VALUE}).")
        List<Integer> length;

        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "100000",
                description = "Round trips per measured run: one value, or one per --length (default: ${DEFAULT-VALUE}).")
        List<Long> messages;

        @Override
        BenchmarkSettings.Kind kind() {
            return BenchmarkSettings.Kind.LATENCY;
        }

        @Override
        List<Integer> lengths() {
            return length;
        }

        @Override
        List<Long> messages() {
            return messages;
        }
    }

    /** Windowed tag streaming from client to server: bandwidth and message rate. */
    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = {"Streaming tag sends from client to server with a window of outstanding sends;",
                "reports GB/s (1e9 bytes/s) and million messages/s."})
    static final class Throughput extends Base {
        @Option(names = {"-l", "--length"}, paramLabel = "BYTES", split = ",", defaultValue = "65536",
                description = "Bytes per message; several (comma-separated) are measured one after another, each with "
                        + "its own connection and warm-up (default: ${DEFAULT-VALUE}).")
        List<Integer> length;

        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "50000",
                description = "Messages per measured run: one value, or one per --length (default: ${DEFAULT-VALUE}).")
        List<Long> messages;

        @Option(names = {"-w", "--window"}, defaultValue = "64",
                description = "Most sends outstanding at once; the server keeps as many receives posted"
                        + " (default: ${DEFAULT-VALUE}).")
        int window;

        @Option(names = "--fresh",
                description = {"Client: send freshly written bytes, as an application does: one buffer per "
                        + "outstanding send, each written in full just before its send (window x length bytes). "
                        + "Without it every send repeats one buffer nobody writes, so the receiver copies "
                        + "lines the sender never dirtied: a ceiling no application reaches."})
        boolean fresh;

        @Option(names = "--copy-out",
                description = {"Server: copy every received message out of the buffer UCX received it in into "
                        + "an application buffer, as a provider that receives into its own slices does "
                        + "(hadroNIO's read()): the cost of that second copy on the receiving core."})
        boolean copyOut;

        @Override
        boolean fresh() {
            return fresh;
        }

        @Override
        boolean copyOut() {
            return copyOut;
        }

        @Override
        BenchmarkSettings.Kind kind() {
            return BenchmarkSettings.Kind.THROUGHPUT;
        }

        @Override
        List<Integer> lengths() {
            return length;
        }

        @Override
        List<Long> messages() {
            return messages;
        }

        @Override
        int window() {
            return window;
        }
    }
}
