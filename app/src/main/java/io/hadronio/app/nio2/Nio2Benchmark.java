package io.hadronio.app.nio2;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.PracticeRounds;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SizeSequence;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.Transports;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio nio2 benchmark latency|throughput}: the blocking benchmarks' exchanges
 * (same options, same settings exchange, same {@code RESULT} lines) on
 * {@link AsynchronousSocketChannel}s, every operation started in the previous one's
 * {@link CompletionHandler}. Each process has one group of one thread
 * ({@code withFixedThreadPool(1, ...)}), on which its handlers run; the main thread only
 * starts a round and waits for its end. Measured code allocates nothing per message beyond
 * what the provider does.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = "NIO.2 benchmarks with CompletionHandlers between two processes (start one with -s, the other with -r).",
        subcommands = {Nio2Benchmark.Latency.class, Nio2Benchmark.Throughput.class})
final class Nio2Benchmark implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: latency or throughput");
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

        abstract void serve(AsynchronousSocketChannel channel, int length, long total) throws Exception;

        abstract void measure(AsynchronousSocketChannel channel, int length, int warmup, int messages) throws Exception;

        @Override
        public Integer call() throws Exception {
            ProviderSelection.applyAsynchronous();
            AsynchronousChannelGroup group = AsynchronousChannelGroup.withFixedThreadPool(1, r -> {
                Thread t = new Thread(r, "nio2-io");
                t.setDaemon(true);
                return t;
            });
            try {
                if (role.server) {
                    serveSessions(group);
                } else {
                    measureSteps(group);
                }
            } finally {
                group.shutdownNow();
            }
            return 0;
        }

        private void serveSessions(AsynchronousChannelGroup group) throws Exception {
            try (AsynchronousServerSocketChannel server = AsynchronousServerSocketChannel.open(group)) {
                server.bind(address);
                System.out.println("listening on " + server.getLocalAddress() + " (provider "
                        + AsynchronousChannelProvider.provider().getClass().getName() + ")");
                System.out.flush();
                for (int i = 0; i < sessions; i++) {
                    try (AsynchronousSocketChannel channel = server.accept().get()) {
                        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        ByteBuffer settings = ByteBuffer.allocate(12);
                        readFully(channel, settings);
                        serve(channel, settings.getInt(0), settings.getLong(4));
                    }
                }
            }
        }

        private void measureSteps(AsynchronousChannelGroup group) throws Exception {
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
                try (AsynchronousSocketChannel channel = connect(group, role.remote)) {
                    ByteBuffer settings = ByteBuffer.allocate(12).putInt(step.length())
                            .putLong((long) warmup + count).flip();
                    writeFully(channel, settings);
                    measure(channel, step.length(), warmup, count);
                }
            }
        }

        String provider() {
            return Boolean.parseBoolean(System.getenv("DISABLE_HADRONIO")) ? "jdk" : "hadronio";
        }
    }

    /** Client side: connect, retrying for a few seconds while the server starts (a failed connect closes the channel). */
    static AsynchronousSocketChannel connect(AsynchronousChannelGroup group, InetSocketAddress remote) throws Exception {
        ExecutionException last = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            AsynchronousSocketChannel channel = AsynchronousSocketChannel.open(group);
            try {
                channel.connect(remote).get();
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return channel;
            } catch (ExecutionException e) {
                channel.close();
                if (!(e.getCause() instanceof ConnectException)) {
                    throw e;
                }
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }

    /** Outside the measured part: with futures. */
    static void readFully(AsynchronousSocketChannel channel, ByteBuffer buffer) throws Exception {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer).get() < 0) {
                throw new EOFException("peer closed the connection");
            }
        }
    }

    static void writeFully(AsynchronousSocketChannel channel, ByteBuffer buffer) throws Exception {
        while (buffer.hasRemaining()) {
            channel.write(buffer).get();
        }
    }

    /** The path as the other benchmarks name it: {@code cma,sysv} on UCX, {@code kernel-tcp}, {@code kernel-unix}. */
    static String transport(AsynchronousSocketChannel channel) {
        String path = Transports.path(channel);
        if (path.startsWith("ucx:")) {
            return path.substring(4);
        }
        return "unix".equals(path) ? "kernel-unix" : "kernel-tcp";
    }

    /**
     * A chain of transfers on one channel, each started in the previous one's handler (on the
     * group's thread): {@link #begin} starts it, {@link #await} waits for its end. Subclasses
     * say what comes after a message was sent or received.
     */
    abstract static class Chain implements CompletionHandler<Integer, Void> {
        final AsynchronousSocketChannel channel;
        final ByteBuffer buffer;
        // the current transfer: a write (true) or a read
        boolean writing;
        private CompletableFuture<Void> done;

        Chain(AsynchronousSocketChannel channel, ByteBuffer buffer) {
            this.channel = channel;
            this.buffer = buffer;
        }

        /** Starts a chain; the first transfer is {@link #first}. */
        final void begin() {
            done = new CompletableFuture<>();
            first();
        }

        final void await() throws Exception {
            try {
                done.get();
            } catch (ExecutionException e) {
                if (e.getCause() instanceof Exception cause) {
                    throw cause;
                }
                throw e;
            }
        }

        abstract void first();

        /** A whole message went ({@code writing}) or came; start the next transfer or {@link #end}. */
        abstract void transferred();

        final void write() {
            writing = true;
            channel.write(buffer, null, this);
        }

        final void read() {
            writing = false;
            channel.read(buffer, null, this);
        }

        final void end() {
            done.complete(null);
        }

        @Override
        public final void completed(Integer n, Void attachment) {
            if (n < 0) {
                done.completeExceptionally(new EOFException("peer closed the connection"));
            } else if (buffer.hasRemaining()) {
                if (writing) {
                    channel.write(buffer, null, this);
                } else {
                    channel.read(buffer, null, this);
                }
            } else {
                transferred();
            }
        }

        @Override
        public final void failed(Throwable e, Void attachment) {
            done.completeExceptionally(e);
        }
    }

    @Command(name = "latency", mixinStandardHelpOptions = true,
            description = "Ping-pong through CompletionHandlers: the client writes a message, the server echoes it; "
                    + "round-trip times.")
    static final class Latency extends Base {
        /** The server: read a message, write it back, {@code total} times. */
        private static final class Echo extends Chain {
            private final long total;
            private long echoed;

            Echo(AsynchronousSocketChannel channel, int length, long total) {
                super(channel, ByteBuffer.allocateDirect(length));
                this.total = total;
            }

            @Override
            void first() {
                buffer.clear();
                read();
            }

            @Override
            void transferred() {
                if (!writing) {
                    buffer.flip();
                    write();
                } else if (++echoed == total) {
                    end();
                } else {
                    buffer.clear();
                    read();
                }
            }
        }

        /** The client: {@code n} round trips, their times in {@code rtt}. */
        private static final class RoundTrips extends Chain {
            private final long[] rtt;
            private int n;
            private int done;
            private long start;

            RoundTrips(AsynchronousSocketChannel channel, int length, long[] rtt) {
                super(channel, ByteBuffer.allocateDirect(length));
                this.rtt = rtt;
            }

            void run(int roundTrips) throws Exception {
                n = roundTrips;
                done = 0;
                begin();
                await();
            }

            @Override
            void first() {
                start = System.nanoTime();
                buffer.clear();
                write();
            }

            @Override
            void transferred() {
                if (writing) {
                    buffer.clear();
                    read();
                    return;
                }
                rtt[done++] = System.nanoTime() - start;
                if (done == n) {
                    end();
                } else {
                    first();
                }
            }
        }

        @Override
        void serve(AsynchronousSocketChannel channel, int length, long total) throws Exception {
            Echo echo = new Echo(channel, length, total);
            echo.begin();
            echo.await();
        }

        @Override
        void measure(AsynchronousSocketChannel channel, int length, int warmup, int messages) throws Exception {
            long[] rtt = new long[messages];
            RoundTrips trips = new RoundTrips(channel, length, rtt);
            PracticeRounds.run(warmup, messages, n -> {
                try {
                    trips.run(n);
                } catch (IOException | RuntimeException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IOException(e);
                }
            });
            LatencySummary summary = LatencySummary.of(rtt);
            double opsPerSec = 1e6 / summary.avgUs();
            String transport = transport(channel);
            System.out.printf(Locale.ROOT, "NIO.2 round trip %d B over %s (%s): %s, %.0f round trips/s%n", length,
                    transport, provider(), summary.describe(), opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=nio2-latency provider=%s length=%d messages=%d %s "
                    + "ops_per_s=%.0f transports=%s%n", provider(), length, messages, summary.resultFields(),
                    opsPerSec, transport);
        }
    }

    @Command(name = "throughput", mixinStandardHelpOptions = true,
            description = "Streaming through CompletionHandlers: the client writes messages, the server reads them and "
                    + "acknowledges the end.")
    static final class Throughput extends Base {
        /** The server: read {@code bytes} in up to 64 KiB at a time. */
        private static final class Drain extends Chain {
            private long remaining;

            Drain(AsynchronousSocketChannel channel, int length, long bytes) {
                super(channel, ByteBuffer.allocateDirect(Math.max(length, 64 * 1024)));
                this.remaining = bytes;
            }

            @Override
            void first() {
                next();
            }

            private void next() {
                if (remaining == 0) {
                    end();
                    return;
                }
                buffer.clear();
                if (remaining < buffer.capacity()) {
                    buffer.limit((int) remaining);
                }
                read();
            }

            @Override
            void transferred() {
                // a read completes with what came: count it (the buffer need not be full)
                remaining -= buffer.position();
                next();
            }
        }

        /** The client: {@code n} messages written one after another. */
        private static final class Stream extends Chain {
            private int n;
            private int sent;

            Stream(AsynchronousSocketChannel channel, int length) {
                super(channel, ByteBuffer.allocateDirect(length));
            }

            void run(int messages) throws Exception {
                n = messages;
                sent = 0;
                begin();
                await();
            }

            @Override
            void first() {
                if (n == 0) {
                    end();
                    return;
                }
                buffer.clear();
                write();
            }

            @Override
            void transferred() {
                if (++sent == n) {
                    end();
                } else {
                    buffer.clear();
                    write();
                }
            }
        }

        @Override
        void serve(AsynchronousSocketChannel channel, int length, long total) throws Exception {
            Drain drain = new Drain(channel, length, total * length);
            drain.begin();
            drain.await();
            writeFully(channel, ByteBuffer.allocate(1));
        }

        @Override
        void measure(AsynchronousSocketChannel channel, int length, int warmup, int messages) throws Exception {
            Stream stream = new Stream(channel, length);
            stream.run(warmup);
            MeasurementWindow.open();
            long start = System.nanoTime();
            stream.run(messages);
            readFully(channel, ByteBuffer.allocate(1));
            double seconds = (System.nanoTime() - start) / 1e9;
            double mbPerSec = (double) messages * length / seconds / 1e6;
            double opsPerSec = messages / seconds;
            String transport = transport(channel);
            System.out.printf(Locale.ROOT, "NIO.2 streaming %d B writes over %s (%s): %.1f MB/s, %.0f writes/s%n",
                    length, transport, provider(), mbPerSec, opsPerSec);
            System.out.printf(Locale.ROOT, "RESULT kind=nio2-throughput provider=%s length=%d messages=%d "
                    + "mb_per_s=%.1f ops_per_s=%.0f transports=%s%n", provider(), length, messages, mbPerSec, opsPerSec,
                    transport);
        }
    }
}
