package io.hadronio.app.blocking;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.PracticeRounds;
import io.hadronio.app.Role;
import io.hadronio.app.SizeSequence;
import io.hadronio.app.SocketAddressConverter;
import java.net.InetSocketAddress;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio blocking benchmark latency|throughput|connection}: blocking NIO between two
 * processes. The client sends its settings to the server first, so only the client
 * needs {@code -l}/{@code -m}/{@code -t}. Measured code allocates nothing per message.
 * A client given several lengths measures them one after another, each on a new
 * connection to the same server (started with {@code --sessions} = the number of lengths).
 * {@code connection} ({@link BlockingConnections}) measures connection set-up instead.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = "Blocking NIO benchmarks between two processes (start one with -s, the other with -r).",
        subcommands = {BlockingBenchmark.Latency.class, BlockingBenchmark.Throughput.class, BlockingConnections.class})
final class BlockingBenchmark implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: latency, throughput or connection");
    }


    abstract static class Base implements Callable<Integer> {
        @ArgGroup(exclusive = true, multiplicity = "1")
        Role role;

        @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
                defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
        InetSocketAddress address;

        @Option(names = {"-l", "--length"}, split = ",", defaultValue = "8", paramLabel = "BYTES",
                description = "Message length in bytes; several (comma-separated) are measured one after another in this "
                        + "process, each on a connection of its own with its own warm-up (default: ${DEFAULT-VALUE}).")
        List<Integer> lengths;

        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "100000",
                description = "Measured messages: one value, or one per --length (default: ${DEFAULT-VALUE}).")
        List<Long> messages;

        @Option(names = {"-t", "--threshold"}, split = ",", defaultValue = "-1",
                description = "Warm-up messages before measuring: one value, or one per --length "
                        + "(default: a tenth of --messages, at least 1000).")
        List<Long> thresholds;

        @Option(names = "--sessions", defaultValue = "1",
                description = "Server: clients to serve one after another before exiting; a client with several "
                        + "--length values is one per length (default: ${DEFAULT-VALUE}).")
        int sessions;

        /** The RESULT line's kind starts with this: {@code blocking}, {@code nonblocking}. */
        abstract String kind();

        abstract void serve(SocketChannel channel, int length, long total) throws Exception;

        abstract void measure(SocketChannel channel, int length, int warmup, int messages) throws Exception;

        @Override
        public Integer call() throws Exception {
            io.hadronio.app.ProviderSelection.apply();
            if (role.server) {
                try (ServerSocketChannel server = Endpoints.listen(address)) {
                    for (int i = 0; i < sessions; i++) {
                        try (SocketChannel channel = Endpoints.accept(server)) {
                            ByteBuffer settings = ByteBuffer.allocate(12);
                            Endpoints.readFully(channel, settings);
                            serve(channel, settings.getInt(0), settings.getLong(4));
                        }
                    }
                }
                return 0;
            }
            List<SizeSequence.Step> steps;
            try {
                steps = SizeSequence.of(lengths, messages, thresholds, 1);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(new CommandLine(this), e.getMessage());
            }
            for (SizeSequence.Step step : steps) {
                MeasurementWindow.next();
                int count = Math.toIntExact(step.messages());
                int warmup = step.warmup() >= 0 ? Math.toIntExact(step.warmup()) : Math.max(1000, count / 10);
                try (SocketChannel channel = Endpoints.connect(role.remote)) {
                    ByteBuffer settings = ByteBuffer.allocate(12).putInt(step.length())
                            .putLong((long) warmup + count).flip();
                    Endpoints.writeFully(channel, settings);
                    measure(channel, step.length(), warmup, count);
                }
            }
            return 0;
        }

        String provider() {
            return Boolean.parseBoolean(System.getenv("DISABLE_HADRONIO")) ? "jdk" : "hadronio";
        }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
            description = "Ping-pong: the client writes a message, the server echoes it; round-trip times.")
    static final class Latency extends Base {
        @Override
        String kind() {
            return "blocking";
        }

        @Override
        void serve(SocketChannel channel, int length, long total) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            for (long i = 0; i < total; i++) {
                buffer.clear();
                Endpoints.readFully(channel, buffer);
                buffer.flip();
                Endpoints.writeFully(channel, buffer);
            }
        }

        @Override
        void measure(SocketChannel channel, int length, int warmup, int messages) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            long[] rtt = new long[messages];
            PracticeRounds.run(warmup, messages, n -> roundTrips(channel, buffer, rtt, n));
            LatencySummary summary = LatencySummary.of(rtt);
            double opsPerSec = 1e6 / summary.avgUs();
            String transport = Endpoints.transport(channel);
            System.out.printf(Locale.ROOT, "round trip %d B over %s (%s): %s, %.0f round trips/s%n", length, transport,
                    provider(), summary.describe(), opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=%s-latency provider=%s length=%d messages=%d %s "
                    + "ops_per_s=%.0f transports=%s%n", kind(), provider(), length, messages, summary.resultFields(),
                    opsPerSec, transport);
        }

        /** One round of {@link PracticeRounds}: {@code n} round trips, their times in {@code rtt}. */
        private static void roundTrips(SocketChannel channel, ByteBuffer buffer, long[] rtt, int n) throws IOException {
            for (int i = 0; i < n; i++) {
                long start = System.nanoTime();
                buffer.clear();
                Endpoints.writeFully(channel, buffer);
                buffer.clear();
                Endpoints.readFully(channel, buffer);
                rtt[i] = System.nanoTime() - start;
            }
        }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = "Streaming: the client writes messages, the server reads them and acknowledges the end.")
    static final class Throughput extends Base {
        @Override
        String kind() {
            return "blocking";
        }

        @Override
        void serve(SocketChannel channel, int length, long total) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(Math.max(length, 64 * 1024));
            long remaining = total * length;
            while (remaining > 0) {
                buffer.clear();
                if (remaining < buffer.capacity()) {
                    buffer.limit((int) remaining);
                }
                int n = channel.read(buffer);
                if (n < 0) {
                    throw new java.io.EOFException("client closed early");
                }
                remaining -= n;
            }
            Endpoints.writeFully(channel, ByteBuffer.allocate(1));
        }

        @Override
        void measure(SocketChannel channel, int length, int warmup, int messages) throws Exception {
            ByteBuffer buffer = ByteBuffer.allocateDirect(length);
            for (int i = 0; i < warmup; i++) {
                buffer.clear();
                Endpoints.writeFully(channel, buffer);
            }
            MeasurementWindow.open();
            long start = System.nanoTime();
            for (int i = 0; i < messages; i++) {
                buffer.clear();
                Endpoints.writeFully(channel, buffer);
            }
            Endpoints.readFully(channel, ByteBuffer.allocate(1));
            double seconds = (System.nanoTime() - start) / 1e9;
            double mbPerSec = (double) messages * length / seconds / 1e6;
            double opsPerSec = messages / seconds;
            String transport = Endpoints.transport(channel);
            System.out.printf(Locale.ROOT, "streaming %d B writes over %s (%s): %.1f MB/s, %.0f writes/s%n", length,
                    transport, provider(), mbPerSec, opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=%s-throughput provider=%s length=%d messages=%d "
                    + "mb_per_s=%.1f ops_per_s=%.0f transports=%s%n", kind(), provider(), length, messages, mbPerSec, opsPerSec,
                    transport);
        }
    }
}
