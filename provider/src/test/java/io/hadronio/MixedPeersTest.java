package io.hadronio;

import io.hadronio.config.HadronioConfig;

import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.platform.UnixSeqpacket;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * hadroNIO next to peers that do not run it, in one JVM: the three pairings
 * (accelerated on both sides, accelerated server with a plain client, plain server with
 * an accelerated client), {@code java.net.Socket}/{@code ServerSocket} peers, strangers
 * that send our magic, processes with another key, and a squatter on the rendezvous
 * name. A plain peer must see exactly the JDK's behaviour, byte for byte.
 */
@Timeout(60)
class MixedPeersTest extends ContractSupport {
    private static final SelectorProvider JDK = HADRONIO.platform();

    static Stream<Arguments> pairings() {
        return Stream.of(
                Arguments.of("hadronio-hadronio", HADRONIO, HADRONIO),
                Arguments.of("hadronio-server-plain-client", HADRONIO, JDK),
                Arguments.of("plain-server-hadronio-client", JDK, HADRONIO));
    }

    private static String transport(SocketChannel ch) throws IOException {
        return ch.supportedOptions().contains(HadronioSocketOptions.TRANSPORT)
                ? ch.getOption(HadronioSocketOptions.TRANSPORT) : "jdk";
    }

    // the suite's mode: with hadronio.upgrade two hadroNIO channels start on their local stream
    // (or plain TCP without hadronio.local.stream) and move to UCX with their traffic
    // (UpgradeTest, LocalStreamTest), so right after connect either is right
    private static final boolean UPGRADE = HADRONIO.config().upgrade();
    private static final String PLAIN_PHASE = HADRONIO.config().localStream() ? "unix" : "tcp";

    private static boolean hadronioPair(String transport) {
        return transport.startsWith("ucx:") || (UPGRADE && transport.equals(PLAIN_PHASE));
    }

    private static void expectTransports(SelectorProvider server, SelectorProvider client, SocketChannel accepted,
                                         SocketChannel connected) throws IOException {
        boolean both = server == HADRONIO && client == HADRONIO;
        for (SocketChannel ch : List.of(accepted, connected)) {
            String t = transport(ch);
            if (ch.provider() == HADRONIO) {
                assertTrue(both ? hadronioPair(t) : t.equals("tcp"), ch + " transport " + t);
            }
        }
    }

