package io.hadronio.connection;

import io.hadronio.runtime.UcxRuntime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.Peers;
import io.hadronio.connection.Secret;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The server's side of the eager handshake against a raw client that says exactly what a
 * test wants, on a runtime of its own (so that what it counts is this test's): a hello,
 * however well-formed, costs the server no connection half (receive area, tag id), no
 * lifecycle and no endpoint until the client's FINISH proves the key; hellos that wait
 * for their proof are bounded per remote address (one over the bound is answered PLAIN
 * and is plain TCP), plain bytes never are; and a frame of
 * another protocol version is plain TCP, bytes intact. The handshakes are started as the
 * server channel starts them ({@link Handshakes#accept}), with the inbound kind a test
 * names: on one host {@code DETECT} (a host of {@code hadronio.remote.networks}) cannot
 * happen otherwise.
 */
@Timeout(60)
class ServerHandshakeTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static UcxRuntime server;
    // only its worker's address is used: a real one, for the client that proves the key
    private static UcxRuntime other;
    private static ServerSocketChannel listener;

    @BeforeAll
    static void start() throws Exception {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.upgrade", "false");
        // generous, so that on a loaded machine no hello misses the server's wait for it
        p.setProperty("hadronio.remote.detect.timeout", "10000");
        p.setProperty("hadronio.handshake.timeout", "20000");
        server = UcxRuntime.start(HadronioConfig.from(p), SelectorProvider.provider());
        other = UcxRuntime.start(HadronioConfig.from(p), SelectorProvider.provider());
        listener = SelectorProvider.provider().openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
    }

    @AfterAll
    static void stop() throws IOException {
        listener.close();
    }

    /** Where the server's handshakes deliver their connections. */
    private static final class Deliveries implements AcceptQueue {
        final BlockingQueue<ConnectionLifecycle> accelerated = new LinkedBlockingQueue<>();
        final BlockingQueue<Plain> plain = new LinkedBlockingQueue<>();

        record Plain(SocketChannel tcp, ByteBuffer taken) {
        }

        @Override
        public void accepted(SocketChannel child) {
            throw new AssertionError("the test accepts itself");
        }

        @Override
        public void deliver(ConnectionLifecycle connection) {
            accelerated.add(connection);
        }

        @Override
        public void deliverPlain(SocketChannel tcp, ByteBuffer taken) {
            plain.add(new Plain(tcp, taken));
        }

        /** The next plain connection's first {@code n} bytes: what the handshake took, then what it left. */
        byte[] plainBytes(int n) throws Exception {
            Plain p = plain.poll(20, TimeUnit.SECONDS);
            assertNotNull(p, "no connection was delivered as plain TCP");
            ByteBuffer got = ByteBuffer.allocate(n);
            if (p.taken != null) {
                got.put(p.taken);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.hasRemaining() && System.nanoTime() < deadline) {
                if (p.tcp.read(got) < 0) {
                    break;
                }
                Thread.sleep(1);
            }
            p.tcp.close();
            return Arrays.copyOf(got.array(), got.position());
        }
    }

    /** A raw client, connected, whose server side runs its handshake as {@code inbound}. */
    private static Socket client(Peers.Inbound inbound, Deliveries deliveries) throws IOException {
        Socket s = new Socket();
        s.setSoTimeout(20_000);
        s.setTcpNoDelay(true);
        s.connect(listener.getLocalAddress());
        SocketChannel child = listener.accept();
        child.configureBlocking(false);
        server.handshakes().accept(child, inbound, deliveries);
        return s;
    }

    /** A well-formed hello with the server's profile, whatever its address (it never reaches UCX unproven). */
    private static byte[] hello(byte[] address) {
        return HandshakeMessages.clientHello(4242, 64 * 1024, 8, address, server.endpointProfile());
    }

    private static byte[] randomAddress(long seed) {
        byte[] b = new byte[200];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** The next frame, or null at end-of-stream (or a reset) before any byte of it. */
    private static byte[] readFrame(InputStream in) throws IOException {
        byte[] header;
        try {
            header = in.readNBytes(HandshakeMessages.HEADER_LENGTH);
        } catch (java.net.SocketException reset) {
            return null;
        }
        if (header.length == 0) {
            return null;
        }
        int length = HandshakeMessages.frameLength(ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH).put(header));
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.writeBytes(header);
        frame.writeBytes(in.readNBytes(length - HandshakeMessages.HEADER_LENGTH));
        return frame.toByteArray();
    }

    private static void assertServerHello(byte[] frame, String what) {
        assertNotNull(frame, what);
        assertEquals(HandshakeMessages.SERVER_HELLO, HandshakeMessages.kind(frame), what + " with the server's hello");
    }

    /** Runs {@code s} on the control thread, where the handshakes' state lives. */
    private static <T> T onControl(Supplier<T> s) throws Exception {
        CompletableFuture<T> f = new CompletableFuture<>();
        server.control().execute(() -> f.complete(s.get()));
        return f.get(10, TimeUnit.SECONDS);
    }

    private static long endpoints() {
        return server.resources().get("ucx.endpoints");
    }

    /** Waits until the server's control thread has ended every handshake this test began. */
    private static void allEnded() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.handshakes().inProgress() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, server.handshakes().inProgress(), "handshakes still in progress");
        assertEquals(0, (int) onControl(() -> server.handshakes().unproven().size()));
        assertEquals(0, (int) onControl(() -> server.handshakes().unproven().addresses()));
    }

    @Test
    void shouldMakeNothingForAHelloUntilItsFinishProvesTheKey() throws Exception {
        Secret key = server.peers().secret();
        Secret otherKey = Secret.of(Arrays.copyOf(randomAddress(99), 32));
        Deliveries d = new Deliveries();
        long made = server.connectionsMade();
        long endpoints = endpoints();
        List<Socket> clients = new ArrayList<>();
        List<byte[]> hellos = new ArrayList<>();
        List<byte[]> serverHellos = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            Socket c = client(i == 3 ? Peers.Inbound.EXPECT : Peers.Inbound.DETECT, d);
            byte[] h = hello(randomAddress(i));
            c.getOutputStream().write(h);
            byte[] s = readFrame(c.getInputStream());
            assertNotNull(s, "no server hello");
            // what the server's hello says: its worker and profile, proven with the key, nothing of this connection
            HandshakeMessages.ServerHello sh = HandshakeMessages.decodeServerHello(s);
            assertArrayEquals(server.groups()[0].address(), sh.workerAddress());
            assertEquals(server.endpointProfile(), sh.profile());
            assertTrue(HandshakeMessages.verifyServerHello(key, h, s));
            clients.add(c);
            hellos.add(h);
            serverHellos.add(s);
        }
        assertEquals(made, server.connectionsMade(), "a hello without its proof made a connection half");
        assertEquals(endpoints, endpoints(), "a hello without its proof made an endpoint");
        assertEquals(3, (int) onControl(() -> server.handshakes().unproven().size()),
                "the hellos from a remote host (DETECT) wait for their proof; a registered client's is not counted");
        assertEquals(4, server.handshakes().inProgress());

        // a FINISH made with another key: PLAIN, then plain TCP with the bytes after it
        byte[] after = "after the wrong FINISH".getBytes(StandardCharsets.US_ASCII);
        Socket c0 = clients.get(0);
        c0.getOutputStream().write(HandshakeMessages.finish(otherKey, hellos.get(0), serverHellos.get(0)));
        c0.getOutputStream().write(after);
        assertEquals(HandshakeMessages.PLAIN, HandshakeMessages.kind(readFrame(c0.getInputStream())));
        assertArrayEquals(after, d.plainBytes(after.length));
        // the client's PLAIN: plain TCP
        Socket c1 = clients.get(1);
        c1.getOutputStream().write(HandshakeMessages.signal(HandshakeMessages.PLAIN));
        c1.getOutputStream().write(after);
        assertArrayEquals(after, d.plainBytes(after.length));
        // the client goes away: refused, nothing delivered
        clients.get(2).close();
        // a registered client that ends its output without proving anything
        clients.get(3).shutdownOutput();
        assertNull(readFrame(clients.get(3).getInputStream()), "refused: closed without another word");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (server.handshakes().inProgress() > 0 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        assertEquals(0, server.handshakes().inProgress());
        assertEquals(made, server.connectionsMade(), "an unproven handshake's end made a connection half");
        assertEquals(endpoints, endpoints());

        // the key, proven, by a client whose worker is really there: now, and only now, the server makes its half
        Socket proven = client(Peers.Inbound.DETECT, d);
        byte[] h3 = HandshakeMessages.clientHello(4343, 64 * 1024, 8, other.groups()[0].address(),
                server.endpointProfile());
        proven.getOutputStream().write(h3);
        byte[] s3 = readFrame(proven.getInputStream());
        assertEquals(made, server.connectionsMade());
        proven.getOutputStream().write(HandshakeMessages.finish(key, h3, s3));
        byte[] ready = readFrame(proven.getInputStream());
        assertNotNull(ready, "no READY");
        assertTrue(HandshakeMessages.verifyReady(key, h3, s3, ready), "READY proves the server's key");
        HandshakeMessages.Ready r = HandshakeMessages.decodeReady(ready);
        assertEquals(server.config().sliceSize(), r.sliceSize());
        assertEquals(server.config().sliceCount(), r.sliceCount());
        assertEquals(made + 1, server.connectionsMade(), "the proven client's connection half");
        ConnectionLifecycle life = d.accelerated.poll(20, TimeUnit.SECONDS);
        assertNotNull(life, "the proven connection was not delivered");
        assertTrue(life.isAccelerated());
        assertTrue(d.plain.isEmpty());
        proven.close();
        life.closeUntaken();
        allEnded();
        for (Socket c : clients) {
            c.close();
        }
    }

    @Test
    void shouldMakeNothingForAKeyHolderOfAnotherProfile() throws Exception {
        Secret key = server.peers().secret();
        Deliveries d = new Deliveries();
        long made = server.connectionsMade();
        try (Socket c = client(Peers.Inbound.DETECT, d)) {
            byte[] h = HandshakeMessages.clientHello(1, 64 * 1024, 8, randomAddress(7), "another+profile");
            c.getOutputStream().write(h);
            byte[] s = readFrame(c.getInputStream());
            c.getOutputStream().write(HandshakeMessages.finish(key, h, s));
            assertEquals(HandshakeMessages.PLAIN, HandshakeMessages.kind(readFrame(c.getInputStream())));
            byte[] data = {1, 2, 3};
            c.getOutputStream().write(data);
            assertArrayEquals(data, d.plainBytes(data.length));
        }
        assertEquals(made, server.connectionsMade(), "a proven client of another UCX profile made a connection half");
        allEnded();
    }

    @Test
    void shouldServeAHelloOverTheBoundOfItsAddressAsPlainTcpAndNeverBoundPlainBytes() throws Exception {
        Deliveries d = new Deliveries();
        List<Socket> waiting = new ArrayList<>();
        List<byte[]> hellos = new ArrayList<>();
        for (int i = 0; i < PendingHellos.MAX_PER_ADDRESS; i++) {
            Socket c = client(Peers.Inbound.DETECT, d);
            byte[] h = hello(randomAddress(100 + i));
            c.getOutputStream().write(h);
            assertServerHello(readFrame(c.getInputStream()), "hello " + i + " within the bound is answered");
            waiting.add(c);
            hellos.add(h);
        }
        assertEquals(PendingHellos.MAX_PER_ADDRESS, (int) onControl(() -> server.handshakes().unproven().size()));

        // one more from the same address: answered PLAIN at once, and the connection is the
        // application's as plain TCP, the hello consumed, the bytes after it intact, nothing made
        long made = server.connectionsMade();
        long endpoints = endpoints();
        try (Socket over = client(Peers.Inbound.DETECT, d)) {
            byte[] request = "GET /over HTTP/1.0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            ByteArrayOutputStream sent = new ByteArrayOutputStream();
            sent.writeBytes(hello(randomAddress(200)));
            sent.writeBytes(request);
            // in one write: what follows the hello must stay the application's
            over.getOutputStream().write(sent.toByteArray());
            byte[] answer = readFrame(over.getInputStream());
            assertNotNull(answer, "a hello over the bound is answered, not closed");
            assertEquals(HandshakeMessages.PLAIN, HandshakeMessages.kind(answer), "a hello over the bound: PLAIN");
            Deliveries.Plain p = d.plain.poll(20, TimeUnit.SECONDS);
            assertNotNull(p, "the connection over the bound was not delivered as plain TCP");
            assertNull(p.taken, "the hello is consumed, not data");
            ByteBuffer got = ByteBuffer.allocate(request.length);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (got.hasRemaining() && System.nanoTime() < deadline && p.tcp.read(got) >= 0) {
                Thread.sleep(1);
            }
            assertArrayEquals(request, got.array(), "the bytes after the hello reach the application intact");
            // and the other way: plain TCP, nothing of ours after PLAIN
            byte[] response = "HTTP/1.0 200 OK\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
            ByteBuffer out = ByteBuffer.wrap(response);
            while (out.hasRemaining()) {
                p.tcp.write(out);
            }
            assertArrayEquals(response, over.getInputStream().readNBytes(response.length));
            p.tcp.close();
        }
        assertEquals(PendingHellos.MAX_PER_ADDRESS, (int) onControl(() -> server.handshakes().unproven().size()),
                "a hello over the bound does not wait");
        assertEquals(made, server.connectionsMade(), "a hello over the bound made a connection half");
        assertEquals(endpoints, endpoints(), "a hello over the bound made an endpoint");

        // plain bytes from the same address meanwhile, many connections (a load balancer): all served, intact
        for (int i = 0; i < 3 * PendingHellos.MAX_PER_ADDRESS; i++) {
            try (Socket plain = client(Peers.Inbound.DETECT, d)) {
                byte[] request = ("GET /" + i + " HTTP/1.0\r\n\r\n").getBytes(StandardCharsets.US_ASCII);
                plain.getOutputStream().write(request);
                assertArrayEquals(request, d.plainBytes(request.length), "plain client " + i);
            }
        }
        // a registered local client is not bounded: it proved the key at the rendezvous
        try (Socket registered = client(Peers.Inbound.EXPECT, d)) {
            registered.getOutputStream().write(hello(randomAddress(300)));
            assertServerHello(readFrame(registered.getInputStream()), "a registered client's hello is answered");
        }

        // one waiting hello ends (its client says PLAIN): room for the next hello at once
        waiting.get(0).getOutputStream().write(HandshakeMessages.signal(HandshakeMessages.PLAIN));
        d.plainBytes(0);
        try (Socket next = client(Peers.Inbound.DETECT, d)) {
            next.getOutputStream().write(hello(randomAddress(400)));
            assertServerHello(readFrame(next.getInputStream()), "a hello is answered once another stopped waiting");
            // one whose client is gone makes room too, even if its end was not read yet when the next hello came
            waiting.get(1).close();
            try (Socket after = client(Peers.Inbound.DETECT, d)) {
                after.getOutputStream().write(hello(randomAddress(500)));
                assertServerHello(readFrame(after.getInputStream()), "a gone client's hello does not count");
            }
        }
        for (Socket c : waiting) {
            c.close();
        }
        allEnded();
        assertTrue(d.accelerated.isEmpty());
    }

    @Test
    void shouldServeAHelloOfAnotherVersionAsPlainTcpBytesIntact() throws Exception {
        Deliveries d = new Deliveries();
        long made = server.connectionsMade();
        byte[] v2 = hello(randomAddress(600));
        v2[4] = 2;
        for (Peers.Inbound inbound : List.of(Peers.Inbound.DETECT, Peers.Inbound.EXPECT)) {
            try (Socket c = client(inbound, d)) {
                c.getOutputStream().write(v2);
                assertArrayEquals(v2, d.plainBytes(v2.length), inbound + ": the bytes of a version-2 hello are data");
            }
        }
        assertEquals(made, server.connectionsMade());
        allEnded();
    }
}
