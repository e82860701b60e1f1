package io.hadronio.nio;

import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A selection asks only the keys that may be ready (HadronioSelector's class comment), yet keeps
 * NIO's level-triggered contract: with many idle keys registered, a pass asks none of them;
 * a key that stays ready is selected again without a new event; interest changes, cancels and
 * events on any key are seen. The nap (and with it the selector's ask-every-key safety net)
 * is an hour here, so a missed signal shows as a failure or a hang, not as a slow selection.
 * In upgrade mode (the default) a connection that never wrote stays on the kernel socket: its fd
 * is in the selector's epoll set, which reports only ready fds, so the same costs hold there.
 */
@Timeout(120)
class SelectorReadySetTest {
    private static final int IDLE = 100;
    static HadronioProvider provider;
    static int savedCap;

    @BeforeAll
    static void start() {
        provider = new HadronioProvider();
        assertTrue(provider.isAccelerated());
        savedCap = HadronioSelector.maxSleepMillis;
        HadronioSelector.maxSleepMillis = (int) TimeUnit.HOURS.toMillis(1);
    }

    @AfterAll
    static void restore() {
        HadronioSelector.maxSleepMillis = savedCap;
    }

    /** Connected pairs: [client, server end]. */
    private static List<SocketChannel[]> connect(ServerSocketChannel listener, int n) throws Exception {
        List<SocketChannel[]> pairs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            CompletableFuture<SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    return listener.accept();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            SocketChannel client = provider.openSocketChannel();
            client.connect(listener.getLocalAddress());
            pairs.add(new SocketChannel[] {client, accepted.get(30, TimeUnit.SECONDS)});
        }
        return pairs;
    }

    private static void closeAll(List<SocketChannel[]> pairs) throws Exception {
        for (SocketChannel[] p : pairs) {
            p[0].close();
            p[1].close();
        }
    }

    @Test
    void shouldAskOnlyKeysThatMayBeReadyAndStayLevelTriggered() throws Exception {
        try (ServerSocketChannel listener = provider.openServerSocketChannel()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HadronioSelector selector = (HadronioSelector) provider.openSelector()) {
            List<SocketChannel[]> pairs = connect(listener, IDLE + 1);
            try {
                List<SelectionKey> keys = new ArrayList<>();
                for (SocketChannel[] p : pairs) {
                    p[1].configureBlocking(false);
                    keys.add(p[1].register(selector, OP_READ));
                }
                // the first pass asks every new key; then idle keys cost nothing
                assertEquals(0, selector.selectNow());
                assertEquals(0, selector.selectNow());
                assertEquals(0, selector.lastPassAsked(), "keys asked by a pass with " + IDLE + " idle keys");

                SocketChannel[] active = pairs.get(IDLE / 2);
                SelectionKey activeKey = keys.get(IDLE / 2);
                active[0].write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                assertEquals(1, selector.select(10_000));
                assertEquals(java.util.Set.of(activeKey), selector.selectedKeys());
                assertTrue(selector.lastPassAsked() <= 2, "asked " + selector.lastPassAsked());

                // not read: still ready. Left in the selected set, nothing new; taken out, selected again
                assertEquals(0, selector.selectNow());
                assertTrue(selector.selectedKeys().contains(activeKey));
                selector.selectedKeys().clear();
                assertEquals(1, selector.selectNow());
                assertEquals(java.util.Set.of(activeKey), selector.selectedKeys());
                selector.selectedKeys().clear();

                // read it all: no longer selected, and the next passes ask nothing
                ByteBuffer b = ByteBuffer.allocate(16);
                assertEquals(3, active[1].read(b));
                assertEquals(0, selector.selectNow());
                assertEquals(0, selector.selectNow());
                assertTrue(selector.selectedKeys().isEmpty());
                assertEquals(0, selector.lastPassAsked());

                // an idle key's interest changes to OP_WRITE: selected at once, and again while it stays so
                SelectionKey idleKey = keys.get(3);
                idleKey.interestOps(OP_WRITE);
                assertEquals(1, selector.selectNow());
                assertEquals(OP_WRITE, idleKey.readyOps());
                selector.selectedKeys().clear();
                assertEquals(1, selector.selectNow());
                selector.selectedKeys().clear();
                idleKey.interestOps(OP_READ);
                assertEquals(0, selector.selectNow());
                assertTrue(selector.selectedKeys().isEmpty());

                // a blocking select is woken by data on a key no pass has asked for a while
                SocketChannel[] late = pairs.get(IDLE - 7);
                SelectionKey lateKey = keys.get(IDLE - 7);
                CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                    try {
                        Thread.sleep(200);
                        late[0].write(ByteBuffer.wrap(new byte[] {9}));
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                });
                assertEquals(1, selector.select());
                assertEquals(java.util.Set.of(lateKey), selector.selectedKeys());
                writer.get(10, TimeUnit.SECONDS);

                // a ready key cancelled leaves, and is not selected again
                selector.selectedKeys().clear();
                lateKey.cancel();
                assertEquals(0, selector.selectNow());
                assertFalse(selector.keys().contains(lateKey));
                assertTrue(selector.selectedKeys().isEmpty());

                // the peer closes an idle connection: end-of-stream makes its key ready
                SocketChannel[] closing = pairs.get(11);
                SelectionKey closingKey = keys.get(11);
                closing[0].close();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (!selector.selectedKeys().contains(closingKey) && System.nanoTime() < deadline) {
                    selector.select(100);
                }
                assertTrue(selector.selectedKeys().contains(closingKey));
                assertEquals(-1, closing[1].read(ByteBuffer.allocate(4)));
            } finally {
                closeAll(pairs);
            }
        }
    }

    @Test
    void shouldSeeEveryActiveKeyAmongIdleOnes() throws Exception {
        try (ServerSocketChannel listener = provider.openServerSocketChannel()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             HadronioSelector selector = (HadronioSelector) provider.openSelector()) {
            List<SocketChannel[]> pairs = connect(listener, 40);
            try {
                for (SocketChannel[] p : pairs) {
                    p[1].configureBlocking(false);
                    p[1].register(selector, OP_READ, p);
                }
                // round after round, a few connections send one byte each, the selector must report exactly those
                java.util.Random random = new java.util.Random(42);
                ByteBuffer b = ByteBuffer.allocate(8);
                for (int round = 0; round < 200; round++) {
                    java.util.Set<SocketChannel> senders = new java.util.HashSet<>();
                    int n = 1 + random.nextInt(5);
                    while (senders.size() < n) {
                        senders.add(pairs.get(random.nextInt(pairs.size()))[1]);
                    }
                    for (SocketChannel[] p : pairs) {
                        if (senders.contains(p[1])) {
                            p[0].write(ByteBuffer.wrap(new byte[] {(byte) round}));
                        }
                    }
                    java.util.Set<SocketChannel> seen = new java.util.HashSet<>();
                    while (seen.size() < n) {
                        selector.select(10_000);
                        for (SelectionKey k : selector.selectedKeys()) {
                            SocketChannel ch = (SocketChannel) k.channel();
                            assertTrue(senders.contains(ch), "selected a channel that was sent nothing, round " + round);
                            b.clear();
                            assertEquals(1, ch.read(b));
                            seen.add(ch);
                        }
                        selector.selectedKeys().clear();
                    }
                    assertEquals(0, selector.selectNow());
                }
            } finally {
                closeAll(pairs);
            }
        }
    }
}
