package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The {@code socket()} adaptors' exceptions, row by row: each row is one adaptor operation in
 * one condition and what the JDK's adaptor does there (JDK 25). A row runs on the JDK's
 * provider, which must still do what the row says (else the table is out of date), and then on
 * hadroNIO, which must do the same: the exception's class and message, or the value returned,
 * and for a connect whether the socket was left closed. The table's rules are in
 * {@code io.hadronio.nio.AdaptorExceptions}.
 */
@Timeout(60)
class AdaptorExceptionContractTest extends ContractSupport {
    private static final InetSocketAddress UNRESOLVED = InetSocketAddress.createUnresolved("no.such.host.invalid", 80);
    private static final String UNKNOWN_HOST = "UnknownHostException: no.such.host.invalid/<unresolved>:80";
    private static final String CLOSED = "SocketException: Socket is closed";
    private static final String NOT_CONNECTED = "SocketException: Socket is not connected";

    /** One row of the table: an operation in a condition, and what the JDK's adaptor does. */
    record Row(String name, String expected, Op op) {
        @Override
        public String toString() {
            return name;
        }
    }

    interface Op {
        Object run(Scope s) throws Exception;
    }

    /** A SocketAddress no socket supports. */
    private static final class OddAddress extends SocketAddress {
    }

    /**
     * What one row runs on one provider: the channels it opens (closed after the row) and the
     * state it reports after its operation.
     */
    static final class Scope implements AutoCloseable {
        final SelectorProvider provider;
        private final List<AutoCloseable> opened = new ArrayList<>();
        private Supplier<String> after;

        Scope(SelectorProvider provider) {
            this.provider = provider;
        }

        /** Reports {@code state} after the operation, as part of the row's outcome. */
        void then(Supplier<String> state) {
            after = state;
        }

        /** Reports whether {@code socket} is closed after the operation. */
        Socket closedAfter(Socket socket) {
            then(() -> "closed=" + socket.isClosed());
            return socket;
        }

        <T extends AutoCloseable> T keep(T c) {
            opened.add(c);
            return c;
        }

        Socket unconnected() throws IOException {
            return keep(provider.openSocketChannel()).socket();
        }

        Socket connected() throws IOException {
            Connected pair = keep(connect(provider));
            return pair.client().socket();
        }

        Socket closed() throws IOException {
            Socket s = unconnected();
            s.close();
            return s;
        }

        ServerSocket unboundServer() throws IOException {
            return keep(provider.openServerSocketChannel()).socket();
        }

        ServerSocket boundServer() throws IOException {
            ServerSocket s = unboundServer();
            s.bind(new InetSocketAddress(LOOPBACK, 0));
            return s;
        }

        ServerSocket closedServer() throws IOException {
            ServerSocket s = unboundServer();
            s.close();
            return s;
        }

        /** An address of this host where nothing listens. */
        InetSocketAddress deadAddress() throws IOException {
            try (ServerSocket s = new ServerSocket(0, 1, LOOPBACK)) {
                return new InetSocketAddress(LOOPBACK, s.getLocalPort());
            }
        }

        /**
         * A listener that takes no connection: a plain socket whose accept queue (backlog 1)
         * is full, so that the kernel drops further SYNs and a connect to it stays pending.
         */
        InetSocketAddress fullListener() throws IOException {
            ServerSocket full = keep(new ServerSocket(0, 1, LOOPBACK));
            // the queue holds two connections the listener never accepts
            for (int i = 0; i < 2; i++) {
                Socket filler = keep(new Socket());
                filler.connect(full.getLocalSocketAddress(), 5000);
            }
            return new InetSocketAddress(LOOPBACK, full.getLocalPort());
        }

        /** A blocking channel whose non-blocking connect is pending. */
        SocketChannel pending() throws IOException {
            SocketChannel ch = keep(provider.openSocketChannel());
            ch.configureBlocking(false);
            assertFalse(ch.connect(fullListener()), "precondition: the connect to a full listener stays pending");
            assertTrue(ch.isConnectionPending());
            ch.configureBlocking(true);
            return ch;
        }

        @Override
        public void close() throws Exception {
            for (int i = opened.size() - 1; i >= 0; i--) {
                opened.get(i).close();
            }
        }
    }

    private static Row row(String name, String expected, Op op) {
        return new Row(name, expected, op);
    }

