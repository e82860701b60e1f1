package io.hadronio;

import io.hadronio.config.HadronioConfig;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.net.BindException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Local streams ({@code hadronio.local.stream}): a connection between two hadroNIO
 * processes of one user on this host opens over a Unix stream socket, not kernel TCP, and
 * must look like a TCP connection to both applications: real, matching addresses, a held
 * local port, TCP's options, the reset of an abortive close, the first write after the
 * peer's close taken, timed reads; and it moves to UCX as a TCP connection does. Both ends
 * in one JVM (a provider's clients meet its own listeners as another process's would).
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(60)
class LocalStreamTest {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    static HadronioProvider streams;
    static HadronioProvider tcpOnly;
    static SelectorProvider jdk;

    @BeforeAll
    static void start() {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        streams = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(streams.isAccelerated());
        p.setProperty("hadronio.local.stream", "false");
        tcpOnly = new HadronioProvider(HadronioConfig.from(p));
        jdk = streams.platform();
    }

    static String transport(SocketChannel c) throws IOException {
        return c.getOption(HadronioSocketOptions.TRANSPORT);
    }

    record Pair(SocketChannel client, SocketChannel server) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            client.close();
            server.close();
        }
    }

    static Pair connect(ServerSocketChannel listener, SelectorProvider clientProvider) throws IOException {
        SocketChannel client = clientProvider.openSocketChannel();
        client.connect(listener.getLocalAddress());
        SocketChannel server = listener.accept();
        return new Pair(client, server);
    }

    static ServerSocketChannel listen(SelectorProvider provider, InetAddress at) throws IOException {
        ServerSocketChannel s = provider.openServerSocketChannel();
        s.bind(new InetSocketAddress(at, 0));
        return s;
    }

    @Test
    void shouldLookLikeTcpWithRealMatchingAddressesAndAHeldPort() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            assertEquals("unix", transport(p.client()));
            assertEquals("unix", transport(p.server()));
            InetSocketAddress clientLocal = (InetSocketAddress) p.client().getLocalAddress();
            assertEquals(LOOPBACK, clientLocal.getAddress());
            assertNotEquals(0, clientLocal.getPort());
            assertEquals(clientLocal, p.server().getRemoteAddress());
            assertEquals(listener.getLocalAddress(), p.client().getRemoteAddress());
            assertEquals(listener.getLocalAddress(), p.server().getLocalAddress());
            assertEquals(clientLocal.getPort(), p.client().socket().getLocalPort());
            assertEquals(((InetSocketAddress) listener.getLocalAddress()).getPort(), p.client().socket().getPort());
            // the port is the connection's while it lives, as a TCP connection's is
            try (SocketChannel other = jdk.openSocketChannel()) {
                assertThrows(BindException.class, () -> other.bind(clientLocal));
            }
            p.client().close();
            try (SocketChannel other = jdk.openSocketChannel()) {
                other.bind(clientLocal); // free again
            }
        }
    }

    @Test
    void shouldCarryBytesBothWaysAndMoveToUcx() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            ByteBuffer in = ByteBuffer.allocate(8);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (long i = 0; !transport(p.client()).startsWith("ucx:") || !transport(p.server()).startsWith("ucx:"); i++) {
                assertTrue(System.nanoTime() < deadline, "never moved to UCX: " + p.client() + " / " + p.server());
                p.client().write(ByteBuffer.allocate(8).putLong(0, i));
                in.clear();
                while (in.hasRemaining()) {
                    assertTrue(p.server().read(in) >= 0);
                }
                assertEquals(i, in.getLong(0));
                p.server().write(in.flip());
                in.clear();
                while (in.hasRemaining()) {
                    assertTrue(p.client().read(in) >= 0);
                }
                assertEquals(i, in.getLong(0));
                Thread.sleep(1);
            }
            p.client().shutdownOutput();
            assertEquals(-1, p.server().read(ByteBuffer.allocate(1)));
        }
    }

    @Test
    void shouldResetThePeerOnAnAbortiveClose() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            assertEquals("unix", transport(p.client()));
            p.server().setOption(StandardSocketOptions.SO_LINGER, 0);
            p.server().close();
            SocketException e = assertThrows(SocketException.class, () -> p.client().read(ByteBuffer.allocate(4)));
            assertTrue(e.getMessage().contains("reset"), e.getMessage());
        }
        // a selector's reader sees it as readable, then the reset
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams);
             Selector selector = streams.openSelector()) {
            p.client().configureBlocking(false);
            SelectionKey key = p.client().register(selector, SelectionKey.OP_READ);
            p.client().setOption(StandardSocketOptions.SO_LINGER, 0);
            p.server().write(ByteBuffer.wrap(new byte[] {1, 2}));
            p.client().close(); // the server's bytes unread: a reset anyway
            key.cancel();
            assertThrows(SocketException.class, () -> {
                ByteBuffer b = ByteBuffer.allocate(4);
                while (p.server().read(b) >= 0) {
                    Thread.sleep(1);
                }
            });
        }
    }

    @Test
    void shouldEndOrderlyWithoutAMark() throws Exception {
        java.util.Set<Long> before = marks();
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            p.server().write(ByteBuffer.wrap(new byte[] {5}));
            p.server().close();
            ByteBuffer b = ByteBuffer.allocate(4);
            assertEquals(1, p.client().read(b));
            assertEquals(-1, p.client().read(b));
            assertEquals(-1, p.client().read(b));
            // as on TCP: the first write after the peer's close is taken, a later one fails
            assertEquals(2, p.client().write(ByteBuffer.wrap(new byte[] {1, 2})));
            assertThrows(IOException.class, () -> p.client().write(ByteBuffer.wrap(new byte[] {3})));
        }
        // an abortive close after the output's orderly end is no reset for the peer's reads (as TCP)
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            p.server().shutdownOutput();
            p.server().setOption(StandardSocketOptions.SO_LINGER, 0);
            p.server().close();
            assertEquals(-1, p.client().read(ByteBuffer.allocate(1)));
        }
        // an abortive close whose peer closes without reading to the end, or has closed already
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            p.server().setOption(StandardSocketOptions.SO_LINGER, 0);
            p.server().close();
            p.client().close();
        }
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            p.client().close();
            p.server().setOption(StandardSocketOptions.SO_LINGER, 0);
            p.server().close();
        }
        java.util.Set<Long> after = marks();
        after.removeAll(before);
        assertTrue(after.isEmpty(), "reset marks left behind: " + after);
    }

    /** The keys in the shared reset table (LocalStreams' "resets"; other processes' too: the suite runs alone). */
    private static java.util.Set<Long> marks() throws IOException {
        ByteBuffer table = ByteBuffer.wrap(Files.readAllBytes(markDirectory().resolve("resets")))
                .order(java.nio.ByteOrder.nativeOrder());
        java.util.Set<Long> keys = new java.util.HashSet<>();
        // its 65,536 slots of key and time (the listeners' epoch follows them)
        for (int off = 0; off < 65_536 * 16; off += 16) {
            long key = table.getLong(off);
            if (key != 0) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static Path markDirectory() throws IOException {
        int uid = (Integer) Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        String ns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString().replaceAll("[^0-9]", "");
        return Path.of("/tmp", "hadronio-" + uid, "net-" + ns);
    }

    @Test
    void shouldKeepTcpOptionsAndApplyBufferSizes() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK)) {
            SocketChannel client = streams.openSocketChannel();
            client.setOption(StandardSocketOptions.TCP_NODELAY, true);
            client.setOption(StandardSocketOptions.SO_RCVBUF, 32 * 1024);
            client.connect(listener.getLocalAddress());
            try (SocketChannel server = listener.accept(); client) {
                assertEquals("unix", transport(client));
                assertEquals(Boolean.TRUE, client.getOption(StandardSocketOptions.TCP_NODELAY));
                assertTrue(client.getOption(StandardSocketOptions.SO_RCVBUF) >= 32 * 1024);
                assertTrue(client.supportedOptions().contains(StandardSocketOptions.TCP_NODELAY));
                assertTrue(server.supportedOptions().contains(StandardSocketOptions.SO_KEEPALIVE));
                assertEquals(Boolean.FALSE, server.getOption(StandardSocketOptions.TCP_NODELAY));
                server.setOption(StandardSocketOptions.TCP_NODELAY, true);
                assertEquals(Boolean.TRUE, server.getOption(StandardSocketOptions.TCP_NODELAY));
                server.setOption(StandardSocketOptions.IP_TOS, 0x10);
                assertEquals(0x10, server.getOption(StandardSocketOptions.IP_TOS));
                assertThrows(IllegalArgumentException.class,
                        () -> server.setOption(StandardSocketOptions.SO_KEEPALIVE, null));
                server.setOption(StandardSocketOptions.SO_LINGER, 5);
                assertEquals(5, server.getOption(StandardSocketOptions.SO_LINGER));
                assertEquals(Boolean.TRUE, server.socket().getTcpNoDelay());
            }
        }
    }

    @Test
    void shouldTimeOutAnAdaptorRead() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Pair p = connect(listener, streams)) {
            assertEquals("unix", transport(p.client()));
            p.client().socket().setSoTimeout(200);
            InputStream in = p.client().socket().getInputStream();
            assertThrows(SocketTimeoutException.class, in::read);
            p.server().write(ByteBuffer.wrap(new byte[] {42}));
            assertEquals(42, in.read());
        }
    }

    @Test
    void shouldServePlainPeersOverTcpBesideIt() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK)) {
            try (Pair p = connect(listener, jdk)) {
                assertEquals("tcp", transport(p.server()));
                p.client().write(ByteBuffer.wrap(new byte[] {9}));
                ByteBuffer b = ByteBuffer.allocate(1);
                assertEquals(1, p.server().read(b));
            }
            try (Pair p = connect(listener, tcpOnly)) {
                assertEquals("tcp", transport(p.client()));
            }
            // a hadroNIO client to a plain server: TCP
            try (ServerSocketChannel plain = listen(jdk, LOOPBACK); Pair p = connect(plain, streams)) {
                assertEquals("tcp", transport(p.client()));
            }
        }
    }

    @Test
    void shouldAcceptThroughASelector() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK); Selector selector = streams.openSelector()) {
            listener.configureBlocking(false);
            listener.register(selector, SelectionKey.OP_ACCEPT);
            try (SocketChannel client = streams.openSocketChannel()) {
                client.connect(listener.getLocalAddress());
                assertEquals("unix", transport(client));
                SocketChannel accepted = null;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                while (accepted == null) {
                    assertTrue(System.nanoTime() < deadline, "OP_ACCEPT never came");
                    selector.select(100);
                    selector.selectedKeys().clear();
                    accepted = listener.accept();
                }
                try (SocketChannel server = accepted) {
                    assertEquals(client.getLocalAddress(), server.getRemoteAddress());
                }
            }
        }
    }

    @Test
    void shouldNotReachAListenerOfAnotherAddressOrAClosedOne() throws Exception {
        InetSocketAddress closedAt;
        try (ServerSocketChannel listener = listen(streams, LOOPBACK)) {
            closedAt = (InetSocketAddress) listener.getLocalAddress();
            // another loopback address of the same port: TCP refuses it, so must we
            try (SocketChannel c = streams.openSocketChannel()) {
                assertThrows(IOException.class,
                        () -> c.connect(new InetSocketAddress(InetAddress.getByName("127.0.0.2"), closedAt.getPort())));
            }
        }
        try (SocketChannel c = streams.openSocketChannel()) {
            assertThrows(IOException.class, () -> c.connect(closedAt));
        }
    }

    /**
     * What reaches the Unix listener is checked before a channel is handed out: garbage, a short
     * preamble, nothing at all (for the deadline), a preamble naming another port or a remote
     * address are closed; the good client behind them is accepted.
     */
    @Test
    void shouldDropBadPreamblesAndAcceptTheGoodClientBehindThem() throws Exception {
        try (ServerSocketChannel listener = listen(streams, LOOPBACK)) {
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            Path name;
            try (Stream<Path> files = Files.list(markDirectory())) {
                name = files.filter(f -> f.getFileName().toString().startsWith("s1-")
                        && f.getFileName().toString().endsWith("-127.0.0.1-" + port)).findFirst().orElseThrow();
            }
            java.util.List<SocketChannel> bad = new java.util.ArrayList<>();
            byte[] garbage = new byte[51];
            new java.util.Random(7).nextBytes(garbage);
            bad.add(rawClient(name, garbage));
            bad.add(rawClient(name, new byte[] {'H', 'N', 'L', 'S', 1}));
            bad.add(rawClient(name, new byte[0]));
            bad.add(rawClient(name, preamble(new byte[] {127, 0, 0, 1}, 40000, port + 1)));
            bad.add(rawClient(name, preamble(new byte[] {8, 8, 8, 8}, 40000, port)));
            try (SocketChannel good = streams.openSocketChannel()) {
                good.connect(listener.getLocalAddress());
                assertEquals("unix", transport(good));
                try (SocketChannel accepted = listener.accept()) {
                    assertEquals(good.getLocalAddress(), accepted.getRemoteAddress());
                }
            }
            for (SocketChannel b : bad) {
                // each was closed by the server: its read ends
                assertTrue(b.read(ByteBuffer.allocate(1)) < 0);
                b.close();
            }
        }
    }

    private static SocketChannel rawClient(Path name, byte[] bytes) throws IOException {
        SocketChannel c = SocketChannel.open(java.net.StandardProtocolFamily.UNIX);
        c.connect(java.net.UnixDomainSocketAddress.of(name));
        c.write(ByteBuffer.wrap(bytes));
        return c;
    }

    /** A well-formed preamble: the client at {@code client}:{@code clientPort}, to 127.0.0.1:{@code port}. */
    private static byte[] preamble(byte[] client, int clientPort, int port) {
        ByteBuffer b = ByteBuffer.allocate(51);
        b.putInt(0x484e4c53).put((byte) 1);
        b.put((byte) 4).put(client).put(new byte[12]).putShort((short) clientPort);
        b.put((byte) 4).put(new byte[] {127, 0, 0, 1}).put(new byte[12]).putShort((short) port);
        b.putLong(1);
        return b.array();
    }

    /**
     * A client that found no listener of ours for a destination (a plain server) remembers that,
     * but not past the next listener's bind: one that takes the port at once gets local streams.
     */
    @Test
    void shouldFindAListenerThatTookThePortOfAPlainServer() throws Exception {
        int port;
        try (ServerSocketChannel plain = listen(jdk, LOOPBACK)) {
            port = ((InetSocketAddress) plain.getLocalAddress()).getPort();
            for (int i = 0; i < 3; i++) {
                try (Pair p = connect(plain, streams)) {
                    assertEquals("tcp", transport(p.client()));
                }
            }
        }
        try (ServerSocketChannel ours = streams.openServerSocketChannel()) {
            ours.bind(new InetSocketAddress(LOOPBACK, port));
            try (Pair p = connect(ours, streams)) {
                assertEquals("unix", transport(p.client()));
                assertEquals("unix", transport(p.server()));
            }
        }
    }

    @Test
    void shouldAcceptFromAWildcardListener() throws Exception {
        try (ServerSocketChannel listener = streams.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(0));
            int port = ((InetSocketAddress) listener.getLocalAddress()).getPort();
            try (SocketChannel client = streams.openSocketChannel()) {
                client.connect(new InetSocketAddress(LOOPBACK, port));
                try (SocketChannel server = listener.accept()) {
                    assertEquals("unix", transport(client));
                    assertEquals(new InetSocketAddress(LOOPBACK, port), server.getLocalAddress());
                    client.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
                    ByteBuffer b = ByteBuffer.allocate(3);
                    while (b.hasRemaining()) {
                        assertTrue(server.read(b) >= 0);
                    }
                    assertArrayEquals(new byte[] {1, 2, 3}, b.array());
                }
            }
        }
    }
}
