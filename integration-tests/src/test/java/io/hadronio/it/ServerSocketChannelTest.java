package io.hadronio.it;

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
    void shouldRefuseAPlainTcpClientSendingGarbageAndServeAHadronioClientAfterwards() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            Task<SocketChannel> acceptor = start("acceptor", server::accept);
            try (ChildJvm plain = ChildJvm.withoutProvider("plain-client", String.valueOf(port), "garbage")) {
                plain.expect("CONNECTED ");
                String outcome = plain.expect("");
                assertTrue(outcome.startsWith("EOF 0") || outcome.startsWith("RESET"),
                        "the plain client is disconnected without an answer: " + outcome);
            }
            assertFalse(acceptor.result().isDone(), "accept() did not return the plain client");
            assertServesAPeer(server, acceptor);
        }
    }

    @Test
    void shouldServeAHadronioClientWhileASilentPlainClientWaitsAndThenRefuseTheSilentOne() throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0))) {
            int port = ((InetSocketAddress) server.getLocalAddress()).getPort();
            Task<SocketChannel> acceptor = start("acceptor", server::accept);
            try (ChildJvm silent = ChildJvm.withoutProvider("plain-client", String.valueOf(port), "silent")) {
                silent.expect("CONNECTED ");
                // the silent client's handshake is pending; a real client is served meanwhile
                assertServesAPeer(server, acceptor);
                // and the silent one is dropped once the handshake timeout passes
                String outcome = silent.expect("");
                assertTrue(outcome.startsWith("EOF 0") || outcome.startsWith("RESET"),
                        "the silent client is disconnected: " + outcome);
            }
        }
    }

    @Test
    void shouldFailWithinTheHandshakeTimeoutAgainstAPlainServerThatNeverAnswers() throws Exception {
        assertTrue(HANDSHAKE_TIMEOUT_MS <= 5000, "this test needs a short -Dhadronio.handshake.timeout");
        // a kernel listener: its backlog completes the TCP handshake, nobody ever reads or writes
        try (ServerSocket silent = new ServerSocket(0, 50, LOOPBACK)) {
            SocketChannel ch = SocketChannel.open();
            Task<Boolean> connect = start("connect", () -> ch.connect(loopback(silent.getLocalPort())));
            Throwable failure;
            try {
                // a hang guard well below the default timeout (10 s): the 2 s setting must count
                connect.result().get(HANDSHAKE_TIMEOUT_MS + 4000L, TimeUnit.MILLISECONDS);
                failure = null;
            } catch (ExecutionException e) {
                failure = e.getCause();
            } catch (TimeoutException e) {
                throw new AssertionError("connect to a silent server still running after the handshake timeout");
            }
            assertInstanceOf(IOException.class, failure, "connect to a server that is not hadroNIO");
            assertFalse(ch.isOpen());
        }
    }

    @Test
    void shouldFailAgainstAPlainServerThatAnswersWithSomethingElse() throws Exception {
        try (ServerSocket http = new ServerSocket(0, 50, LOOPBACK)) {
            Task<Void> server = start("http", () -> {
                try (Socket s = http.accept()) {
                    OutputStream out = s.getOutputStream();
                    out.write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                    out.flush();
                    InputStream in = s.getInputStream();
                    try {
                        while (in.read() >= 0) {
                            // until the client gives up
                        }
                    } catch (IOException e) {
                        // or resets the connection
                    }
                }
                return null;
            });
            IOException e = assertThrows(IOException.class, () -> SocketChannel.open(loopback(http.getLocalPort())));
            assertFalse(e instanceof java.nio.channels.AsynchronousCloseException, "the cause is reported: " + e);
            server.result().get(30, TimeUnit.SECONDS);
        }
    }
}
