package io.hadronio.nio;

import static java.nio.channels.SelectionKey.OP_ACCEPT;
import static java.nio.channels.SelectionKey.OP_CONNECT;
import static java.nio.channels.SelectionKey.OP_READ;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every event that makes a key ready wakes a selection that sleeps on the event fds:
 * the selector sleeps without a nap limit here (event polling, no busy window), so a
 * missed wake-up hangs the test instead of costing a quarter second.
 */
@Timeout(60)
class SelectorWakeupTest {
    static HadronioProvider provider;
    // a second provider: its own UCX context and worker, as a peer process would have
    static HadronioProvider other;
    static int savedCap;

    @BeforeAll
    static void start() {
        String old = System.getProperty("hadronio.polling");
        System.setProperty("hadronio.polling", "event");
        try {
            provider = new HadronioProvider();
            other = new HadronioProvider();
        } finally {
            if (old == null) {
                System.clearProperty("hadronio.polling");
            } else {
                System.setProperty("hadronio.polling", old);
            }
        }
        assertTrue(provider.isAccelerated());
        assertTrue(other.isAccelerated());
        savedCap = HadronioSelector.maxSleepMillis;
        HadronioSelector.maxSleepMillis = (int) TimeUnit.HOURS.toMillis(1);
    }

    @AfterAll
    static void restore() {
        HadronioSelector.maxSleepMillis = savedCap;
    }

