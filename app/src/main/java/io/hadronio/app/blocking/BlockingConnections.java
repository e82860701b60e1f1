package io.hadronio.app.blocking;

import io.hadronio.HadronioProvider;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import java.io.EOFException;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio blocking benchmark connection}: connection set-up with plain blocking NIO.
 * Each of {@code --clients} client threads repeatedly opens a {@code SocketChannel}, connects,
 * writes an 8-byte request, reads the 8-byte response and closes; the server accepts on one
 * thread and serves every connection on a pooled thread (read the request, write the response,
 * read to end-of-stream, close). Both sides open their channels through
 * {@link SelectorProvider#provider()}, so the same code measures whichever provider the JVM runs
 * on, and the two sides may run on different providers.
 *
 * <p>The server needs no settings: it serves until a client sends {@link #STOP}, which the client
 * does once its measurement is over.
 */
@Command(name = "connection", aliases = "connections", mixinStandardHelpOptions = true,
        description = "Connection set-up: each of --clients threads repeatedly connects, writes 8 bytes, reads the "
                + "server's 8 bytes and closes; connections per second and per-connection times.")
final class BlockingConnections implements Callable<Integer> {
    /** Request and response length. */
    static final int LENGTH = Long.BYTES;
    /** A request that makes the server stop accepting once it has answered it. */
    static final long STOP = Long.MIN_VALUE;
    private static final int BACKLOG = 1024;

    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-c", "--clients"}, defaultValue = "1",
            description = "Client threads, each with one connection at a time (default: ${DEFAULT-VALUE}).")
    int clients;

    @Option(names = {"-m", "--count"}, defaultValue = "2000",
            description = "Measured connections in total (default: ${DEFAULT-VALUE}); ignored with --duration.")
    long count;

    @Option(names = {"-d", "--duration"}, paramLabel = "SECONDS", defaultValue = "0",
            description = "Measure for this many seconds instead of --count connections.")
    double duration;

    @Option(names = {"-t", "--threshold"}, defaultValue = "-1",
            description = "Warm-up connections before measuring (default: a tenth of --count, at least 100; "
                    + "with --duration: a fifth of it in seconds).")
    long threshold;

    @Option(names = {"--warmup-duration"}, paramLabel = "SECONDS", defaultValue = "0",
            description = "Warm up for this many seconds instead of --threshold connections.")
    double warmupDuration;

    @Override
    public Integer call() throws Exception {
        ProviderSelection.apply();
        PrintWriter out = spec.commandLine().getOut();
        PrintWriter err = spec.commandLine().getErr();
        if (role.server) {
            try (Server server = Server.open(address, err)) {
                out.println("listening on " + server.localAddress() + " (provider "
                        + SelectorProvider.provider().getClass().getName() + ", blocking connection)");
                out.flush();
                Server.Counts counts = server.serve();
                out.println("served " + counts.describe());
                out.flush();
                return counts.failed() == 0 ? 0 : 1;
            }
        }
        Settings settings = settings();
        Report report = run(role.remote, settings);
        out.println(report.describe());
        out.println(report.resultLine());
        out.flush();
        return 0;
    }

    Settings settings() {
        if (clients < 1 || count < 1 || duration < 0 || warmupDuration < 0 || threshold < -1
                || Double.isNaN(duration) || Double.isNaN(warmupDuration)) {
            throw new CommandLine.ParameterException(spec.commandLine(),
                    "--clients and --count must be > 0, --threshold and the durations >= 0");
        }
        long warmupCount;
        double warmupSeconds;
        if (warmupDuration > 0) {
            warmupCount = 0;
            warmupSeconds = warmupDuration;
        } else if (threshold >= 0) {
            warmupCount = threshold;
            warmupSeconds = 0;
        } else if (duration > 0) {
            warmupCount = 0;
            warmupSeconds = duration / 5;
        } else {
            warmupCount = Math.max(100, count / 10);
            warmupSeconds = 0;
        }
        return new Settings(clients, warmupCount, warmupSeconds, duration > 0 ? 0 : count, duration);
    }

    /**
     * What the client does. Warm-up and measurement are each given as a connection count (shared by
     * all threads) or, when the seconds are &gt; 0, a duration.
     */
    record Settings(int clients, long warmupCount, double warmupSeconds, long count, double seconds) {
    }

    /** "hadronio" when the JVM's provider is hadroNIO and UCX works, else "jdk" (as the Netty commands say). */
    static String provider() {
        return SelectorProvider.provider() instanceof HadronioProvider h && h.isAccelerated() ? "hadronio" : "jdk";
    }

    // ---- client ---------------------------------------------------------------------------------

    /** The client's measurement: per-connection times in ns over a window of {@code nanos}. */
    record Report(String provider, String transport, int clients, long[] sortedTimes, long nanos) {
        int connections() {
            return sortedTimes.length;
        }

        double connectionsPerSecond() {
            return sortedTimes.length / (nanos / 1e9);
        }

        double averageUs() {
            long sum = 0;
            for (long t : sortedTimes) {
                sum += t;
            }
            return sum / 1000.0 / sortedTimes.length;
        }

        double percentileUs(double p) {
            int i = (int) Math.min(sortedTimes.length - 1, Math.ceil(p * sortedTimes.length) - 1);
            return sortedTimes[Math.max(0, i)] / 1000.0;
        }

        String describe() {
            return String.format(Locale.ROOT, "blocking connections over %s (%s, %d client thread%s, %d B each way): "
                    + "%.0f connections/s, %.1f us per connection (p50 %.1f, p99 %.1f), %d connections in %.2f s",
                    transport, provider, clients, clients == 1 ? "" : "s", LENGTH, connectionsPerSecond(),
                    averageUs(), percentileUs(0.50), percentileUs(0.99), connections(), nanos / 1e9);
        }

        String resultLine() {
            return String.format(Locale.ROOT, "RESULT kind=blocking-connection provider=%s length=%d connections=%d "
                    + "parallel=%d seconds=%.3f conn_per_s=%.0f avg_us=%.1f p50_us=%.1f p99_us=%.1f transports=%s",
                    provider, LENGTH, connections(), clients, nanos / 1e9, connectionsPerSecond(), averageUs(),
                    percentileUs(0.50), percentileUs(0.99), transport);
        }
    }

    /**
     * Runs the client: one connection that waits for the server to listen (and names the transport),
     * the warm-up, the measurement (all threads start it together), then the {@link #STOP} connection.
     */
    static Report run(InetSocketAddress remote, Settings settings) throws Exception {
        SelectorProvider provider = SelectorProvider.provider();
        ByteBuffer buffer = ByteBuffer.allocateDirect(LENGTH);
        String transport = firstConnection(provider, remote, buffer);

        AtomicLong warmupLeft = new AtomicLong(settings.warmupCount());
        AtomicLong measuredLeft = new AtomicLong(settings.count());
        CountDownLatch warmedUp = new CountDownLatch(settings.clients());
        CountDownLatch go = new CountDownLatch(1);
        long[] measureStart = new long[1];
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong lastEnd = new AtomicLong(Long.MIN_VALUE);
        List<LongList> times = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        long warmupEnd = System.nanoTime() + (long) (settings.warmupSeconds() * 1e9);
        for (int c = 0; c < settings.clients(); c++) {
            LongList mine = new LongList();
            times.add(mine);
            long base = (long) c << 40;
            Thread thread = new Thread(() -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(LENGTH);
                long request = base;
                boolean counted = false;
                try {
                    while (failure.get() == null && (settings.warmupSeconds() > 0
                            ? System.nanoTime() < warmupEnd : warmupLeft.getAndDecrement() > 0)) {
                        exchange(provider, remote, buf, request++);
                    }
                    counted = true;
                    warmedUp.countDown();
                    go.await();
                    long end = measureStart[0] + (long) (settings.seconds() * 1e9);
                    long last = Long.MIN_VALUE;
                    while (failure.get() == null) {
                        long t0 = System.nanoTime();
                        if (settings.seconds() > 0 ? t0 >= end : measuredLeft.getAndDecrement() <= 0) {
                            break;
                        }
                        exchange(provider, remote, buf, request++);
                        last = System.nanoTime();
                        mine.add(last - t0);
                    }
                    lastEnd.accumulateAndGet(last, Math::max);
                } catch (Throwable t) {
                    failure.compareAndSet(null, t);
                } finally {
                    if (!counted) {
                        warmedUp.countDown();
                    }
                }
            }, "connection-client-" + c);
            threads.add(thread);
            thread.start();
        }
        warmedUp.await();
        measureStart[0] = System.nanoTime();
        go.countDown();
        for (Thread t : threads) {
            t.join();
        }
        if (failure.get() != null) {
            throw new IOException("a client thread failed: " + failure.get(), failure.get());
        }
        exchange(provider, remote, buffer, STOP);

        int n = 0;
        for (LongList l : times) {
            n += l.size;
        }
        if (n == 0) {
            throw new IOException("no connection completed in the measured phase");
        }
        long[] all = new long[n];
        int k = 0;
        for (LongList l : times) {
            System.arraycopy(l.values, 0, all, k, l.size);
            k += l.size;
        }
        Arrays.sort(all);
        return new Report(provider(), transport, settings.clients(), all, lastEnd.get() - measureStart[0]);
    }

    /** The first connection: retried for a few seconds while the server starts; returns its transport. */
    private static String firstConnection(SelectorProvider provider, InetSocketAddress remote, ByteBuffer buffer)
            throws IOException, InterruptedException {
        for (int attempt = 0; ; attempt++) {
            SocketChannel channel = provider.openSocketChannel();
            try (channel) {
                channel.connect(remote);
                String transport = Endpoints.transport(channel);
                request(channel, buffer, 0);
                return transport;
            } catch (ConnectException e) {
                if (attempt >= 100) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }

    /** One measured unit: open, connect, request, response, close. */
    static void exchange(SelectorProvider provider, InetSocketAddress remote, ByteBuffer buffer, long value)
            throws IOException {
        try (SocketChannel channel = provider.openSocketChannel()) {
            channel.connect(remote);
            request(channel, buffer, value);
        }
    }

    private static void request(SocketChannel channel, ByteBuffer buffer, long value) throws IOException {
        buffer.clear();
        buffer.putLong(0, value);
        Endpoints.writeFully(channel, buffer);
        buffer.clear();
        if (!readFully(channel, buffer)) {
            throw new EOFException("the server closed the connection before its response ("
                    + buffer.position() + " of " + LENGTH + " bytes)");
        }
        long response = buffer.getLong(0);
        if (response != value + 1) {
            throw new IOException("wrong response " + response + " to request " + value);
        }
    }

    /** Reads until {@code buffer} is full: false at end-of-stream before that. */
    static boolean readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                return false;
            }
        }
        return true;
    }

    private static final class LongList {
        long[] values = new long[1024];
        int size;

        void add(long v) {
            if (size == values.length) {
                values = Arrays.copyOf(values, size * 2);
            }
            values[size++] = v;
        }
    }

    // ---- server ---------------------------------------------------------------------------------

    /**
     * Accepts on the calling thread and serves each connection on a pooled thread (a cached pool:
     * as many threads as connections are open at once, reused across connections). A connection:
     * read the 8-byte request, answer request + 1, read to end-of-stream, close.
     */
    static final class Server implements AutoCloseable {
        /** Consecutive failed accepts after which the server gives up. */
        private static final int MAX_ACCEPT_FAILURES = 100;
        private static final int LOGGED_FAILURES = 5;

        private final ServerSocketChannel listener;
        private final PrintWriter log;
        private final ExecutorService pool;
        private final AtomicLong served = new AtomicLong();
        private final AtomicLong incomplete = new AtomicLong();
        private final AtomicLong failed = new AtomicLong();
        private final AtomicInteger logged = new AtomicInteger();
        private volatile boolean stopping;

        private Server(ServerSocketChannel listener, PrintWriter log) {
            this.listener = listener;
            this.log = log;
            AtomicInteger ids = new AtomicInteger();
            this.pool = Executors.newCachedThreadPool(r -> {
                Thread t = new Thread(r, "connection-server-" + ids.incrementAndGet());
                t.setDaemon(true);
                return t;
            });
        }

        static Server open(InetSocketAddress address, PrintWriter log) throws IOException {
            ServerSocketChannel listener = SelectorProvider.provider().openServerSocketChannel();
            try {
                listener.bind(address, BACKLOG);
            } catch (IOException | RuntimeException e) {
                listener.close();
                throw e;
            }
            return new Server(listener, log);
        }

        InetSocketAddress localAddress() throws IOException {
            return (InetSocketAddress) listener.getLocalAddress();
        }

        /**
         * What the server saw: connections served completely, connections closed before a whole
         * request arrived (not an error), and failures (I/O errors, protocol violations, failed accepts).
         */
        record Counts(long served, long incomplete, long failed) {
            String describe() {
                return served + " connections (" + incomplete + " closed before a request, " + failed + " failed)";
            }
        }

        /** Serves until a client sends {@link #STOP} (or {@link #close()}); then waits for running connections. */
        Counts serve() throws IOException, InterruptedException {
            int acceptFailures = 0;
            try {
                while (!stopping) {
                    SocketChannel channel;
                    try {
                        channel = listener.accept();
                        acceptFailures = 0;
                    } catch (ClosedChannelException e) {
                        if (stopping) {
                            break;
                        }
                        throw e;
                    } catch (IOException e) {
                        if (stopping || !listener.isOpen()) {
                            break;
                        }
                        fail("accept", e);
                        if (++acceptFailures >= MAX_ACCEPT_FAILURES) {
                            throw new IOException(acceptFailures + " accepts failed in a row", e);
                        }
                        continue;
                    }
                    pool.execute(() -> handle(channel));
                }
            } finally {
                pool.shutdown();
                if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
                    log.println("server: connections still open 10 s after the stop request; not waiting for them");
                    log.flush();
                }
            }
            return new Counts(served.get(), incomplete.get(), failed.get());
        }

        private void handle(SocketChannel channel) {
            ByteBuffer buffer = ByteBuffer.allocate(LENGTH);
            try (channel) {
                if (!readFully(channel, buffer)) {
                    incomplete.incrementAndGet();
                    return;
                }
                long request = buffer.getLong(0);
                buffer.clear();
                buffer.putLong(0, request + 1);
                Endpoints.writeFully(channel, buffer);
                // the client closes once it has the response; anything else is a protocol error
                buffer.clear();
                int n = channel.read(buffer);
                if (n >= 0) {
                    throw new IOException("expected end-of-stream after the response, read " + n + " bytes");
                }
                served.incrementAndGet();
                if (request == STOP) {
                    stopping = true;
                    listener.close();
                }
            } catch (IOException | RuntimeException e) {
                fail("connection", e);
            }
        }

        private void fail(String what, Exception e) {
            failed.incrementAndGet();
            if (logged.incrementAndGet() <= LOGGED_FAILURES) {
                log.println("server: " + what + " failed: " + e);
                log.flush();
            }
        }

        @Override
        public void close() throws IOException {
            stopping = true;
            listener.close();
            pool.shutdownNow();
        }
    }
}
