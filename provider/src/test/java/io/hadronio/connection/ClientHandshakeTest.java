package io.hadronio.connection;

import io.hadronio.runtime.UcxRuntime;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.HandshakeMessages;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The connecting side of the handshake against a raw server that says exactly what a test
 * wants, on a runtime of its own. A server with more hellos from the client's host waiting
 * for their proof than it lets wait answers a hello with PLAIN instead of its own hello:
 * the client then goes plain, and its connect succeeds as plain TCP. The handshakes are
 * started as a socket channel's connect starts them ({@link Handshakes#connect}): on one
 * host a connect to a remote network's server cannot happen otherwise.
 */
@Timeout(60)
class ClientHandshakeTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static UcxRuntime client;

    @BeforeAll
    static void start() throws Exception {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.upgrade", "false");
        p.setProperty("hadronio.handshake.timeout", "20000");
        client = UcxRuntime.start(HadronioConfig.from(p), SelectorProvider.provider());
    }

    /** The next frame, or null at end-of-stream before any byte of it. */
    private static byte[] readFrame(InputStream in) throws IOException {
        byte[] header = in.readNBytes(HandshakeMessages.HEADER_LENGTH);
        if (header.length == 0) {
            return null;
        }
        int length = HandshakeMessages.frameLength(ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH).put(header));
        ByteArrayOutputStream frame = new ByteArrayOutputStream();
        frame.writeBytes(header);
        frame.writeBytes(in.readNBytes(length - HandshakeMessages.HEADER_LENGTH));
        return frame.toByteArray();
    }

    @Test
    void shouldGoPlainWhenTheServerAnswersItsHelloWithPlain() throws Exception {
        int n = 2 * PendingHellos.MAX_PER_ADDRESS;
        long endpoints = client.resources().get("ucx.endpoints");
        ConcurrentLinkedQueue<Throwable> serverErrors = new ConcurrentLinkedQueue<>();
        try (ServerSocket server = new ServerSocket()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            // the server: a client's hello, answered PLAIN (as a server over its bound for
            // the client's host answers), then an echo of whatever comes after
            Thread acceptor = Thread.ofVirtual().start(() -> {
                for (int i = 0; i < n; i++) {
                    Socket s;
                    try {
                        s = server.accept();
                    } catch (IOException e) {
                        serverErrors.add(e);
                        return;
                    }
                    Thread.ofVirtual().start(() -> {
                        try (s) {
                            InputStream in = s.getInputStream();
                            OutputStream out = s.getOutputStream();
                            byte[] hello = readFrame(in);
                            HandshakeMessages.decodeHello(hello, HandshakeMessages.CLIENT_HELLO);
                            out.write(HandshakeMessages.signal(HandshakeMessages.PLAIN));
                            in.transferTo(out);
                        } catch (Throwable e) {
                            serverErrors.add(e);
                        }
                    });
                }
            });

            // all at once, as a connection pool opens them
            List<SocketChannel> channels = new ArrayList<>();
            List<ConnectionLifecycle> lives = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                SocketChannel tcp = SelectorProvider.provider().openSocketChannel();
                tcp.configureBlocking(false);
                tcp.connect(server.getLocalSocketAddress());
                ConnectionLifecycle life = ConnectionLifecycle.unconnected(client.control(), tcp);
                life.beginConnect();
                client.handshakes().connect(life);
                channels.add(tcp);
                lives.add(life);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            for (int i = 0; i < n; i++) {
                ConnectionLifecycle life = lives.get(i);
                assertTrue(life.awaitHandshake(deadline), "connect " + i + ": the handshake did not end");
                assertNull(life.takeOutcome(), "connect " + i + " failed on the server's PLAIN");
                assertTrue(life.isPlain(), "connect " + i + " is plain TCP");
                assertFalse(life.isAccelerated());
            }
            // plain TCP both ways, nothing of the handshake after the PLAIN (the echo would show it)
            for (int i = 0; i < n; i++) {
                SocketChannel tcp = channels.get(i);
                tcp.configureBlocking(true);
                byte[] ping = ("ping " + i).getBytes(StandardCharsets.US_ASCII);
                ByteBuffer out = ByteBuffer.wrap(ping);
                while (out.hasRemaining()) {
                    tcp.write(out);
                }
                ByteBuffer in = ByteBuffer.allocate(ping.length);
                while (in.hasRemaining() && tcp.read(in) >= 0) {
                    // until the echo is complete
                }
                assertArrayEquals(ping, in.array(), "connection " + i + " echoes as plain TCP");
                tcp.close();
            }
            acceptor.join(TimeUnit.SECONDS.toMillis(20));
        }
        assertTrue(serverErrors.isEmpty(), "the server: " + serverErrors);
        long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (client.handshakes().inProgress() > 0 && System.nanoTime() < until) {
            Thread.sleep(5);
        }
        assertEquals(0, client.handshakes().inProgress(), "handshakes still in progress");
        assertEquals(endpoints, client.resources().get("ucx.endpoints"), "a plain connect left an endpoint");
    }
}
