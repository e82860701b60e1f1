package io.hadronio.it.soak;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * The JVMs of {@link SoakTest}, plain NIO applications. Every line meant for the test
 * starts with {@code @}; one {@code @END} line per connection side (see
 * {@link SoakConnection#result()}).
 * <ul>
 * <li>{@code server SEED MAX_MESSAGES}: listens on two loopback ports, printed as
 *     {@code @PORTS blocking selector}: one served thread-per-connection with blocking
 *     channels, one by a single thread on a selector with non-blocking ones. A
 *     connection's first 8 bytes are its id ({@code @ACCEPT id}); from it the server
 *     knows its {@link SoakPlan}. A connection that ends before its id prints
 *     {@code @HEADERLESS nanos why}. {@code STATS} on stdin answers
 *     {@code @STATS open accepted maxOpen}; exits when stdin closes.</li>
 * <li>{@code client BLOCKING_PORT SELECTOR_PORT INCARNATION SLOTS SEED MAX_MESSAGES}: SLOTS
 *     connections at once, slot {@code s} blocking when s is even (else on this JVM's one
 *     selector), to the server's blocking port when {@code s / 2} is even (else its
 *     selector port): every pairing of blocking and non-blocking. All connect first
 *     ({@code @CONNECTED n}), then wait for {@code GO}; each slot runs one connection after
 *     the other (generation 0, 1, ...) until {@code STOP}, finishes the one it runs, and
 *     when every slot has, the JVM prints {@code @DONE connections} and exits.</li>
 * </ul>
 * An unexpected failure prints {@code @ERROR ...} (the JVM goes on where it can).
 */
public final class SoakPeer {
    private SoakPeer() {
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) {
        try {
            switch (args[0]) {
                case "server" -> server(Long.parseLong(args[1]), Integer.parseInt(args[2]));
                case "client" -> client(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]),
                        Integer.parseInt(args[4]), Long.parseLong(args[5]), Integer.parseInt(args[6]));
                default -> throw new IllegalArgumentException("unknown mode " + args[0]);
            }
        } catch (Throwable t) {
            say("@ERROR " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(3);
        }
    }

    private static void watchStdin(Consumer<String> command) {
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    command.accept(line.trim());
                }
            } catch (IOException e) {
                say("@ERROR stdin " + e);
            }
            // the test closed our stdin: it is done with us
            System.exit(0);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
    }

    // ---- server ---------------------------------------------------------------------------------

    private static final AtomicInteger OPEN = new AtomicInteger();
    private static final AtomicInteger MAX_OPEN = new AtomicInteger();
    private static final AtomicLong ACCEPTED = new AtomicLong();

    private static void opened() {
        ACCEPTED.incrementAndGet();
        MAX_OPEN.accumulateAndGet(OPEN.incrementAndGet(), Math::max);
    }

    private static void server(long seed, int maxMessages) throws IOException {
        InetSocketAddress any = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
        ServerSocketChannel blocking = ServerSocketChannel.open().bind(any, 1024);
        ServerSocketChannel nonBlocking = ServerSocketChannel.open().bind(any, 1024);
        Selector selector = Selector.open();
        nonBlocking.configureBlocking(false);
        nonBlocking.register(selector, SelectionKey.OP_ACCEPT);
        watchStdin(line -> {
            if (line.equals("STATS")) {
                say("@STATS " + OPEN.get() + " " + ACCEPTED.get() + " " + MAX_OPEN.get());
            }
        });
        Thread acceptor = new Thread(() -> {
            while (true) {
                try {
                    SocketChannel ch = blocking.accept();
                    opened();
                    Thread t = new Thread(() -> serveBlocking(ch, seed, maxMessages), "soak-conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    // an application's accept loop goes on; the test fails on the line
                    say("@ERROR accept " + e);
                }
            }
        }, "soak-acceptor");
        acceptor.setDaemon(true);
        acceptor.start();
        say("@PORTS " + port(blocking) + " " + port(nonBlocking));
        serveSelector(selector, nonBlocking, seed, maxMessages);
    }

    private static int port(ServerSocketChannel server) throws IOException {
        return ((InetSocketAddress) server.getLocalAddress()).getPort();
    }

    private static void serveBlocking(SocketChannel ch, long seed, int maxMessages) {
        try {
            ByteBuffer header = ByteBuffer.allocate(8);
            while (header.hasRemaining()) {
                if (ch.read(header) < 0) {
                    say("@HEADERLESS " + System.nanoTime() + " b end of stream after " + header.position() + " bytes");
                    ch.close();
                    return;
                }
            }
            SoakConnection c = accepted(ch, header, seed, maxMessages, true);
            c.runBlocking();
            say(c.result());
        } catch (IOException e) {
            say("@HEADERLESS " + System.nanoTime() + " b " + e);
            closeQuietly(ch);
        } catch (InterruptedException e) {
            say("@ERROR interrupted");
        } finally {
            OPEN.decrementAndGet();
        }
    }

    private static SoakConnection accepted(SocketChannel ch, ByteBuffer header, long seed, int maxMessages,
                                           boolean blocking) {
        long id = header.getLong(0);
        say("@ACCEPT " + id);
        return new SoakConnection(ch, SoakPlan.of(seed, id, maxMessages), seed, false, blocking);
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            say("@ERROR close " + e);
        }
    }

    private static void serveSelector(Selector selector, ServerSocketChannel server, long seed, int maxMessages)
            throws IOException {
        while (true) {
            selector.select();
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                if (key.channel() == server) {
                    SocketChannel ch;
                    while ((ch = server.accept()) != null) {
                        opened();
                        ch.configureBlocking(false);
                        ch.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(8));
                    }
                    continue;
                }
                SocketChannel ch = (SocketChannel) key.channel();
                if (key.attachment() instanceof ByteBuffer header) {
                    // a new connection's id, read alone: its stream is the connection's business
                    try {
                        if (ch.read(header) < 0) {
                            say("@HEADERLESS " + System.nanoTime() + " n end of stream after " + header.position()
                                    + " bytes");
                            closeQuietly(ch);
                            OPEN.decrementAndGet();
                        } else if (!header.hasRemaining()) {
                            SoakConnection c = accepted(ch, header, seed, maxMessages, false);
                            key.attach(c);
                            if (c.start(key)) {
                                ended(c);
                            }
                        }
                    } catch (IOException e) {
                        say("@HEADERLESS " + System.nanoTime() + " n " + e);
                        closeQuietly(ch);
                        OPEN.decrementAndGet();
                    }
                } else if (key.attachment() instanceof SoakConnection c && c.step(key)) {
                    ended(c);
                }
            }
        }
    }

    private static void ended(SoakConnection c) {
        say(c.result());
        OPEN.decrementAndGet();
    }

    // ---- client ---------------------------------------------------------------------------------

    private static volatile boolean stop;
    private static final CountDownLatch GO = new CountDownLatch(1);

    /** One of the client's connection slots: its generation and, while it connects, its channel. */
    private static final class Slot {
        final int index;
        final InetSocketAddress server;
        int generation;
        SocketChannel connecting;

        Slot(int index, InetSocketAddress server) {
            this.index = index;
            this.server = server;
        }

        long id(int incarnation) {
            return SoakPlan.id(incarnation, index, generation);
        }
    }

    private static void client(int blockingPort, int selectorPort, int incarnation, int slots, long seed,
                               int maxMessages) throws Exception {
        if (incarnation == 0 && java.nio.channels.spi.SelectorProvider.provider()
                instanceof io.hadronio.HadronioProvider hadronio) {
            // the warm-up makes what is made lazily before the server's baseline, UCX's endpoint
            // (and its timer fd) included: its connections must reach UCX, so its runtime starts
            // before they are made (a fresh JVM's first connections run on kernel TCP until it has)
            hadronio.isAccelerated();
        }
        Selector selector = Selector.open();
        watchStdin(line -> {
            if (line.equals("GO")) {
                GO.countDown();
            } else if (line.equals("STOP")) {
                stop = true;
                selector.wakeup();
            }
        });
        CountDownLatch connected = new CountDownLatch(slots);
        AtomicLong connections = new AtomicLong();
        List<Thread> threads = new ArrayList<>();
        List<Slot> selectorSlots = new ArrayList<>();
        for (int s = 0; s < slots; s++) {
            InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    (s / 2) % 2 == 0 ? blockingPort : selectorPort);
            Slot slot = new Slot(s, server);
            if (s % 2 == 1) {
                selectorSlots.add(slot);
                continue;
            }
            Thread t = new Thread(() -> {
                try {
                    SocketChannel ch = SocketChannel.open(server);
                    connected.countDown();
                    GO.await();
                    while (true) {
                        SoakPlan plan = SoakPlan.of(seed, slot.id(incarnation), maxMessages);
                        SoakConnection c = new SoakConnection(ch, plan, seed, true, true);
                        c.runBlocking();
                        say(c.result());
                        connections.incrementAndGet();
                        if (stop) {
                            return;
                        }
                        slot.generation++;
                        ch = SocketChannel.open(server);
                    }
                } catch (Exception e) {
                    say("@ERROR slot " + slot.index + " generation " + slot.generation + ": " + e);
                }
            }, "soak-slot-" + s);
            t.setDaemon(true);
            t.start();
            threads.add(t);
        }
        Thread selectorThread = new Thread(() -> {
            try {
                connections.addAndGet(runSelectorSlots(selector, selectorSlots, connected, incarnation, seed,
                        maxMessages));
            } catch (Exception e) {
                say("@ERROR selector: " + e);
            }
        }, "soak-selector");
        selectorThread.start();
        threads.add(selectorThread);
        connected.await();
        say("@CONNECTED " + slots);
        for (Thread t : threads) {
            t.join();
        }
        say("@DONE " + connections.get());
        System.exit(0);
    }

    /** The selector's slots, all on this thread: connect, wait for GO, run connection after connection. */
    private static long runSelectorSlots(Selector selector, List<Slot> slots, CountDownLatch connected,
                                         int incarnation, long seed, int maxMessages) throws Exception {
        int pending = slots.size();
        for (Slot slot : slots) {
            if (connect(selector, slot)) {
                connected.countDown();
                pending--;
            }
        }
        while (pending > 0) {
            selector.select();
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                if (key.isConnectable()) {
                    finishConnect(key);
                    key.interestOps(0);
                    connected.countDown();
                    pending--;
                }
            }
        }
        GO.await();
        int running = 0;
        long connections = 0;
        for (Slot slot : slots) {
            running += begin(selector, slot, incarnation, seed, maxMessages) ? 1 : 0;
        }
        while (running > 0 || slots.stream().anyMatch(s -> s.connecting != null)) {
            selector.select();
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                if (key.attachment() instanceof Slot slot) {
                    if (key.isConnectable()) {
                        finishConnect(key);
                        running += begin(selector, slot, incarnation, seed, maxMessages) ? 1 : 0;
                    }
                } else if (key.attachment() instanceof Running r && r.connection.step(key)) {
                    say(r.connection.result());
                    connections++;
                    running--;
                    if (!stop) {
                        r.slot.generation++;
                        if (connect(selector, r.slot)) {
                            running += begin(selector, r.slot, incarnation, seed, maxMessages) ? 1 : 0;
                        }
                    }
                }
            }
        }
        return connections;
    }

    private record Running(Slot slot, SoakConnection connection) {
    }

    /** Starts a non-blocking connect; true when it connected at once (no OP_CONNECT to wait for). */
    private static boolean connect(Selector selector, Slot slot) throws IOException {
        SocketChannel ch = SocketChannel.open();
        ch.configureBlocking(false);
        slot.connecting = ch;
        boolean now = ch.connect(slot.server);
        ch.register(selector, now ? 0 : SelectionKey.OP_CONNECT, slot);
        return now;
    }

    private static void finishConnect(SelectionKey key) throws IOException {
        if (!((SocketChannel) key.channel()).finishConnect()) {
            throw new IOException("OP_CONNECT but finishConnect() returned false");
        }
    }

    /** A connected slot's connection starts; false when it ended at once. */
    private static boolean begin(Selector selector, Slot slot, int incarnation, long seed, int maxMessages) {
        SocketChannel ch = slot.connecting;
        slot.connecting = null;
        SoakConnection c = new SoakConnection(ch, SoakPlan.of(seed, slot.id(incarnation), maxMessages), seed, true,
                false);
        SelectionKey key = ch.keyFor(selector);
        key.attach(new Running(slot, c));
        if (c.start(key)) {
            say(c.result());
            return false;
        }
        return true;
    }
}