    private static InetSocketAddress loopback() {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);
    }

    private static SocketChannel open(java.net.SocketAddress remote) throws IOException {
        SocketChannel ch = provider.openSocketChannel();
        ch.connect(remote);
        return ch;
    }

    /** Answers each message with the same bytes, selecting without a timeout. */
    private static CompletableFuture<Long> echo(SocketChannel ch, int rounds, int size) {
        return CompletableFuture.supplyAsync(() -> {
            try (Selector selector = ch.provider().openSelector()) {
                ch.configureBlocking(false);
                ch.register(selector, OP_READ);
                ByteBuffer buf = ByteBuffer.allocate(size);
                long n = 0;
                for (int i = 0; i < rounds; i++) {
                    buf.clear();
                    while (buf.hasRemaining()) {
                        selector.select();
                        selector.selectedKeys().clear();
                        if (ch.read(buf) < 0) {
                            throw new IOException("end of stream");
                        }
                    }
                    buf.flip();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                    n++;
                }
                return n;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, runnable -> {
            Thread t = new Thread(runnable, "echo");
            t.setDaemon(true);
            t.start();
        });
    }

    /** Sends {@code rounds} messages and waits for each answer with a selector. */
    private static void pingPong(SocketChannel ch, int rounds, int size) throws IOException {
        try (Selector selector = ch.provider().openSelector()) {
            ch.configureBlocking(false);
            ch.register(selector, OP_READ);
            ByteBuffer out = ByteBuffer.allocate(size);
            ByteBuffer in = ByteBuffer.allocate(size);
            for (int i = 0; i < rounds; i++) {
                out.clear();
                out.put(0, (byte) i);
                while (out.hasRemaining()) {
                    ch.write(out);
                }
                in.clear();
                while (in.hasRemaining()) {
                    selector.select();
                    selector.selectedKeys().clear();
                    assertTrue(ch.read(in) >= 0);
                }
                assertEquals((byte) i, in.get(0));
            }
        }
    }

    @Test
    void shouldWakeForEveryMessage() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel client = open(server.getLocalAddress());
                 SocketChannel peer = server.accept()) {
                CompletableFuture<Long> echoed = echo(peer, 3000, 8);
                pingPong(client, 3000, 8);
                assertEquals(3000, echoed.get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void shouldWakeForEveryMessageBetweenTwoWorkers() throws Exception {
        try (ServerSocketChannel server = other.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel client = open(server.getLocalAddress());
                 SocketChannel peer = server.accept()) {
                CompletableFuture<Long> echoed = echo(peer, 3000, 8);
                pingPong(client, 3000, 8);
                assertEquals(3000, echoed.get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void shouldWakeWhileOtherThreadsProgressTheSameWorker() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel a = open(server.getLocalAddress());
                 SocketChannel aPeer = server.accept();
                 SocketChannel b = open(server.getLocalAddress());
                 SocketChannel bPeer = server.accept()) {
                // b's ends block in read/write: they progress the worker the selectors sleep on
                CompletableFuture<Long> blockingEcho = CompletableFuture.supplyAsync(() -> {
                    ByteBuffer buf = ByteBuffer.allocate(1000);
                    long n = 0;
                    try {
                        while (bPeer.read(buf.clear()) >= 0) {
                            buf.flip();
                            while (buf.hasRemaining()) {
                                bPeer.write(buf);
                            }
                            n++;
                        }
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                    return n;
                }, r -> new Thread(r, "blocking-echo").start());
                CompletableFuture<Void> blockingClient = CompletableFuture.runAsync(() -> {
                    ByteBuffer buf = ByteBuffer.allocate(1000);
                    try {
                        for (int i = 0; i < 2000; i++) {
                            b.write(buf.clear());
                            buf.clear();
                            while (buf.hasRemaining()) {
                                b.read(buf);
                            }
                        }
                        b.shutdownOutput();
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, r -> new Thread(r, "blocking-client").start());

                CompletableFuture<Long> echoed = echo(aPeer, 3000, 100);
                pingPong(a, 3000, 100);
                assertEquals(3000, echoed.get(30, TimeUnit.SECONDS));
                blockingClient.get(30, TimeUnit.SECONDS);
                blockingEcho.get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void shouldSeeInterestChangedByAnotherThreadWithoutAWakeup() throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel client = open(server.getLocalAddress()); SocketChannel peer = server.accept()) {
                client.configureBlocking(false);
                SelectionKey key = client.register(selector, 0);
                CompletableFuture<Integer> select = new CompletableFuture<>();
                Thread t = new Thread(() -> {
                    try {
                        select.complete(selector.select());
                    } catch (Throwable e) {
                        select.completeExceptionally(e);
                    }
                }, "select");
                t.setDaemon(true);
                t.start();
                // asleep in poll(2): only a wake-up can make it look at the key again
                while (java.util.Arrays.stream(t.getStackTrace())
                        .noneMatch(e -> e.getClassName().equals("io.hadronio.platform.PollSet"))) {
                    assertTrue(t.isAlive(), "select ended before sleeping");
                    Thread.sleep(5);
                }
                key.interestOps(SelectionKey.OP_WRITE); // no wakeup()
                assertEquals(1, select.get(30, TimeUnit.SECONDS));
                assertTrue(key.isWritable());
            }
        }
    }

    /** Waits until {@code t} sleeps in poll(2): only a wake-up can make it look at the keys again. */
    private static void awaitAsleep(Thread t) throws InterruptedException {
        while (java.util.Arrays.stream(t.getStackTrace())
                .noneMatch(e -> e.getClassName().equals("io.hadronio.platform.PollSet"))) {
            assertTrue(t.isAlive(), "select ended before sleeping");
            Thread.sleep(5);
        }
    }

    @Test
    void shouldWakeWhenAKeyThatStaysSelectedIsReadyAgain() throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel client = open(server.getLocalAddress()); SocketChannel peer = server.accept()) {
                client.configureBlocking(false);
                SelectionKey key = client.register(selector, OP_READ);
                ByteBuffer in = ByteBuffer.allocate(8);
                for (int i = 0; i < 20; i++) {
                    // the key stays selected with OP_READ ready, the bytes are read: nothing to wait for
                    CompletableFuture<Integer> select = new CompletableFuture<>();
                    Thread t = new Thread(() -> {
                        try {
                            select.complete(selector.select());
                        } catch (Throwable e) {
                            select.completeExceptionally(e);
                        }
                    }, "select");
                    t.setDaemon(true);
                    t.start();
                    awaitAsleep(t);
                    peer.write(ByteBuffer.wrap(new byte[] {(byte) i}));
                    // ready again with no new op: the selection ends and counts no key (the
                    // first time the key was not selected yet)
                    assertEquals(i == 0 ? 1 : 0, select.get(30, TimeUnit.SECONDS));
                    assertTrue(selector.selectedKeys().contains(key));
                    assertEquals(OP_READ, key.readyOps());
                    in.clear();
                    assertEquals(1, client.read(in));
                    assertEquals((byte) i, in.get(0));
                }
            }
        }
    }

    @Test
    void shouldWakeASelectionWithAnActionAndLetTheActionBlockOnTheWorker() throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback());
            try (SocketChannel a = open(server.getLocalAddress()); SocketChannel aPeer = server.accept();
                 SocketChannel b = open(server.getLocalAddress()); SocketChannel bPeer = server.accept()) {
                a.configureBlocking(false);
                SelectionKey key = a.register(selector, OP_READ);
                for (int i = 0; i < 20; i++) {
                    // the action reads a's byte, then blocks in a read of b, on the same worker
                    // the selection slept on (it runs once the selection has left the worker's
                    // waiters, so that the blocked read can watch the worker itself)
                    ByteBuffer in = ByteBuffer.allocate(2);
                    CompletableFuture<Integer> select = new CompletableFuture<>();
                    Thread t = new Thread(() -> {
                        try {
                            select.complete(selector.select(k -> {
                                try {
                                    assertEquals(1, a.read(in));
                                    assertEquals(1, b.read(in));
                                } catch (IOException e) {
                                    throw new java.io.UncheckedIOException(e);
                                }
                            }));
                        } catch (Throwable e) {
                            select.completeExceptionally(e);
                        }
                    }, "select");
                    t.setDaemon(true);
                    t.start();
                    awaitAsleep(t);
                    aPeer.write(ByteBuffer.wrap(new byte[] {(byte) i}));
                    // the action is blocked in b.read (not in a selector's poll)
                    while (java.util.Arrays.stream(t.getStackTrace()).noneMatch(e -> e.getMethodName().equals("read")
                            && e.getClassName().endsWith("HadronioSocketChannel"))) {
                        assertTrue(t.isAlive(), "the selection ended without the action");
                        Thread.sleep(5);
                    }
                    bPeer.write(ByteBuffer.wrap(new byte[] {(byte) -i}));
                    assertEquals(1, select.get(30, TimeUnit.SECONDS));
                    assertEquals((byte) i, in.get(0));
                    assertEquals((byte) -i, in.get(1));
                    assertTrue(selector.selectedKeys().isEmpty());
                    assertTrue(key.isReadable());
                }
            }
        }
    }

    @Test
    void shouldWakeForAcceptedAndFinishedConnects() throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(loopback(), 100);
            server.configureBlocking(false);
            SelectionKey acceptKey = server.register(selector, OP_ACCEPT);
            for (int i = 0; i < 50; i++) {
                try (SocketChannel client = provider.openSocketChannel()) {
                    client.configureBlocking(false);
                    SelectionKey connectKey = client.register(selector, OP_CONNECT);
                    client.connect(server.getLocalAddress());
                    SocketChannel accepted = null;
                    boolean connected = false;
                    while (accepted == null || !connected) {
                        selector.select();
                        if (acceptKey.isAcceptable() && selector.selectedKeys().contains(acceptKey)) {
                            accepted = server.accept();
                        }
                        if (connectKey.isValid() && selector.selectedKeys().contains(connectKey)
                                && connectKey.isConnectable()) {
                            connected = client.finishConnect();
                            connectKey.interestOps(0);
                        }
                        selector.selectedKeys().clear();
                    }
                    accepted.close();
                }
            }
        }
    }
}
