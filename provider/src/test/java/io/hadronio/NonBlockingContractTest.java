package io.hadronio;

import static java.nio.channels.SelectionKey.OP_ACCEPT;
import static java.nio.channels.SelectionKey.OP_CONNECT;
import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.Pipe;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.HashSet;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Non-blocking channels and the exactness of readiness, on the JDK's provider and on
 * hadroNIO: a key is ready for an operation exactly when that operation makes progress
 * (or fails) instead of doing nothing.
 */
@Timeout(30)
class NonBlockingContractTest extends ContractSupport {
    // what a receiver that does not read may make a sender buffer, at most (kernel: a few MiB)
    private static final long BACK_PRESSURE_BOUND = 64L << 20;

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeAcceptableOnlyWhenAcceptReturnsAChannel(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0), 16);
            server.configureBlocking(false);
            SelectionKey key = server.register(selector, OP_ACCEPT);
            assertNull(server.accept());
            assertEquals(0, selector.selectNow());

            Set<SocketChannel> clients = new HashSet<>();
            Set<SocketChannel> accepted = new HashSet<>();
            try {
                for (int i = 0; i < 3; i++) {
                    SocketChannel client = provider.openSocketChannel();
                    clients.add(client);
                    client.connect(server.getLocalAddress());
                }
                while (accepted.size() < 3) {
                    awaitReady(selector, key, OP_ACCEPT);
                    selector.selectedKeys().clear();
                    // ready: accept returns at least one channel
                    SocketChannel ch = server.accept();
                    assertNotNull(ch, "OP_ACCEPT but accept() returned null");
                    do {
                        assertTrue(ch.isConnected());
                        accepted.add(ch);
                    } while ((ch = server.accept()) != null);
                }
                assertNull(server.accept());
                assertEquals(0, selector.selectNow());
                assertTrue(selector.selectedKeys().isEmpty());
            } finally {
                for (SocketChannel ch : clients) {
                    ch.close();
                }
                for (SocketChannel ch : accepted) {
                    ch.close();
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeConnectableWhenFinishConnectCompletes(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel();
             SocketChannel client = provider.openSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            client.configureBlocking(false);
            assertThrows(NoConnectionPendingException.class, client::finishConnect);
            SelectionKey key = client.register(selector, OP_CONNECT);
            if (!client.connect(server.getLocalAddress())) {
                assertTrue(client.isConnectionPending());
                awaitReady(selector, key, OP_CONNECT);
                assertTrue(client.finishConnect(), "OP_CONNECT but finishConnect() returned false");
            }
            assertTrue(client.isConnected());
            assertFalse(client.isConnectionPending());
            assertTrue(client.finishConnect());
            key.interestOps(OP_WRITE);
            selector.selectedKeys().clear();
            awaitReady(selector, key, OP_WRITE);
            assertEquals(3, client.write(ByteBuffer.wrap(new byte[] {1, 2, 3})));
            try (SocketChannel peer = server.accept()) {
                ByteBuffer in = ByteBuffer.allocate(3);
                while (in.hasRemaining()) {
                    assertTrue(peer.read(in) >= 0);
                }
                assertArrayEquals(new byte[] {1, 2, 3}, in.array());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeConnectableWhenFinishConnectFails(SelectorProvider provider) throws Exception {
        SocketAddress closedPort;
        try (ServerSocketChannel gone = provider.openServerSocketChannel()) {
            gone.bind(new InetSocketAddress(LOOPBACK, 0));
            closedPort = gone.getLocalAddress();
        }
        try (Selector selector = provider.openSelector(); SocketChannel client = provider.openSocketChannel()) {
            client.configureBlocking(false);
            SelectionKey key = client.register(selector, OP_CONNECT);
            boolean connected;
            try {
                connected = client.connect(closedPort);
            } catch (ConnectException e) {
                return; // refused at once: allowed, and nothing to select
            }
            assertFalse(connected);
            awaitReady(selector, key, OP_CONNECT);
            assertThrows(ConnectException.class, client::finishConnect);
            assertFalse(client.isOpen());
            assertFalse(key.isValid());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldCloseAConnectionThatWasReadyButNeverFinishedAsAnOrderlyClose(SelectorProvider provider)
            throws Exception {
        try (Selector selector = provider.openSelector(); ServerSocketChannel server = provider.openServerSocketChannel();
             SocketChannel client = provider.openSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            client.configureBlocking(false);
            SelectionKey key = client.register(selector, OP_CONNECT);
            if (client.connect(server.getLocalAddress())) {
                return; // connected at once: nothing pending to close
            }
            awaitReady(selector, key, OP_CONNECT);
            try (SocketChannel peer = server.accept()) {
                client.close(); // without finishConnect
                assertFalse(client.isOpen());
                selector.selectNow(); // the JDK closes a registered channel's socket when it deregisters
                assertEquals(-1, peer.read(ByteBuffer.allocate(1)));
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeReadableExactlyWhenReadReturnsBytes(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            ByteBuffer in = ByteBuffer.allocate(100);
            assertEquals(0, c.client().read(in));
            assertEquals(0, selector.selectNow());

            c.server().write(ByteBuffer.wrap(new byte[] {1, 2, 3, 4, 5}));
            int total = 0;
            while (total < 5) {
                awaitReady(selector, key, OP_READ);
                selector.selectedKeys().clear();
                int n = c.client().read(in);
                assertTrue(n > 0, "OP_READ but read() returned " + n);
                total += n;
            }
            assertEquals(0, c.client().read(in));
            assertEquals(0, selector.selectNow());
            assertArrayEquals(new byte[] {1, 2, 3, 4, 5}, java.util.Arrays.copyOf(in.array(), 5));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeReadableAtEndOfStream(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            c.server().write(ByteBuffer.wrap(new byte[] {9}));
            c.server().shutdownOutput();
            ByteBuffer in = ByteBuffer.allocate(10);
            int n;
            do {
                awaitReady(selector, key, OP_READ);
                selector.selectedKeys().clear();
                n = c.client().read(in);
                assertTrue(n != 0, "OP_READ but read() returned 0");
            } while (n > 0);
            assertEquals(1, in.position());
            // end-of-stream stays readable
            assertEquals(1, selector.selectNow());
            assertEquals(-1, c.client().read(in));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeReadableWhenTheConnectionWasReset(SelectorProvider provider) throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_READ);
            c.server().setOption(StandardSocketOptions.SO_LINGER, 0);
            c.server().close(); // abortive: RST
            awaitReady(selector, key, OP_READ);
            assertThrows(IOException.class, () -> c.client().read(ByteBuffer.allocate(10)));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldBeWritableExactlyWhenWriteTakesBytesAndStopAWriterWhoseReaderDoesNotRead(SelectorProvider provider)
            throws Exception {
        try (Selector selector = provider.openSelector(); Connected c = connect(provider)) {
            c.client().configureBlocking(false);
            SelectionKey key = c.client().register(selector, OP_WRITE);
            ByteBuffer out = ByteBuffer.allocate(256 * 1024);
            long written = 0;
            // fill until the receiver's window and ours are full: write returns 0 and the key is not writable
            while (true) {
                int n;
                while ((n = c.client().write(pattern(out, written))) > 0) {
                    written += n;
                    assertTrue(written < BACK_PRESSURE_BOUND, "a receiver that does not read made us buffer "
                            + written + " bytes");
                }
                assertEquals(0, n);
                selector.selectedKeys().clear();
                if (selector.selectNow() == 0) {
                    break;
                }
                // writable again (space freed meanwhile): then write must take bytes
                n = c.client().write(pattern(out, written));
                assertTrue(n > 0, "OP_WRITE but write() returned 0");
                written += n;
            }
            assertTrue(written > 0);
            // writing on: the kernel may find a little more room (windows grow), but never without bound
            for (int i = 0; i < 100; i++) {
                written += c.client().write(pattern(out, written));
            }
            assertTrue(written < BACK_PRESSURE_BOUND, "a receiver that does not read made us buffer "
                    + written + " bytes");

            // the receiver reads everything: the writer becomes writable and the bytes are all there, in order
            ByteBuffer in = ByteBuffer.allocate(64 * 1024);
            long read = 0;
            while (read < written) {
                in.clear();
                int n = c.server().read(in);
                assertTrue(n > 0);
                for (int i = 0; i < n; i++) {
                    if (in.get(i) != at(read + i)) {
                        throw new AssertionError("byte " + (read + i) + " differs");
                    }
                }
                read += n;
            }
            awaitReady(selector, key, OP_WRITE);
            assertTrue(c.client().write(pattern(out, written)) > 0);
        }
    }

    private static byte at(long i) {
        return (byte) (i * 31 + (i >>> 11));
    }

    private static ByteBuffer pattern(ByteBuffer buf, long from) {
        buf.clear();
        for (int i = 0; i < buf.capacity(); i++) {
            buf.put(i, at(from + i));
        }
        return buf;
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldSelectDatagramChannelsAndPipesAlongsideSocketChannels(SelectorProvider provider) throws Exception {
        Pipe pipe = provider.openPipe();
        try (Selector selector = provider.openSelector(); Connected c = connect(provider);
             DatagramChannel sender = provider.openDatagramChannel();
             DatagramChannel receiver = provider.openDatagramChannel();
             Pipe.SourceChannel source = pipe.source(); Pipe.SinkChannel sink = pipe.sink()) {
            receiver.bind(new InetSocketAddress(LOOPBACK, 0));
            receiver.configureBlocking(false);
            source.configureBlocking(false);
            sink.configureBlocking(false);
            c.client().configureBlocking(false);
            SelectionKey socketKey = c.client().register(selector, OP_READ);
            SelectionKey datagramKey = receiver.register(selector, OP_READ);
            SelectionKey sourceKey = source.register(selector, OP_READ);
            SelectionKey sinkKey = sink.register(selector, OP_WRITE);

            assertEquals(1, selector.select());
            assertEquals(Set.of(sinkKey), selector.selectedKeys());
            assertTrue(sinkKey.isWritable());
            sinkKey.interestOps(0);
            selector.selectedKeys().clear();
            assertEquals(0, selector.selectNow());

            // one at a time, each becomes ready alone
            sender.send(ByteBuffer.wrap(new byte[] {1}), receiver.getLocalAddress());
            assertEquals(1, awaitReady(selector, datagramKey, OP_READ));
            assertEquals(Set.of(datagramKey), selector.selectedKeys());
            assertNotNull(receiver.receive(ByteBuffer.allocate(10)));
            selector.selectedKeys().clear();

            sink.write(ByteBuffer.wrap(new byte[] {2}));
            assertEquals(1, awaitReady(selector, sourceKey, OP_READ));
            assertEquals(Set.of(sourceKey), selector.selectedKeys());
            assertEquals(1, source.read(ByteBuffer.allocate(10)));
            selector.selectedKeys().clear();

            c.server().write(ByteBuffer.wrap(new byte[] {3}));
            assertEquals(1, awaitReady(selector, socketKey, OP_READ));
            assertEquals(Set.of(socketKey), selector.selectedKeys());
            assertEquals(1, c.client().read(ByteBuffer.allocate(10)));
            selector.selectedKeys().clear();
            assertEquals(0, selector.selectNow());

            // all at once
            sender.send(ByteBuffer.wrap(new byte[] {1}), receiver.getLocalAddress());
            sink.write(ByteBuffer.wrap(new byte[] {2}));
            c.server().write(ByteBuffer.wrap(new byte[] {3}));
            while (selector.selectedKeys().size() < 3) {
                selector.select();
            }
            assertEquals(Set.of(socketKey, datagramKey, sourceKey), selector.selectedKeys());

            // a closed platform channel leaves the selector at the next selection
            source.close();
            selector.selectedKeys().clear();
            assertEquals(2, selector.selectNow());
            assertEquals(Set.of(socketKey, datagramKey, sinkKey), selector.keys());
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldLoseNothingWhenANonBlockingChannelClosesRightAfterItsLastWrite(SelectorProvider provider)
            throws Exception {
        for (int size : new int[] {1, 1000, 3 * 1024 * 1024 + 7}) {
            byte[] data = new byte[size];
            new Random(size).nextBytes(data);
            try (Connected c = connect(provider)) {
                Task<byte[]> reader = start("reader", () -> {
                    java.io.ByteArrayOutputStream all = new java.io.ByteArrayOutputStream();
                    ByteBuffer in = ByteBuffer.allocate(100_000);
                    while (c.server().read(in.clear()) >= 0) {
                        all.write(in.array(), 0, in.position());
                    }
                    return all.toByteArray();
                });
                try (Selector selector = provider.openSelector()) {
                    c.client().configureBlocking(false);
                    SelectionKey key = c.client().register(selector, OP_WRITE);
                    ByteBuffer out = ByteBuffer.wrap(data);
                    while (out.hasRemaining()) {
                        if (c.client().write(out) == 0) {
                            selector.selectedKeys().clear();
                            awaitReady(selector, key, OP_WRITE);
                        }
                    }
                    c.client().close();
                }
                assertArrayEquals(data, reader.result().get(20, TimeUnit.SECONDS), size + " bytes");
            }
        }
    }
}
