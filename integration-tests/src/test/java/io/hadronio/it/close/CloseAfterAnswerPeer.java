package io.hadronio.it.close;

import io.hadronio.it.ChannelPath;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Either end of {@link CloseAfterAnswerAcrossJvmsTest}: an HTTP server's keep-alive limit
 * without HTTP. A request is a length word and that many bytes, its answer the same back; a
 * length word with {@link #LAST} set is the connection's last request.
 *
 * <p>{@code server}: prints {@code PORT p}; a selector thread hands each ready connection to
 * one of 4 workers (interest off meanwhile), as Tomcat's NIO connector does; a worker reads a
 * request, writes its answer, and closes the connection right after the last one, or turns
 * the interest back on. Prints {@code ERROR} for each failed connection and {@code SERVED n}
 * when stdin closes.
 *
 * <p>{@code client PORT THREADS CONNECTIONS}: each thread opens CONNECTIONS connections one
 * after another and sends 2..7 requests of 0..4 KiB on each (pausing now and then, so that
 * upgrades go on in between), checks every answer, then sometimes reads end-of-stream and
 * sometimes closes at once (an HTTP client told "Connection: close"). Prints
 * {@code DONE connections switched} (switched: on UCX at their end) or {@code ERROR} lines.
 */
public final class CloseAfterAnswerPeer {
    static final int LAST = 0x8000_0000;

    private CloseAfterAnswerPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server();
        } else if (args[0].equals("selector-client")) {
            SelectorClient.run(new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1])), Integer.parseInt(args[2]),
                    Integer.parseInt(args[3]));
        } else {
            client(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                    args.length > 4 ? Integer.parseInt(args[4]) : 0);
        }
    }

    // ---- client ----------------------------------------------------------------------------------

    private static void client(int port, int threads, int connections, int portBase) throws Exception {
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
        AtomicInteger switched = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        List<Future<?>> runs = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            long seed = t;
            // each thread's own few client ports, when asked: every connection reuses one just freed
            int[] ports = new int[portBase > 0 ? PORTS_PER_THREAD : 0];
            for (int i = 0; i < ports.length; i++) {
                ports[i] = portBase + t * PORTS_PER_THREAD + i;
            }
            runs.add(pool.submit(() -> {
                connections(address, connections, new Random(seed), switched, ports);
                return null;
            }));
        }
        boolean failed = false;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        for (Future<?> run : runs) {
            try {
                run.get(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (Exception e) {
                failed = true;
                System.out.println("ERROR " + e);
            }
        }
        if (failed) {
            // what each thread waits in, and on which connection
            CURRENT.forEach((thread, channel) -> {
                System.out.println("ERROR " + thread.getName() + " on " + channel);
                for (StackTraceElement frame : thread.getStackTrace()) {
                    System.out.println("    at " + frame);
                }
            });
        }
        pool.shutdownNow();
        if (!failed) {
            System.out.println("DONE " + threads * connections + " " + switched.get());
        }
        System.out.flush();
        System.exit(0);
    }

    // each client thread's connection, for the report of a hang
    private static final java.util.Map<Thread, SocketChannel> CURRENT = new java.util.concurrent.ConcurrentHashMap<>();

    private static final int PORTS_PER_THREAD = 4;

    private static void connections(InetSocketAddress address, int count, Random random, AtomicInteger switched,
                                    int[] ports) throws IOException, InterruptedException {
        for (int c = 0; c < count; c++) {
            String where = "connection " + c + ", connect";
            try (SocketChannel channel = open(address, ports, c)) {
                CURRENT.put(Thread.currentThread(), channel);
                where = "connection " + c + " (port " + ((InetSocketAddress) channel.getLocalAddress()).getPort() + ")";
                int requests = 2 + random.nextInt(6);
                for (int r = 0; r < requests; r++) {
                    byte[] body = new byte[random.nextInt(4097)];
                    random.nextBytes(body);
                    ByteBuffer request = request(body, r == requests - 1);
                    String step = where + ", request " + (r + 1) + " of " + requests + " (" + ChannelPath.of(channel) + ")";
                    try {
                        while (request.hasRemaining()) {
                            channel.write(request);
                        }
                        ByteBuffer answer = ByteBuffer.allocate(4 + body.length);
                        readFully(channel, answer);
                        if (!answers(answer, body)) {
                            throw new IOException("not the request's bytes");
                        }
                    } catch (IOException e) {
                        throw new IOException(step + ": " + e, e);
                    }
                    if (random.nextInt(3) == 0) {
                        Thread.sleep(Duration.ofNanos(random.nextInt(2_000_000)));
                    }
                }
                if (ChannelPath.of(channel).startsWith("ucx")) {
                    switched.incrementAndGet();
                }
                if (random.nextBoolean()) {
                    int n = channel.read(ByteBuffer.allocate(1));
                    if (n != -1) {
                        throw new IOException(where + ": read " + n + " after the last answer, not end-of-stream");
                    }
                }
            } catch (IOException e) {
                throw e.getMessage().startsWith("connection ") ? e : new IOException(where + ": " + e, e);
            }
        }
    }

    /**
     * A connection, from one of {@code ports} when there are any: the next one that is free (a port
     * whose last connection this side closed first waits in TIME_WAIT).
     */
    private static SocketChannel open(InetSocketAddress address, int[] ports, int c) throws IOException {
        if (ports.length == 0) {
            return SocketChannel.open(address);
        }
        IOException last = null;
        for (int attempt = 0; attempt < 100 * ports.length; attempt++) {
            SocketChannel channel = SocketChannel.open();
            try {
                channel.setOption(java.net.StandardSocketOptions.SO_REUSEADDR, true);
                channel.bind(new InetSocketAddress(address.getAddress(), ports[(c + attempt) % ports.length]));
                channel.connect(address);
                return channel;
            } catch (IOException e) {
                channel.close();
                last = e;
                if (attempt % ports.length == ports.length - 1) {
                    try {
                        Thread.sleep(10);
                    } catch (InterruptedException interrupted) {
                        Thread.currentThread().interrupt();
                        throw new java.io.InterruptedIOException();
                    }
                }
            }
        }
        throw new IOException("no port of " + java.util.Arrays.toString(ports) + " was free: " + last, last);
    }

    /** A request: its body's length (with {@link #LAST} on the connection's last) and the body. */
    static ByteBuffer request(byte[] body, boolean last) {
        return ByteBuffer.allocate(4 + body.length).putInt(body.length | (last ? LAST : 0)).put(body).flip();
    }

    /** Whether a whole answer (read, not yet flipped) is the request's body back, length first. */
    static boolean answers(ByteBuffer answer, byte[] body) {
        return answer.flip().getInt() == body.length && answer.equals(ByteBuffer.wrap(body));
    }

    private static void readFully(SocketChannel channel, ByteBuffer into) throws IOException {
        while (into.hasRemaining()) {
            if (channel.read(into) < 0) {
                throw new EOFException("end-of-stream after " + into.position() + " of " + into.limit() + " bytes of the answer");
            }
        }
    }

    // ---- server ----------------------------------------------------------------------------------

    /** A connection's state on the server: the request being read, the answer being written. */
    private static final class Exchange {
        final ByteBuffer header = ByteBuffer.allocate(4);
        ByteBuffer body;
        ByteBuffer answer;
        boolean last;
    }

    private static final Queue<String> FAILURES = new ConcurrentLinkedQueue<>();
    private static final AtomicInteger SERVED = new AtomicInteger();

    private static void server() throws Exception {
        ExecutorService workers = Executors.newFixedThreadPool(4);
        try (ServerSocketChannel server = ServerSocketChannel.open(); Selector selector = Selector.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            Thread loop = new Thread(() -> select(server, selector, workers), "selector");
            loop.setDaemon(true);
            loop.start();
            while (System.in.read() >= 0) {
                // until the test is done
            }
            // connections still open: what each waits for (none should be once the clients' ends arrived)
            for (int i = 0; i < 50 && openConnections(selector) > 0; i++) {
                Thread.sleep(100);
            }
            for (SelectionKey key : Set.copyOf(selector.keys())) {
                if (key.channel() instanceof SocketChannel open && open.isOpen()) {
                    Exchange e = (Exchange) key.attachment();
                    FAILURES.add("open at the end: " + open + " interest " + (key.isValid() ? key.interestOps() : -1)
                            + ", header " + e.header.position() + ", body " + (e.body == null ? "-" : e.body.position()
                            + "/" + e.body.limit()) + ", answer " + (e.answer == null ? "-" : e.answer.position()
                            + "/" + e.answer.limit()));
                }
            }
        }
        FAILURES.forEach(f -> System.out.println("ERROR " + f));
        System.out.println("SERVED " + SERVED.get());
        System.out.flush();
        System.exit(0);
    }

    private static long openConnections(Selector selector) {
        return Set.copyOf(selector.keys()).stream().filter(k -> k.channel() instanceof SocketChannel c && c.isOpen()).count();
    }

    private static void select(ServerSocketChannel server, Selector selector, ExecutorService workers) {
        try {
            while (selector.isOpen()) {
                selector.select();
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (!key.isValid()) {
                        continue;
                    }
                    if (key.isAcceptable()) {
                        SocketChannel accepted;
                        while ((accepted = server.accept()) != null) {
                            accepted.configureBlocking(false);
                            accepted.register(selector, SelectionKey.OP_READ, new Exchange());
                        }
                        continue;
                    }
                    key.interestOps(0);
                    workers.execute(() -> work(key, selector));
                }
            }
        } catch (IOException | java.nio.channels.ClosedSelectorException e) {
            if (selector.isOpen()) {
                FAILURES.add("selector: " + e);
            }
        }
    }

    private static void work(SelectionKey key, Selector selector) {
        SocketChannel channel = (SocketChannel) key.channel();
        Exchange exchange = (Exchange) key.attachment();
        try {
            while (true) {
                if (exchange.answer == null && !readRequest(channel, exchange)) {
                    if (channel.isOpen()) {
                        key.interestOps(SelectionKey.OP_READ);
                        selector.wakeup();
                    }
                    return;
                }
                channel.write(exchange.answer);
                if (exchange.answer.hasRemaining()) {
                    key.interestOps(SelectionKey.OP_WRITE);
                    selector.wakeup();
                    return;
                }
                exchange.answer = null;
                SERVED.incrementAndGet();
                if (exchange.last) {
                    channel.close();
                    return;
                }
            }
        } catch (IOException | RuntimeException e) {
            FAILURES.add(e.toString());
            try {
                channel.close();
            } catch (IOException ignored) {
                // it failed already
            }
        }
    }

    /** True once a whole request is in and its answer ready; a client's end-of-stream between requests closes. */
    private static boolean readRequest(SocketChannel channel, Exchange exchange) throws IOException {
        if (exchange.body == null) {
            if (channel.read(exchange.header) < 0) {
                if (exchange.header.position() > 0) {
                    throw new EOFException("end-of-stream inside a request's length");
                }
                channel.close();
                return false;
            }
            if (exchange.header.hasRemaining()) {
                return false;
            }
            int length = exchange.header.flip().getInt();
            exchange.last = (length & LAST) != 0;
            exchange.body = ByteBuffer.allocate(length & ~LAST);
        }
        if (channel.read(exchange.body) < 0) {
            throw new EOFException("end-of-stream inside a request");
        }
        if (exchange.body.hasRemaining()) {
            return false;
        }
        exchange.answer = ByteBuffer.allocate(4 + exchange.body.limit()).putInt(exchange.body.limit())
                .put(exchange.body.flip()).flip();
        exchange.header.clear();
        exchange.body = null;
        return true;
    }
}
