package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The selector and non-blocking channels, both ends in one JVM. */
@Timeout(60)
class InProcessSelectorTest {
    static HadronioProvider provider;

    @BeforeAll
    static void start() {
        provider = new HadronioProvider();
        assertTrue(provider.isAccelerated());
    }

    /** A selector-driven echo server for one connection; returns bytes echoed. */
    private static long echoServer(ServerSocketChannel server) throws Exception {
        try (Selector selector = provider.openSelector()) {
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            ByteBuffer buf = ByteBuffer.allocateDirect(50_000);
            long total = 0;
            while (true) {
                selector.select(5000);
                for (var it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (key.isAcceptable()) {
                        SocketChannel peer = server.accept();
                        peer.configureBlocking(false);
                        peer.register(selector, SelectionKey.OP_READ);
                    } else if (key.isReadable()) {
                        SocketChannel peer = (SocketChannel) key.channel();
                        int n = peer.read(buf);
                        if (n < 0) {
                            peer.close();
                            return total;
                        }
                        buf.flip();
                        total += buf.remaining();
                        while (buf.hasRemaining()) {
                            if (peer.write(buf) == 0) {
                                // back-pressure: wait until writable, still echoing in order
                                peer.register(selector, SelectionKey.OP_WRITE);
                                selector.select(1000);
                                selector.selectedKeys().clear();
                                peer.register(selector, SelectionKey.OP_READ);
                            }
                        }
                        buf.clear();
                    }
                }
            }
        }
    }

    @Test
    void shouldEchoThroughSelectorsWithNonBlockingConnect() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<Long> echoed = new CompletableFuture<>();
            Thread t = new Thread(() -> {
                try {
                    echoed.complete(echoServer(server));
                } catch (Throwable e) {
                    echoed.completeExceptionally(e);
                }
            });
            t.setDaemon(true);
            t.start();

            int size = 2 * 1024 * 1024 + 3;
            byte[] data = new byte[size];
            new Random(7).nextBytes(data);
            ByteBuffer out = ByteBuffer.wrap(data);
            ByteBuffer in = ByteBuffer.allocate(size);
            try (Selector selector = provider.openSelector(); SocketChannel client = provider.openSocketChannel()) {
                client.configureBlocking(false);
                boolean connected = client.connect(server.getLocalAddress());
                SelectionKey key = client.register(selector, connected ? SelectionKey.OP_READ | SelectionKey.OP_WRITE
                        : SelectionKey.OP_CONNECT);
                while (in.hasRemaining()) {
                    assertTrue(selector.select(10_000) >= 0);
                    selector.selectedKeys().clear();
                    if (key.isConnectable()) {
                        assertTrue(client.finishConnect());
                        key.interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                        continue;
                    }
                    if (key.isWritable()) {
                        client.write(out);
                        if (!out.hasRemaining()) {
                            key.interestOps(SelectionKey.OP_READ);
                        }
                    }
                    if (key.isReadable()) {
                        assertTrue(client.read(in) >= 0);
                    }
                }
                assertArrayEquals(data, in.array());
                client.shutdownOutput();
                assertEquals(size, echoed.get(30, TimeUnit.SECONDS));
            }
        }
    }

    @Test
    void shouldWakeUpABlockedSelectAndReturnAtOnceAfterAnEarlierWakeup() throws Exception {
        try (Selector selector = provider.openSelector()) {
            selector.wakeup();
            assertEquals(0, selector.select()); // returns at once
            CompletableFuture<Integer> blocked = CompletableFuture.supplyAsync(() -> {
                try {
                    return selector.select();
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            Thread.sleep(200);
            assertFalse(blocked.isDone());
            selector.wakeup();
            assertEquals(0, blocked.get(5, TimeUnit.SECONDS));
        }
    }

    @Test
    void shouldSelectJdkDatagramChannelsAlongsideOurs() throws Exception {
        try (Selector selector = provider.openSelector(); DatagramChannel a = DatagramChannel.open();
             DatagramChannel b = DatagramChannel.open()) {
            a.bind(new InetSocketAddress("127.0.0.1", 0));
            b.configureBlocking(false);
            b.bind(new InetSocketAddress("127.0.0.1", 0));
            SelectionKey key = b.register(selector, SelectionKey.OP_READ);
            assertEquals(0, selector.selectNow());
            a.send(ByteBuffer.wrap(new byte[] {1, 2, 3}), b.getLocalAddress());
            assertEquals(1, selector.select(5000));
            assertTrue(selector.selectedKeys().contains(key));
            assertTrue(key.isReadable());
            assertThrows(UnsupportedOperationException.class, () -> selector.selectedKeys().add(key));
            assertThrows(UnsupportedOperationException.class, () -> selector.keys().remove(key));
            key.cancel();
            selector.selectNow();
            assertFalse(selector.keys().contains(key));
        }
    }
}
