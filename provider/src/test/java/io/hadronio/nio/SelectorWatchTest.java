package io.hadronio.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two selectors whose connections share one UCX worker, one busy and one idle (JGroups runs
 * two per member: TCP_NIO2's and FD_SOCK2's). The worker has one event fd and one thread at a
 * time watches it (see {@code Waiters}). Regression: the busy selector handed the watch to the
 * idle one every time it left a selection with a key ready, so each message woke the idle
 * selector first, which then woke the busy one: two wake-ups per message, each a context switch.
 * Now the watch stays with, and follows, the selector that has the traffic; the idle one is
 * still woken for its own messages, also while the busy selector's thread stays away.
 */
@Timeout(120)
class SelectorWatchTest {
    private static final int ROUND_TRIPS = 2_000;

    private HadronioProvider provider;
    private HadronioProvider peers;
    private ServerSocketChannel server;
    private SocketChannel busy;
    private SocketChannel idle;
    private SocketChannel busyPeer;
    private SocketChannel idlePeer;
    private HadronioSelector busySelector;
    private HadronioSelector idleSelector;

    @BeforeEach
    void connect() throws IOException {
        // selectors that sleep at once instead of spinning first (the selector loops of an
        // application whose threads share a core yield it, and sleep, as soon as they can)
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.upgrade", "false");
        p.setProperty("hadronio.polling", "event");
        provider = new HadronioProvider(HadronioConfig.from(p));
        // the peers on a worker of their own (another provider instance), so that a send does
        // not complete the receive inside the call
        p.setProperty("hadronio.polling", "adaptive");
        peers = new HadronioProvider(HadronioConfig.from(p));
        server = peers.openServerSocketChannel();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        busy = provider.openSocketChannel();
        busy.connect(server.getLocalAddress());
        busyPeer = server.accept();
        idle = provider.openSocketChannel();
        idle.connect(server.getLocalAddress());
        idlePeer = server.accept();
        busySelector = (HadronioSelector) provider.openSelector();
        idleSelector = (HadronioSelector) provider.openSelector();
        busy.configureBlocking(false).register(busySelector, SelectionKey.OP_READ);
        idle.configureBlocking(false).register(idleSelector, SelectionKey.OP_READ);
    }

    @AfterEach
    void close() throws IOException {
        for (AutoCloseable c : new AutoCloseable[] {busySelector, idleSelector, busy, idle, busyPeer, idlePeer, server}) {
            try {
                if (c != null) {
                    c.close();
                }
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    @Test
    void shouldNotWakeAnIdleSelectorForAnotherSelectorsMessages() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch idleRead = new CountDownLatch(1);
        CompletableFuture<Void> idleLoop = idleLoop(stop, idleRead);
        // a selector loop that echoes every message on the busy connection
        CompletableFuture<Void> busyLoop = CompletableFuture.runAsync(() -> echoLoop(stop, null),
                r -> new Thread(r, "busy-selector").start());
        pingPong(100);                      // both loops are selecting
        long before = idleSelector.wakeUps();
        pingPong(ROUND_TRIPS);
        long wakes = idleSelector.wakeUps() - before;
        System.out.println("idle selector woke up " + wakes + " times during " + ROUND_TRIPS + " round trips of the busy one");
        assertTrue(wakes < ROUND_TRIPS / 10, "the idle selector was woken " + wakes + " times");

        // and it is still woken for its own message
        idlePeer.write(ByteBuffer.wrap(new byte[] {42}));
        assertTrue(idleRead.await(30, TimeUnit.SECONDS), "the idle selector did not see its message");
        stop.set(true);
        busySelector.wakeup();
        idleSelector.wakeup();
        busyLoop.get(30, TimeUnit.SECONDS);
        idleLoop.get(30, TimeUnit.SECONDS);
    }

    @Test
    void shouldWakeTheIdleSelectorWhileTheBusySelectorsThreadStaysAway() throws Exception {
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch idleRead = new CountDownLatch(1);
        CountDownLatch away = new CountDownLatch(1);
        CountDownLatch comeBack = new CountDownLatch(1);
        CompletableFuture<Void> idleLoop = idleLoop(stop, idleRead);
        CompletableFuture<Void> busyLoop = CompletableFuture.runAsync(() -> echoLoop(stop, () -> {
            // after the last echo, the busy loop's thread does something else for a long time
            away.countDown();
            try {
                comeBack.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }), r -> new Thread(r, "busy-selector").start());
        pingPong(200);
        busyPeer.write(ByteBuffer.wrap(new byte[] {-1}));   // "go away" (the loop does not answer it)
        assertTrue(away.await(30, TimeUnit.SECONDS));
        Thread.sleep(50);                   // the busy selector left with the watch and stays out
        idlePeer.write(ByteBuffer.wrap(new byte[] {42}));
        boolean seen = idleRead.await(30, TimeUnit.SECONDS);
        assertEquals(1, comeBack.getCount(), "the busy loop's thread came back");
        comeBack.countDown();
        assertTrue(seen, "the idle selector missed its message while the busy one stayed away");
        stop.set(true);
        busySelector.wakeup();
        idleSelector.wakeup();
        busyLoop.get(30, TimeUnit.SECONDS);
        idleLoop.get(30, TimeUnit.SECONDS);
    }

    private CompletableFuture<Void> idleLoop(AtomicBoolean stop, CountDownLatch read) {
        return CompletableFuture.runAsync(() -> {
            try {
                ByteBuffer b = ByteBuffer.allocate(16);
                while (!stop.get()) {
                    if (idleSelector.select() > 0) {
                        idleSelector.selectedKeys().clear();
                        b.clear();
                        if (idle.read(b) > 0) {
                            read.countDown();
                        }
                    }
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, r -> new Thread(r, "idle-selector").start());
    }

    /** Echoes 8-byte messages on the busy connection; a 1-byte message runs {@code onAway} once. */
    private void echoLoop(AtomicBoolean stop, Runnable onAway) {
        try {
            ByteBuffer b = ByteBuffer.allocateDirect(8);
            while (!stop.get()) {
                if (busySelector.select() == 0) {
                    continue;
                }
                busySelector.selectedKeys().clear();
                int n = busy.read(b);
                if (n == 1 && b.position() == 1 && b.get(0) == -1) {
                    b.clear();
                    if (onAway != null) {
                        onAway.run();
                    }
                    continue;
                }
                if (!b.hasRemaining()) {
                    b.flip();
                    while (b.hasRemaining()) {
                        busy.write(b);
                    }
                    b.clear();
                }
            }
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    private void pingPong(int times) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(8);
        for (int i = 0; i < times; i++) {
            b.clear().putLong(0, i);
            while (b.hasRemaining()) {
                busyPeer.write(b);
            }
            b.clear();
            while (b.hasRemaining()) {
                busyPeer.read(b);
            }
            assertEquals(i, b.getLong(0));
            assertFalse(Thread.currentThread().isInterrupted());
        }
    }
}
