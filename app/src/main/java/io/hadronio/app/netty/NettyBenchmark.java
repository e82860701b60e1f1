package io.hadronio.app.netty;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.Role;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.SizeSequence;
import io.hadronio.app.SocketAddressConverter;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio netty benchmark latency|throughput|connection}: Netty's NIO transport
 * between two processes. Every connection starts with the client's settings
 * ({@link BenchmarkHeader}), so only the client needs {@code -l/-m/-t/-c}; the server
 * exits once the client's connections are done. A client given several lengths measures
 * them one after another, each on connections of its own, against a server started with
 * {@code --sessions} = the number of lengths.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = "Netty benchmarks between two processes (start one with -s, the other with -r).",
        subcommands = {NettyBenchmark.Latency.class, NettyBenchmark.Throughput.class, NettyBenchmark.Connection.class})
final class NettyBenchmark implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(),
                "Missing subcommand: latency, throughput or connection");
    }


    abstract static class Base implements Callable<Integer> {
        @Spec
        CommandSpec spec;

        @ArgGroup(exclusive = true, multiplicity = "1")
        Role role;

        @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
                defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
        InetSocketAddress address;

        @Option(names = {"-l", "--length"}, split = ",", defaultValue = "8", paramLabel = "BYTES",
                description = "Message length in bytes; several (comma-separated) are measured one after another in this "
                        + "process, each on connections of its own with its own warm-up (default: ${DEFAULT-VALUE}).")
        List<Integer> lengths;

        @Option(names = "--sessions", defaultValue = "1",
                description = "Server: clients to serve one after another before exiting; a client with several "
                        + "--length values is one per length (default: ${DEFAULT-VALUE}).")
        int sessions;

        @Option(names = {"-c", "--connections"}, defaultValue = "1",
                description = "Concurrent connections (default: ${DEFAULT-VALUE}).")
        int connections;

        @Option(names = {"--threads"}, defaultValue = "0",
                description = "Event-loop threads (default: server 1, client min(connections, cores)).")
        int threads;

        abstract String kind();

        abstract long defaultMessages();

        /** -m: one value or one per length; -1 is the default. */
        abstract List<Long> messagesOption();

        /** -t: one value or one per length; -1 is the default. */
        abstract List<Long> thresholdOption();

        /** The handler of one accepted connection. */
        abstract ChannelHandler serverHandler(BenchmarkServerState state);

        /** Runs the client side once connected settings are known; prints the report. */
        abstract void runClient(EventLoopGroup group, InetSocketAddress remote, BenchmarkHeader settings) throws Exception;

        /** Warm-up when -t does not say: a tenth of the measured count, at least 1000. */
        long defaultWarmup(long messages) {
            return Math.max(1000, messages / 10);
        }

        @Override
        public Integer call() throws Exception {
            ProviderSelection.apply();
            if (role.server) {
                return serve();
            }
            List<SizeSequence.Step> steps;
            try {
                steps = SizeSequence.of(lengths, messagesOption().stream().map(m -> m < 0 ? defaultMessages() : m)
                        .toList(), thresholdOption(), 1);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
            }
            if (connections < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--connections must be > 0");
            }
            int n = threads > 0 ? threads : Math.min(connections, Runtime.getRuntime().availableProcessors());
            EventLoopGroup group = NettySupport.newGroup(n);
            try {
                for (SizeSequence.Step step : steps) {
                    MeasurementWindow.next();
                    long warmup = step.warmup() >= 0 ? step.warmup() : defaultWarmup(step.messages());
                    runClient(group, role.remote, new BenchmarkHeader(step.length(), connections, warmup,
                            step.messages()));
                }
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
            return 0;
        }

        private int serve() throws Exception {
            EventLoopGroup group = NettySupport.newGroup(threads > 0 ? threads : 1);
            try {
                BenchmarkServerState state = new BenchmarkServerState(sessions);
                Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                        .childOption(ChannelOption.TCP_NODELAY, true)
                        .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK)
                        .childHandler(new ChannelInitializer<SocketChannel>() {
                            @Override
                            protected void initChannel(SocketChannel ch) {
                                ch.pipeline().addLast(serverHandler(state));
                            }
                        })
                        .bind(address).sync().channel();
                System.out.println("listening on " + server.localAddress() + " (provider "
                        + NettySupport.providerClass() + ", netty " + kind() + ")");
                System.out.flush();
                try {
                    state.done().get();
                } finally {
                    server.close().sync();
                }
                System.out.println("served " + state.finished() + " connections");
                return state.failures() == 0 ? 0 : 1;
            } finally {
                group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
            }
        }

        /** Connects {@code connections} clients, each with its own handler, and waits for all results. */
        <R> List<R> connectAll(EventLoopGroup group, InetSocketAddress remote,
                               java.util.function.Supplier<BenchmarkClient<R>> handlers) throws Exception {
            List<CompletableFuture<R>> results = new ArrayList<>();
            Bootstrap b = NettySupport.client(group, null).option(ChannelOption.WRITE_BUFFER_WATER_MARK, WATER_MARK);
            for (int i = 0; i < connections; i++) {
                results.add(NettySupport.connect(b, remote, handlers).handler().result());
            }
            List<R> out = new ArrayList<>();
            for (CompletableFuture<R> r : results) {
                out.add(r.get());
            }
            return out;
        }

        String provider() {
            return NettySupport.provider();
        }
    }

    // pending bytes a channel may buffer before it reports itself unwritable
    static final WriteBufferWaterMark WATER_MARK = new WriteBufferWaterMark(1 << 20, 2 << 20);

    @Command(name = "latency", mixinStandardHelpOptions = true,
            description = "Ping-pong: the client writes a message, the server echoes it; round-trip times.")
    static final class Latency extends Base {
        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "-1",
                description = "Measured round trips per connection: one value, or one per --length (default: 100000).")
        List<Long> messages;

        @Option(names = {"-t", "--threshold"}, split = ",", defaultValue = "-1",
                description = "Warm-up round trips per connection before measuring: one value, or one per --length "
                        + "(default: a tenth of --messages, at least 1000).")
        List<Long> threshold;

        @Override
        String kind() {
            return "latency";
        }

        @Override
        long defaultMessages() {
            return 100_000;
        }

        @Override
        List<Long> messagesOption() {
            return messages;
        }

        @Override
        List<Long> thresholdOption() {
            return threshold;
        }

        @Override
        ChannelHandler serverHandler(BenchmarkServerState state) {
            return new BenchmarkServerHandler.Echo(state);
        }

        @Override
        void runClient(EventLoopGroup group, InetSocketAddress remote, BenchmarkHeader settings) throws Exception {
            if (settings.messages() > Integer.MAX_VALUE) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--messages too large for latency");
            }
            List<BenchmarkClient.LatencyRun> runs = connectAll(group, remote, () -> new BenchmarkClient.Latency(settings));
            long[] all = new long[(int) settings.messages() * runs.size()];
            long first = Long.MAX_VALUE;
            long last = Long.MIN_VALUE;
            int k = 0;
            for (BenchmarkClient.LatencyRun run : runs) {
                for (long r : run.rtt()) {
                    all[k++] = r;
                }
                first = Math.min(first, run.start());
                last = Math.max(last, run.end());
            }
            LatencySummary summary = LatencySummary.of(all);
            double opsPerSec = all.length / ((last - first) / 1e9);
            String transport = runs.get(0).transport();
            System.out.printf(Locale.ROOT, "netty round trip %d B over %s (%s, %d connection%s): %s, %.0f round trips/s%n",
                    settings.length(), transport, provider(), connections, connections == 1 ? "" : "s", summary.describe(),
                    opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=netty-latency provider=%s length=%d messages=%d connections=%d "
                    + "%s ops_per_s=%.0f transports=%s%n", provider(), settings.length(), settings.messages(), connections,
                    summary.resultFields(), opsPerSec, transport);
        }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = "Streaming: the client writes messages, the server reads them and acknowledges the end.")
    static final class Throughput extends Base {
        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "-1",
                description = "Measured messages per connection: one value, or one per --length (default: 100000).")
        List<Long> messages;

        @Option(names = {"-t", "--threshold"}, split = ",", defaultValue = "-1",
                description = "Warm-up messages per connection before measuring: one value, or one per --length "
                        + "(default: a tenth of --messages, at least 1000).")
        List<Long> threshold;

        @Option(names = {"-f", "--flush-every"}, defaultValue = "64",
                description = "Messages written between two flushes (default: ${DEFAULT-VALUE}).")
        int flushEvery;

        @Override
        String kind() {
            return "throughput";
        }

        @Override
        long defaultMessages() {
            return 100_000;
        }

        @Override
        List<Long> messagesOption() {
            return messages;
        }

        @Override
        List<Long> thresholdOption() {
            return threshold;
        }

        @Override
        ChannelHandler serverHandler(BenchmarkServerState state) {
            return new BenchmarkServerHandler.Sink(state);
        }

        @Override
        void runClient(EventLoopGroup group, InetSocketAddress remote, BenchmarkHeader settings) throws Exception {
            if (flushEvery < 1) {
                throw new CommandLine.ParameterException(spec.commandLine(), "--flush-every must be > 0");
            }
            List<BenchmarkClient.ThroughputRun> runs = connectAll(group, remote,
                    () -> new BenchmarkClient.Throughput(settings, flushEvery));
            long first = Long.MAX_VALUE;
            long last = Long.MIN_VALUE;
            for (BenchmarkClient.ThroughputRun run : runs) {
                first = Math.min(first, run.start());
                last = Math.max(last, run.end());
            }
            double seconds = (last - first) / 1e9;
            double total = (double) settings.messages() * runs.size();
            double mbPerSec = total * settings.length() / seconds / 1e6;
            double opsPerSec = total / seconds;
            String transport = runs.get(0).transport();
            System.out.printf(Locale.ROOT, "netty streaming %d B messages over %s (%s, %d connection%s, flush every %d): "
                    + "%.1f MB/s, %.0f messages/s%n", settings.length(), transport, provider(), connections,
                    connections == 1 ? "" : "s", flushEvery, mbPerSec, opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=netty-throughput provider=%s length=%d messages=%d connections=%d "
                    + "flush_every=%d mb_per_s=%.1f ops_per_s=%.0f transports=%s%n", provider(), settings.length(),
                    settings.messages(), connections, flushEvery, mbPerSec, opsPerSec, transport);
        }
    }

    @Command(name = "connection", aliases = "connections", mixinStandardHelpOptions = true,
            description = "Connection set-up: each connection connects, sends one message, gets its echo and closes; "
                    + "--connections of them run at a time.")
    static final class Connection extends Base {
        @Option(names = {"-m", "--messages"}, split = ",", defaultValue = "-1",
                description = "Measured connections in total: one value, or one per --length (default: 1000).")
        List<Long> messages;

        @Option(names = {"-t", "--threshold"}, split = ",", defaultValue = "-1",
                description = "Warm-up connections before measuring: one value, or one per --length "
                        + "(default: a tenth of --messages, at least 100).")
        List<Long> threshold;

        @Override
        String kind() {
            return "connection";
        }

        @Override
        long defaultMessages() {
            return 1000;
        }

        @Override
        List<Long> messagesOption() {
            return messages;
        }

        @Override
        List<Long> thresholdOption() {
            return threshold;
        }

        @Override
        long defaultWarmup(long messages) {
            return Math.max(100, messages / 10);
        }

        @Override
        ChannelHandler serverHandler(BenchmarkServerState state) {
            return new BenchmarkServerHandler.Echo(state).countingConnections();
        }

        @Override
        void runClient(EventLoopGroup group, InetSocketAddress remote, BenchmarkHeader settings) throws Exception {
            if (messages.size() > 1 || threshold.size() > 1) {
                // the server counts connections per session from the first header: every session must make as many
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "the connection benchmark takes one --messages and one --threshold for all lengths");
            }
            BenchmarkClient.ConnectionRun run = BenchmarkClient.runConnections(group, remote, settings);
            long[] times = run.times();
            LatencySummary summary = LatencySummary.of(times);
            double avgUs = summary.avgUs();
            double p50 = summary.p50Us();
            double p99 = summary.p99Us();
            double perSec = times.length / ((run.end() - run.start()) / 1e9);
            System.out.printf(Locale.ROOT, "netty connections over %s (%s, %d at a time, %d B exchanged): %.0f "
                    + "connections/s, %.1f us per connection (p50 %.1f, p99 %.1f)%n", run.transport(), provider(),
                    connections, settings.length(), perSec, avgUs, p50, p99);
            System.out.printf(Locale.ROOT, "RESULT kind=netty-connection provider=%s length=%d connections=%d parallel=%d "
                    + "conn_per_s=%.0f avg_us=%.1f p50_us=%.1f p99_us=%.1f transports=%s%n", provider(), settings.length(),
                    times.length, connections, perSec, avgUs, p50, p99, run.transport());
        }
    }
}