    static Stream<Row> rows() {
        return Stream.of(
                // ---- Socket.bind
                row("socket: bind twice", "SocketException: Already bound", s -> {
                    Socket so = s.unconnected();
                    so.bind(new InetSocketAddress(LOOPBACK, 0));
                    so.bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("socket: bind when connected", "SocketException: Already bound", s -> {
                    s.connected().bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("socket: bind while a connect is pending", "ConnectionPendingException", s -> {
                    s.pending().socket().bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("socket: bind after close", "ClosedChannelException", s -> {
                    s.closed().bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("socket: bind to an unresolved address", "SocketException: Unresolved address", s -> {
                    s.unconnected().bind(InetSocketAddress.createUnresolved("no.such.host.invalid", 0));
                    return null;
                }),
                row("socket: bind to an unsupported address type", "SocketException: Unsupported address type", s -> {
                    s.unconnected().bind(new OddAddress());
                    return null;
                }),
                row("socket: bind to a port in use", "BindException: Address already in use", s -> {
                    s.unconnected().bind(s.boundServer().getLocalSocketAddress());
                    return null;
                }),
                // ---- Socket.connect
                row("socket: connect to null", "IllegalArgumentException: connect: The address can't be null", s -> {
                    s.unconnected().connect(null);
                    return null;
                }),
                row("socket: connect with a negative timeout",
                        "IllegalArgumentException: connect: timeout can't be negative", s -> {
                            s.unconnected().connect(s.boundServer().getLocalSocketAddress(), -1);
                            return null;
                        }),
                row("socket: connect to an unresolved address", UNKNOWN_HOST + " | closed=true", s -> {
                    s.closedAfter(s.unconnected()).connect(UNRESOLVED);
                    return null;
                }),
                row("socket: connect to an unresolved address when connected", "SocketException: Already connected", s -> {
                    s.connected().connect(UNRESOLVED);
                    return null;
                }),
                row("socket: connect to an unresolved address after close", CLOSED, s -> {
                    s.closed().connect(UNRESOLVED);
                    return null;
                }),
                row("socket: connect to an unsupported address type",
                        "SocketException: Unsupported address type | closed=false", s -> {
                            s.closedAfter(s.unconnected()).connect(new OddAddress());
                            return null;
                        }),
                row("socket: connect when connected", "SocketException: Already connected | closed=false", s -> {
                    Socket so = s.closedAfter(s.connected());
                    so.connect(so.getRemoteSocketAddress());
                    return null;
                }),
                row("socket: connect while a connect is pending", "ConnectionPendingException", s -> {
                    // any address: the pending connect is found before it is used
                    s.pending().socket().connect(s.deadAddress());
                    return null;
                }),
                row("socket: connect after close", "AsynchronousCloseException", s -> {
                    s.closed().connect(s.boundServer().getLocalSocketAddress());
                    return null;
                }),
                row("socket: connect with a timeout after close", "AsynchronousCloseException", s -> {
                    s.closed().connect(s.boundServer().getLocalSocketAddress(), 1000);
                    return null;
                }),
                row("socket: connect in non-blocking mode", "IllegalBlockingModeException", s -> {
                    SocketChannel ch = s.keep(s.provider.openSocketChannel());
                    ch.configureBlocking(false);
                    ch.socket().connect(s.boundServer().getLocalSocketAddress());
                    return null;
                }),
                row("socket: connect to an unsupported address type in non-blocking mode",
                        "SocketException: Unsupported address type", s -> {
                            SocketChannel ch = s.keep(s.provider.openSocketChannel());
                            ch.configureBlocking(false);
                            ch.socket().connect(new OddAddress());
                            return null;
                        }),
                row("socket: connect refused", "ConnectException: Connection refused | closed=true", s -> {
                    s.closedAfter(s.unconnected()).connect(s.deadAddress());
                    return null;
                }),
                row("socket: connect after a refused connect", "AsynchronousCloseException", s -> {
                    Socket so = s.unconnected();
                    try {
                        so.connect(s.deadAddress());
                    } catch (java.net.ConnectException expected) {
                        // the failed connect closed the socket
                    }
                    so.connect(s.boundServer().getLocalSocketAddress());
                    return null;
                }),
                row("socket: connect timed out", "SocketTimeoutException: Connect timed out | closed=true", s -> {
                    s.closedAfter(s.unconnected()).connect(s.fullListener(), 300);
                    return null;
                }),
                // ---- Socket streams
                row("socket: getInputStream unconnected", NOT_CONNECTED, s -> s.unconnected().getInputStream()),
                row("socket: getInputStream after close", CLOSED, s -> s.closed().getInputStream()),
                row("socket: getInputStream after shutdownInput", "SocketException: Socket input is shutdown", s -> {
                    Socket so = s.connected();
                    so.shutdownInput();
                    return so.getInputStream();
                }),
                row("socket: getOutputStream unconnected", NOT_CONNECTED, s -> s.unconnected().getOutputStream()),
                row("socket: getOutputStream after close", CLOSED, s -> s.closed().getOutputStream()),
                row("socket: getOutputStream after shutdownOutput", "SocketException: Socket output is shutdown", s -> {
                    Socket so = s.connected();
                    so.shutdownOutput();
                    return so.getOutputStream();
                }),
                row("stream: read after close", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.close();
                    return in.read(new byte[4]);
                }),
                row("stream: read of nothing after close", "returns 0", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.close();
                    return in.read(new byte[4], 0, 0);
                }),
                row("stream: read in non-blocking mode", "IllegalBlockingModeException", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.getChannel().configureBlocking(false);
                    return in.read();
                }),
                row("stream: read in non-blocking mode after close", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.getChannel().configureBlocking(false);
                    so.close();
                    return in.read();
                }),
                row("stream: read after shutdownInput", "returns -1", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.shutdownInput();
                    return in.read();
                }),
                row("stream: read past SO_TIMEOUT", "SocketTimeoutException: Read timed out", s -> {
                    Socket so = s.connected();
                    so.setSoTimeout(100);
                    return so.getInputStream().read();
                }),
                row("stream: available after close", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    InputStream in = so.getInputStream();
                    so.close();
                    return in.available();
                }),
                row("stream: write after close", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    OutputStream out = so.getOutputStream();
                    so.close();
                    out.write(new byte[4]);
                    return null;
                }),
                row("stream: write of nothing after close", "returns null", s -> {
                    Socket so = s.connected();
                    OutputStream out = so.getOutputStream();
                    so.close();
                    out.write(new byte[4], 0, 0);
                    return null;
                }),
                row("stream: write after shutdownOutput", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    OutputStream out = so.getOutputStream();
                    so.shutdownOutput();
                    out.write(1);
                    return null;
                }),
                row("stream: write in non-blocking mode", "IllegalBlockingModeException", s -> {
                    Socket so = s.connected();
                    OutputStream out = so.getOutputStream();
                    so.getChannel().configureBlocking(false);
                    out.write(1);
                    return null;
                }),
                row("stream: write in non-blocking mode after close", "ClosedChannelException", s -> {
                    Socket so = s.connected();
                    OutputStream out = so.getOutputStream();
                    so.getChannel().configureBlocking(false);
                    so.close();
                    out.write(1);
                    return null;
                }),
                // ---- Socket shutdown and urgent data
                row("socket: shutdownInput twice", "returns null", s -> {
                    Socket so = s.connected();
                    so.shutdownInput();
                    so.shutdownInput();
                    return null;
                }),
                row("socket: shutdownOutput twice", "returns null", s -> {
                    Socket so = s.connected();
                    so.shutdownOutput();
                    so.shutdownOutput();
                    return null;
                }),
                row("socket: shutdownInput unconnected", NOT_CONNECTED, s -> {
                    s.unconnected().shutdownInput();
                    return null;
                }),
                row("socket: shutdownOutput unconnected", NOT_CONNECTED, s -> {
                    s.unconnected().shutdownOutput();
                    return null;
                }),
                row("socket: shutdownInput after close", "ClosedChannelException", s -> {
                    s.closed().shutdownInput();
                    return null;
                }),
                row("socket: shutdownOutput after close", "ClosedChannelException", s -> {
                    s.closed().shutdownOutput();
                    return null;
                }),
                row("socket: sendUrgentData after close", "ClosedChannelException", s -> {
                    s.closed().sendUrgentData(1);
                    return null;
                }),
                row("socket: sendUrgentData unconnected", "NotYetConnectedException", s -> {
                    s.unconnected().sendUrgentData(1);
                    return null;
                }),
                row("socket: sendUrgentData after shutdownOutput", "AsynchronousCloseException", s -> {
                    Socket so = s.connected();
                    so.shutdownOutput();
                    so.sendUrgentData(1);
                    return null;
                }),
                // ---- Socket options on a closed socket: the classic ones are SocketExceptions
                row("socket: setTcpNoDelay after close", CLOSED, s -> {
                    s.closed().setTcpNoDelay(true);
                    return null;
                }),
                row("socket: getTcpNoDelay after close", CLOSED, s -> s.closed().getTcpNoDelay()),
                row("socket: setSoLinger after close", CLOSED, s -> {
                    s.closed().setSoLinger(true, 1);
                    return null;
                }),
                row("socket: getSoLinger after close", CLOSED, s -> s.closed().getSoLinger()),
                row("socket: setOOBInline after close", CLOSED, s -> {
                    s.closed().setOOBInline(true);
                    return null;
                }),
                row("socket: getOOBInline after close", CLOSED, s -> s.closed().getOOBInline()),
                row("socket: setSoTimeout after close", CLOSED, s -> {
                    s.closed().setSoTimeout(1);
                    return null;
                }),
                row("socket: getSoTimeout after close", CLOSED, s -> s.closed().getSoTimeout()),
                row("socket: setSendBufferSize after close", CLOSED, s -> {
                    s.closed().setSendBufferSize(1000);
                    return null;
                }),
                row("socket: getSendBufferSize after close", CLOSED, s -> s.closed().getSendBufferSize()),
                row("socket: setReceiveBufferSize after close", CLOSED, s -> {
                    s.closed().setReceiveBufferSize(1000);
                    return null;
                }),
                row("socket: getReceiveBufferSize after close", CLOSED, s -> s.closed().getReceiveBufferSize()),
                row("socket: setKeepAlive after close", CLOSED, s -> {
                    s.closed().setKeepAlive(true);
                    return null;
                }),
                row("socket: getKeepAlive after close", CLOSED, s -> s.closed().getKeepAlive()),
                row("socket: setTrafficClass after close", CLOSED, s -> {
                    s.closed().setTrafficClass(0);
                    return null;
                }),
                row("socket: getTrafficClass after close", CLOSED, s -> s.closed().getTrafficClass()),
                row("socket: setReuseAddress after close", CLOSED, s -> {
                    s.closed().setReuseAddress(true);
                    return null;
                }),
                row("socket: getReuseAddress after close", CLOSED, s -> s.closed().getReuseAddress()),
                // the generic ones are the channel's, untranslated
                row("socket: setOption after close", "ClosedChannelException", s -> {
                    s.closed().setOption(StandardSocketOptions.TCP_NODELAY, true);
                    return null;
                }),
                row("socket: getOption after close", "ClosedChannelException",
                        s -> s.closed().getOption(StandardSocketOptions.TCP_NODELAY)),
                row("socket: setOption unsupported", "UnsupportedOperationException: 'IP_MULTICAST_TTL' not supported", s -> {
                    s.unconnected().setOption(StandardSocketOptions.IP_MULTICAST_TTL, 1);
                    return null;
                }),
                row("socket: setSendBufferSize(0)", "IllegalArgumentException: Invalid send size", s -> {
                    s.unconnected().setSendBufferSize(0);
                    return null;
                }),
                row("socket: setReceiveBufferSize(0)", "IllegalArgumentException: Invalid receive size", s -> {
                    s.unconnected().setReceiveBufferSize(0);
                    return null;
                }),
                row("socket: setSoTimeout(-1)", "IllegalArgumentException: timeout < 0", s -> {
                    s.unconnected().setSoTimeout(-1);
                    return null;
                }),
                row("socket: setTrafficClass(300)", "IllegalArgumentException: Invalid IP_TOS value", s -> {
                    s.unconnected().setTrafficClass(300);
                    return null;
                }),
                // ---- ServerSocket.bind
                row("server: bind twice", "SocketException: Already bound", s -> {
                    s.boundServer().bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("server: bind after close", "ClosedChannelException", s -> {
                    s.closedServer().bind(new InetSocketAddress(LOOPBACK, 0));
                    return null;
                }),
                row("server: bind to an unresolved address", "SocketException: Unresolved address", s -> {
                    s.unboundServer().bind(InetSocketAddress.createUnresolved("no.such.host.invalid", 0));
                    return null;
                }),
                row("server: bind to an unsupported address type", "SocketException: Unsupported address type", s -> {
                    s.unboundServer().bind(new OddAddress());
                    return null;
                }),
                row("server: bind to a port in use", "BindException: Address already in use", s -> {
                    s.unboundServer().bind(s.boundServer().getLocalSocketAddress());
                    return null;
                }),
                row("server: bind to null", "returns true", s -> {
                    ServerSocket so = s.unboundServer();
                    so.bind(null);
                    return so.isBound();
                }),
                // ---- ServerSocket.accept
                row("server: accept unbound", "SocketException: Socket is not bound yet", s -> s.unboundServer().accept()),
                row("server: accept unbound with SO_TIMEOUT", "SocketException: Socket is not bound yet", s -> {
                    ServerSocket so = s.unboundServer();
                    so.setSoTimeout(100);
                    return so.accept();
                }),
                row("server: accept after close", "ClosedChannelException", s -> s.closedServer().accept()),
                row("server: accept with SO_TIMEOUT after close", "AsynchronousCloseException", s -> {
                    ServerSocket so = s.boundServer();
                    so.setSoTimeout(100);
                    so.close();
                    return so.accept();
                }),
                row("server: accept in non-blocking mode, nothing waiting", "IllegalBlockingModeException", s -> {
                    ServerSocket so = s.boundServer();
                    so.getChannel().configureBlocking(false);
                    return so.accept();
                }),
                row("server: accept in non-blocking mode with SO_TIMEOUT", "IllegalBlockingModeException", s -> {
                    ServerSocket so = s.boundServer();
                    so.getChannel().configureBlocking(false);
                    so.setSoTimeout(100);
                    return so.accept();
                }),
                row("server: accept in non-blocking mode, a connection waiting", "returns true", s -> {
                    ServerSocket so = s.boundServer();
                    s.keep(s.provider.openSocketChannel()).connect(so.getLocalSocketAddress());
                    so.getChannel().configureBlocking(false);
                    // the connection is there once the listener has it (hadroNIO's eager mode:
                    // after its handshake); until then the adaptor says it would block
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    while (true) {
                        try {
                            return s.keep(so.accept()).isConnected();
                        } catch (IllegalBlockingModeException notYet) {
                            if (System.nanoTime() > deadline) {
                                throw notYet;
                            }
                            Thread.sleep(5);
                        }
                    }
                }),
                row("server: accept past SO_TIMEOUT", "SocketTimeoutException: Accept timed out", s -> {
                    ServerSocket so = s.boundServer();
                    so.setSoTimeout(100);
                    return so.accept();
                }),
                // ---- ServerSocket options
                row("server: setSoTimeout after close", CLOSED, s -> {
                    s.closedServer().setSoTimeout(1);
                    return null;
                }),
                row("server: getSoTimeout after close", CLOSED, s -> s.closedServer().getSoTimeout()),
                row("server: setReuseAddress after close", CLOSED, s -> {
                    s.closedServer().setReuseAddress(true);
                    return null;
                }),
                row("server: getReuseAddress after close", CLOSED, s -> s.closedServer().getReuseAddress()),
                row("server: setReceiveBufferSize after close", CLOSED, s -> {
                    s.closedServer().setReceiveBufferSize(1000);
                    return null;
                }),
                row("server: getReceiveBufferSize after close", CLOSED, s -> s.closedServer().getReceiveBufferSize()),
                row("server: setOption after close", "ClosedChannelException", s -> {
                    s.closedServer().setOption(StandardSocketOptions.SO_RCVBUF, 1000);
                    return null;
                }),
                row("server: getOption after close", "ClosedChannelException",
                        s -> s.closedServer().getOption(StandardSocketOptions.SO_RCVBUF)),
                row("server: setReceiveBufferSize(0)", "IllegalArgumentException: size cannot be 0 or negative", s -> {
                    s.unboundServer().setReceiveBufferSize(0);
                    return null;
                }),
                row("server: setSoTimeout(-1)", "IllegalArgumentException: timeout < 0", s -> {
                    s.unboundServer().setSoTimeout(-1);
                    return null;
                }));
    }

    /** What the row's operation does on {@code provider}: the exception, or the value it returns. */
    private static String outcome(SelectorProvider provider, Row row) throws Exception {
        String result;
        Supplier<String> after;
        try (Scope s = new Scope(provider)) {
            try {
                Object value = row.op().run(s);
                result = "returns " + value;
            } catch (Exception e) {
                result = e.getClass().getSimpleName() + (e.getMessage() == null ? "" : ": " + e.getMessage());
            }
            after = s.after;
            if (after != null) {
                result += " | " + after.get();
            }
        }
        return result;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("rows")
    void shouldThrowWhatTheJdksAdaptorThrows(Row row) throws Exception {
        assertTrue(HADRONIO.isAccelerated(), "UCX must be available");
        String jdk = outcome(HADRONIO.platform(), row);
        assertEquals(row.expected(), jdk, row + ": the JDK's adaptor no longer does what the row says");
        assertEquals(jdk, outcome(HADRONIO, row), row + ": hadroNIO's adaptor");
    }
}
