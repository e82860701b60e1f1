package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * ServerSocketChannel binds like the JDK's (port 0, null, the wildcard; a real local
 * address), serves hadroNIO clients from another JVM, and refuses plain TCP clients
 * without holding up the real ones; a client fails cleanly against no server or a
 * server that is not hadroNIO.
 */
@Timeout(60)
class ServerSocketChannelTest extends ItSupport {
    static final long N = (1 << 20) + 11;
    // the test JVM's -Dhadronio.handshake.timeout (see the pom): silent peers are refused after it
    static final int HANDSHAKE_TIMEOUT_MS = Integer.getInteger("hadronio.handshake.timeout", 10_000);

    /** Echoes one accepted connection until end-of-stream, then closes it. */
    private static Task<Long> echo(SocketChannel ch) {
        return start("echo", () -> {
            try (ch) {
                ByteBuffer buf = ByteBuffer.allocateDirect(50_000);
                long total = 0;
                int n;
                while ((n = ch.read(buf)) >= 0) {
                    total += n;
                    buf.flip();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                    buf.clear();
                }
                return total;
            }
        });
    }

    /** Lets a hadroNIO peer JVM connect and checks it is served: the accepted channel is its connection. */
    private static void assertServesAPeer(ServerSocketChannel server, Task<SocketChannel> acceptor) throws Exception {
        int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
        try (ChildJvm client = ChildJvm.withProvider("client", String.valueOf(port), String.valueOf(N))) {
            int clientPort = Integer.parseInt(client.expect("CONNECTED "));
            SocketChannel accepted = acceptor.result().get(30, TimeUnit.SECONDS);
            assertEquals(clientPort, ((InetSocketAddress) accepted.getRemoteAddress()).getPort(),
                    "the accepted channel is the hadroNIO client's connection");
            assertEquals(port, ((InetSocketAddress) accepted.getLocalAddress()).getPort());
            Task<Long> echo = echo(accepted);
            Data.Received r = Data.Received.parse(client.expect("RECEIVED "));
            assertEquals(N, r.count(), client::report);
            assertEquals(-1, r.firstMismatch());
            assertEquals(N, echo.result().get(30, TimeUnit.SECONDS));
        }
    }

    @Test
    void shouldBindToAnEphemeralPortAndServeAPeerJvm() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            assertEquals(null, server.getLocalAddress(), "unbound");
            server.bind(loopback(0));
            InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
            assertNotEquals(0, local.getPort());
            assertEquals(LOOPBACK, local.getAddress());
            assertTrue(server.socket().isBound());
            assertEquals(local.getPort(), server.socket().getLocalPort());
            assertServesAPeer(server, start("acceptor", server::accept));
        }
    }

    @Test
    void shouldBindToTheWildcardAddressWithNull() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(null);
            InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
            assertTrue(local.getAddress().isAnyLocalAddress(), "bound to " + local);
            assertNotEquals(0, local.getPort());
            assertServesAPeer(server, start("acceptor", server::accept));
        }
    }

    @Test
    void shouldBindToAnExplicitWildcardAddress() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(0), 5);
            InetSocketAddress local = (InetSocketAddress) server.getLocalAddress();
            assertTrue(local.getAddress().isAnyLocalAddress(), "bound to " + local);
            assertServesAPeer(server, start("acceptor", server::accept));
        }
    }

    @Test
    void shouldOccupyItsPortLikeAKernelListener() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            // the port is really taken: a plain listener cannot bind it
            try (ServerSocket plain = new ServerSocket()) {
                assertThrows(java.net.BindException.class, () -> plain.bind(loopback(port)));
            }
        }
    }

    @Test
    void shouldThrowConnectExceptionWhenNobodyListens() throws Exception {
        int port;
        try (ServerSocket gone = new ServerSocket(0, 1, LOOPBACK)) {
            port = gone.getLocalPort();
        }
        SocketChannel ch = SocketChannel.open();
        assertThrows(ConnectException.class, () -> ch.connect(loopback(port)));
        assertFalse(ch.isOpen(), "a failed connect closes the channel");
        assertThrows(ConnectException.class, () -> SocketChannel.open(loopback(port)));
    }

    @Test
    void shouldServeAPlainTcpClientAsPlainTcpAndAHadronioClientAfterwards() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            try (ChildJvm plain = ChildJvm.withoutProvider("plain-client", String.valueOf(port), "garbage")) {
                plain.expect("CONNECTED ");
                try (SocketChannel accepted = server.accept()) {
                    assertEquals("tcp", accepted.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT));
                    byte[] request = "GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
                    java.nio.ByteBuffer got = java.nio.ByteBuffer.allocate(request.length);
                    while (got.hasRemaining()) {
                        assertTrue(accepted.read(got) > 0, "the plain client's request arrives whole");
                    }
                    assertArrayEquals(request, got.array(), "byte for byte, nothing consumed by hadroNIO");
                    byte[] reply = "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
                    accepted.write(java.nio.ByteBuffer.wrap(reply));
                    accepted.close();
                    assertEquals("EOF " + reply.length, "EOF " + plain.expect("EOF "));
                }
            }
            assertServesAPeer(server, start("acceptor", server::accept));
        }
    }

    @Test
    void shouldAcceptASilentPlainClientAtOnceAndServeAHadronioClientMeanwhile() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            try (ChildJvm silent = ChildJvm.withoutProvider("plain-client", String.valueOf(port), "silent")) {
                int silentPort = Integer.parseInt(silent.expect("CONNECTED "));
                // a plain client is plain TCP from the start: accept() returns it without waiting for bytes
                SocketChannel plain = server.accept();
                assertEquals(silentPort, ((InetSocketAddress) plain.getRemoteAddress()).getPort());
                assertEquals("tcp", plain.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT));
                assertServesAPeer(server, start("acceptor", server::accept));
                plain.close();
                assertEquals("0", silent.expect("EOF "));
            }
        }
    }

    @Test
    void shouldConnectPlainlyToAPlainServerThatNeverAnswers() throws Exception {
        // a kernel listener: its backlog completes the TCP handshake; our client must not wait for anything
        try (ServerSocket silent = new ServerSocket(0, 50, LOOPBACK);
             SocketChannel ch = SocketChannel.open(loopback(silent.getLocalPort()))) {
            assertEquals("tcp", ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT));
            try (Socket s = silent.accept()) {
                ch.write(java.nio.ByteBuffer.wrap(new byte[] {1, 2, 3}));
                assertArrayEquals(new byte[] {1, 2, 3}, s.getInputStream().readNBytes(3),
                        "the plain server reads our bytes, and no handshake before them");
            }
        }
    }

    @Test
    void shouldTalkPlainlyToAPlainServerThatSpeaksFirst() throws Exception {
        byte[] greeting = "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        try (ServerSocket http = new ServerSocket(0, 50, LOOPBACK)) {
            Task<Void> server = start("http", () -> {
                try (Socket s = http.accept()) {
                    OutputStream out = s.getOutputStream();
                    out.write(greeting);
                    out.flush();
                }
                return null;
            });
            try (SocketChannel ch = SocketChannel.open(loopback(http.getLocalPort()))) {
                java.nio.ByteBuffer got = java.nio.ByteBuffer.allocate(greeting.length + 1);
                while (ch.read(got) >= 0) {
                    // to the end
                }
                assertArrayEquals(greeting, java.util.Arrays.copyOf(got.array(), got.position()));
            }
            server.result().get(30, TimeUnit.SECONDS);
        }
    }
}