    private static byte[] random(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Reads until {@code b} is full; an end-of-stream before that is an IOException. */
    static void readFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("early end-of-stream after " + b.position());
            }
        }
    }

    static void writeFully(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldEchoInBlockingMode(String name, SelectorProvider server, SelectorProvider client) throws Exception {
        try (ServerSocketChannel listener = server.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel c = client.openSocketChannel()) {
            c.connect(listener.getLocalAddress());
            try (SocketChannel s = listener.accept()) {
                expectTransports(server, client, s, c);
                byte[] data = random(300_000, 1);
                Task<Void> echo = start("echo", () -> {
                    ByteBuffer buf = ByteBuffer.allocate(8192);
                    while (s.read(buf) >= 0) {
                        buf.flip();
                        writeFully(s, buf);
                        buf.clear();
                    }
                    s.close();
                    return null;
                });
                Task<Void> writer = start("writer", () -> {
                    writeFully(c, ByteBuffer.wrap(data));
                    c.shutdownOutput();
                    return null;
                });
                ByteBuffer back = ByteBuffer.allocate(data.length);
                readFully(c, back);
                assertEquals(-1, c.read(ByteBuffer.allocate(1)));
                assertArrayEquals(data, back.array());
                writer.result().get();
                echo.result().get();
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldServeServerFirstProtocols(String name, SelectorProvider server, SelectorProvider client)
            throws Exception {
        try (ServerSocketChannel listener = server.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel c = client.openSocketChannel()) {
            c.connect(listener.getLocalAddress());
            try (SocketChannel s = listener.accept()) {
                // the server speaks first (SMTP, MySQL, ...): the client only reads
                writeFully(s, ByteBuffer.wrap("220 ready\r\n".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer greeting = ByteBuffer.allocate(11);
                readFully(c, greeting);
                assertEquals("220 ready\r\n", new String(greeting.array(), StandardCharsets.US_ASCII));
                writeFully(c, ByteBuffer.wrap("QUIT\r\n".getBytes(StandardCharsets.US_ASCII)));
                ByteBuffer quit = ByteBuffer.allocate(6);
                readFully(s, quit);
                assertEquals("QUIT\r\n", new String(quit.array(), StandardCharsets.US_ASCII));
                s.close();
                assertEquals(-1, c.read(ByteBuffer.allocate(1)));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldSelectNonBlockingChannelsOfEveryPairingTogether(String name, SelectorProvider server,
                                                               SelectorProvider client) throws Exception {
        // one hadroNIO selector over the client channels of this pairing and of an accelerated one
        try (Selector selector = HADRONIO.openSelector();
             ServerSocketChannel l1 = server.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             ServerSocketChannel l2 = HADRONIO.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel c1 = HADRONIO.openSocketChannel();
             SocketChannel c2 = HADRONIO.openSocketChannel()) {
            c1.connect(l1.getLocalAddress());
            c2.connect(l2.getLocalAddress());
            try (SocketChannel s1 = l1.accept(); SocketChannel s2 = l2.accept()) {
                assertTrue(server == HADRONIO ? hadronioPair(transport(c1)) : transport(c1).equals("tcp"),
                        transport(c1));
                assertTrue(hadronioPair(transport(c2)), transport(c2));
                c1.configureBlocking(false);
                c2.configureBlocking(false);
                byte[] d1 = random(100_000, 2);
                byte[] d2 = random(100_000, 3);
                ByteBuffer out1 = ByteBuffer.wrap(d1);
                ByteBuffer out2 = ByteBuffer.wrap(d2);
                SelectionKey k1 = c1.register(selector, OP_WRITE, out1);
                SelectionKey k2 = c2.register(selector, OP_WRITE, out2);
                Task<byte[]> r1 = start("r1", () -> {
                    ByteBuffer b = ByteBuffer.allocate(d1.length);
                    readFully(s1, b);
                    return b.array();
                });
                Task<byte[]> r2 = start("r2", () -> {
                    ByteBuffer b = ByteBuffer.allocate(d2.length);
                    readFully(s2, b);
                    return b.array();
                });
                while (k1.isValid() || k2.isValid()) {
                    selector.select();
                    for (SelectionKey k : selector.selectedKeys()) {
                        ByteBuffer out = (ByteBuffer) k.attachment();
                        ((SocketChannel) k.channel()).write(out);
                        if (!out.hasRemaining()) {
                            k.cancel();
                        }
                    }
                    selector.selectedKeys().clear();
                }
                assertArrayEquals(d1, r1.result().get());
                assertArrayEquals(d2, r2.result().get());
                // and back: readiness for reading on both kinds
                selector.selectNow();
                k1 = c1.register(selector, OP_READ);
                k2 = c2.register(selector, OP_READ);
                writeFully(s1, ByteBuffer.wrap(new byte[] {1}));
                writeFully(s2, ByteBuffer.wrap(new byte[] {2}));
                int seen = 0;
                while (seen != 3) {
                    selector.select();
                    for (SelectionKey k : selector.selectedKeys()) {
                        ByteBuffer b = ByteBuffer.allocate(1);
                        assertEquals(1, ((SocketChannel) k.channel()).read(b));
                        seen |= b.get(0);
                    }
                    selector.selectedKeys().clear();
                }
            }
        }
    }

    /** As with the JDK, a selectNow right after registering a plain connection reports what is ready. */
    @Test
    void shouldSeeAPlainConnectionReadyInTheFirstSelectNow() throws Exception {
        try (ServerSocketChannel listener = JDK.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel c = HADRONIO.openSocketChannel();
             Selector selector = HADRONIO.openSelector()) {
            c.connect(listener.getLocalAddress());
            SocketChannel accepted = listener.accept();
            assertEquals("tcp", transport(c));
            accepted.write(ByteBuffer.wrap(new byte[] {7}));
            c.configureBlocking(false);
            SelectionKey key = c.register(selector, SelectionKey.OP_WRITE);
            assertEquals(1, selector.selectNow());
            assertEquals(SelectionKey.OP_WRITE, key.readyOps());
            selector.selectedKeys().clear();
            key.interestOps(SelectionKey.OP_READ);
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (selector.selectNow() == 0 && System.nanoTime() < deadline) {
                Thread.onSpinWait();
            }
            assertEquals(SelectionKey.OP_READ, key.readyOps());
            accepted.close();
        }
    }

    @Test
    void shouldNeverSendOurProtocolToAPlainServer() throws Exception {
        try (ServerSocket plain = new ServerSocket(0, 50, LOOPBACK);
             SocketChannel c = HADRONIO.openSocketChannel()) {
            c.connect(plain.getLocalSocketAddress());
            assertEquals("tcp", transport(c));
            try (Socket s = plain.accept()) {
                writeFully(c, ByteBuffer.wrap("GET / HTTP/1.0\r\n".getBytes(StandardCharsets.US_ASCII)));
                byte[] got = new DataInputStream(s.getInputStream()).readNBytes(16);
                assertEquals("GET / HTTP/1.0\r\n", new String(got, StandardCharsets.US_ASCII));
                // an echo server reflecting what it got is still just a plain server
                s.getOutputStream().write(got);
                ByteBuffer back = ByteBuffer.allocate(16);
                readFully(c, back);
                assertArrayEquals(got, back.array());
            }
        }
    }

    @Test
    void shouldGreetAJavaNetSocketClientAtOnce() throws Exception {
        try (ServerSocketChannel listener = HADRONIO.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             Socket client = new Socket()) {
            client.connect(listener.getLocalAddress());
            try (SocketChannel s = listener.accept()) {
                assertEquals("tcp", transport(s));
                writeFully(s, ByteBuffer.wrap("+OK\r\n".getBytes(StandardCharsets.US_ASCII)));
                assertEquals("+OK\r\n", new String(client.getInputStream().readNBytes(5), StandardCharsets.US_ASCII));
                client.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
                ByteBuffer ping = ByteBuffer.allocate(6);
                readFully(s, ping);
                assertEquals("PING\r\n", new String(ping.array(), StandardCharsets.US_ASCII));
            }
        }
    }

    /** A stranger that sends a well-formed hello of ours (crafted address) gets plain TCP: its bytes are data. */
    @Test
    void shouldDeliverAStrangersHelloAsData() throws Exception {
        byte[] address = random(200, 4);
        byte[] hello = HandshakeMessages.clientHello(7, 65536, 8, address, "peer+mm+cma");
        byte[] v1 = "HNIO\u0000\u0001\u0000\u0000garbage after a version-1 header".getBytes(StandardCharsets.ISO_8859_1);
        for (byte[] bytes : List.of(hello, v1)) {
            try (ServerSocketChannel listener = HADRONIO.openServerSocketChannel()
                    .bind(new InetSocketAddress(LOOPBACK, 0)); Socket stranger = new Socket()) {
                stranger.connect(listener.getLocalAddress());
                stranger.getOutputStream().write(bytes);
                try (SocketChannel s = listener.accept()) {
                    assertEquals("tcp", transport(s));
                    ByteBuffer got = ByteBuffer.allocate(bytes.length);
                    readFully(s, got);
                    assertArrayEquals(bytes, got.array());
                    // and the server answers as any plain server does
                    writeFully(s, ByteBuffer.wrap(new byte[] {42}));
                    assertEquals(42, stranger.getInputStream().read());
                }
            }
        }
    }

    /** Silent connections are plain TCP at once: they hold up neither accept() nor an accelerated client. */
    @Test
    void shouldNotStallAcceleratedClientsBehindSilentOnes() throws Exception {
        List<Socket> silent = new ArrayList<>();
        // (the default mode's handshake: with hadronio.upgrade nothing waits for one)
        try (ServerSocketChannel listener = EagerProvider.get().openServerSocketChannel()
                .bind(new InetSocketAddress(LOOPBACK, 0), 200)) {
            for (int i = 0; i < 64; i++) {
                Socket s = new Socket();
                s.connect(listener.getLocalAddress());
                silent.add(s);
            }
            List<SocketChannel> accepted = new ArrayList<>();
            try (SocketChannel c = EagerProvider.get().openSocketChannel()) {
                c.connect(listener.getLocalAddress());
                assertTrue(transport(c).startsWith("ucx:"), transport(c));
                SocketChannel ours = null;
                for (int i = 0; i < 65; i++) {
                    SocketChannel s = listener.accept();
                    accepted.add(s);
                    if (transport(s).startsWith("ucx:")) {
                        ours = s;
                    }
                }
                assertNotNull(ours, "the accelerated client was not accepted as such");
                writeFully(c, ByteBuffer.wrap(new byte[] {9}));
                ByteBuffer b = ByteBuffer.allocate(1);
                readFully(ours, b);
                assertEquals(9, b.get(0));
            } finally {
                for (SocketChannel s : accepted) {
                    s.close();
                }
            }
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
    }

    /** A process with another key (another user, say) is a plain peer, both ways. */
    @Test
    void shouldUsePlainTcpWithAPeerOfAnotherKey(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
        Properties p = new Properties();
        p.setProperty("hadronio.secret.file", dir.resolve("other-secret").toString());
        HadronioProvider other = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(other.isAccelerated());
        for (SelectorProvider[] pair : List.of(new SelectorProvider[] {HADRONIO, other},
                new SelectorProvider[] {other, HADRONIO})) {
            try (ServerSocketChannel listener = pair[0].openServerSocketChannel()
                    .bind(new InetSocketAddress(LOOPBACK, 0)); SocketChannel c = pair[1].openSocketChannel()) {
                c.connect(listener.getLocalAddress());
                try (SocketChannel s = listener.accept()) {
                    assertEquals("tcp", transport(c));
                    assertEquals("tcp", transport(s));
                    writeFully(c, ByteBuffer.wrap(new byte[] {1, 2, 3}));
                    ByteBuffer b = ByteBuffer.allocate(3);
                    readFully(s, b);
                    assertArrayEquals(new byte[] {1, 2, 3}, b.array());
                }
            }
        }
    }

    /**
     * Whoever holds the rendezvous name without the key cannot make a client speak our
     * protocol to the plain server behind the port: neither one that stays silent nor one
     * that answers garbage.
     */
    @Tag("slow")
    @Test
    void shouldIgnoreASquatterOnTheRendezvousName() throws Exception {
        for (boolean answers : new boolean[] {false, true}) {
            try (ServerSocket plain = new ServerSocket(0, 50, LOOPBACK)) {
                int port = plain.getLocalPort();
                try (UnixSeqpacket squatter = UnixSeqpacket.listen("hadronio/" + port, 8)) {
                    assertNotNull(squatter);
                    Task<Void> squat = start("squatter", () -> {
                        long deadline = System.nanoTime() + 5_000_000_000L;
                        UnixSeqpacket session = null;
                        while (session == null && System.nanoTime() < deadline) {
                            session = squatter.accept();
                            Thread.sleep(1);
                        }
                        if (session != null && answers) {
                            try {
                                session.send("HNIO garbage".getBytes(StandardCharsets.US_ASCII));
                                session.awaitReadable(System.nanoTime() + 2_000_000_000L);
                                session.receive(256);
                                session.send(new byte[40]);
                            } catch (IOException e) {
                                // the client gave up on us already: as it should
                            }
                        }
                        Thread.sleep(answers ? 0 : 1500);
                        if (session != null) {
                            session.close();
                        }
                        return null;
                    });
                    try (SocketChannel c = HADRONIO.openSocketChannel()) {
                        c.connect(plain.getLocalSocketAddress());
                        assertEquals("tcp", transport(c));
                        try (Socket s = plain.accept()) {
                            writeFully(c, ByteBuffer.wrap("plain".getBytes(StandardCharsets.US_ASCII)));
                            assertEquals("plain", new String(s.getInputStream().readNBytes(5),
                                    StandardCharsets.US_ASCII));
                        }
                    }
                    squat.result().get();
                }
            }
        }
    }

    /** A port an accelerated server gave up and a plain one took over: the client must see the plain one. */
    @Test
    void shouldSeeAPlainServerOnAPortAnAcceleratedOneLeft() throws Exception {
        int port;
        try (ServerSocketChannel accelerated = HADRONIO.openServerSocketChannel()) {
            accelerated.setOption(java.net.StandardSocketOptions.SO_REUSEADDR, true);
            accelerated.bind(new InetSocketAddress(LOOPBACK, 0));
            port = ((InetSocketAddress) accelerated.getLocalAddress()).getPort();
        }
        try (ServerSocket plain = new ServerSocket()) {
            plain.setReuseAddress(true);
            plain.bind(new InetSocketAddress(LOOPBACK, port));
            try (SocketChannel c = HADRONIO.openSocketChannel()) {
                c.connect(new InetSocketAddress(LOOPBACK, port));
                assertEquals("tcp", transport(c));
                try (Socket s = plain.accept()) {
                    writeFully(c, ByteBuffer.wrap(new byte[] {5}));
                    assertEquals(5, s.getInputStream().read());
                }
            }
        }
    }

    @Test
    void shouldReportTheTransportReadOnly() throws Exception {
        try (Connected c = connect(EagerProvider.get())) {
            assertTrue(c.client().supportedOptions().contains(HadronioSocketOptions.TRANSPORT));
            assertTrue(transport(c.client()).startsWith("ucx:"));
            assertThrows(UnsupportedOperationException.class,
                    () -> c.client().setOption(HadronioSocketOptions.TRANSPORT, "tcp"));
        }
        try (SocketChannel unconnected = HADRONIO.openSocketChannel()) {
            assertEquals("", transport(unconnected));
        }
    }

    @Test
    void shouldSendUrgentDataOnPlainTcp() throws Exception {
        try (ServerSocket plain = new ServerSocket(0, 50, LOOPBACK);
             SocketChannel c = HADRONIO.openSocketChannel()) {
            c.connect(plain.getLocalSocketAddress());
            try (Socket s = plain.accept()) {
                s.setOOBInline(true);
                c.socket().sendUrgentData(0x55);
                InputStream in = s.getInputStream();
                assertEquals(0x55, in.read());
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldThrowUnknownHostExceptionFromTheAdaptorForAnUnresolvedAddress(SelectorProvider provider)
            throws Exception {
        try (SocketChannel c = provider.openSocketChannel()) {
            assertThrows(java.net.UnknownHostException.class,
                    () -> c.socket().connect(InetSocketAddress.createUnresolved("no.such.host.invalid", 80)));
        }
    }

    /** Kernel semantics after the peer's orderly close: an empty write is 0, the first write is taken, a later one fails. */
    @ParameterizedTest
    @MethodSource("providers")
    void shouldWriteAfterThePeersCloseAsTheKernelDoes(SelectorProvider provider) throws Exception {
        try (Connected c = connect(provider)) {
            c.server().close();
            assertEquals(-1, c.client().read(ByteBuffer.allocate(1)));
            assertEquals(0, c.client().write(ByteBuffer.allocate(0)));
            assertEquals(3, c.client().write(ByteBuffer.wrap(new byte[] {1, 2, 3})));
            IOException failed = null;
            for (int i = 0; i < 200 && failed == null; i++) {
                try {
                    c.client().write(ByteBuffer.wrap(new byte[] {1}));
                    Thread.sleep(5);
                } catch (IOException e) {
                    failed = e;
                }
            }
            assertNotNull(failed, "writes kept succeeding after the peer closed");
            assertEquals(0, c.client().write(ByteBuffer.allocate(0)));
        }
    }

    /** Closing a server while a non-blocking connect to it is in its handshake: no error, and the port is closed. */
    @Test
    void shouldCloseAServerWithAConnectInProgress() throws Exception {
        for (int i = 0; i < 20; i++) {
            ServerSocketChannel listener = HADRONIO.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
            InetSocketAddress address = (InetSocketAddress) listener.getLocalAddress();
            try (SocketChannel c = HADRONIO.openSocketChannel()) {
                c.configureBlocking(false);
                c.connect(address);
                listener.close();
                try {
                    while (!c.finishConnect()) {
                        Thread.sleep(1);
                    }
                } catch (IOException e) {
                    // refused or reset: either is fine
                }
            }
            try (Socket late = new Socket()) {
                assertThrows(java.net.ConnectException.class, () -> late.connect(address));
            }
        }
    }
}
