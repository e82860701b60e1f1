package io.hadronio.it;

import static java.nio.channels.SelectionKey.OP_READ;
import static java.nio.channels.SelectionKey.OP_WRITE;

import io.hadronio.HadronioSocketOptions;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The provider's contract as two roles, a server's and a client's, that run on whatever
 * connection they are given: a hadroNIO channel, a JDK channel or a {@link Socket}, in
 * the test JVM or in a {@link Peer} child ({@code contract} mode). A test runs one role
 * here and the other in a child, so every pairing of accelerated and plain processes
 * runs the same code on both sides. A role returns normally when its side of the
 * contract held and throws (an {@link AssertionError} or the I/O error) when it did not.
 *
 * <p>The child's side is driven over stdin ({@link #peer()}), one command a line:
 * <ul>
 * <li>{@code accept id CASE n seed}: accept the next connection on the listener, run the
 *     server role of CASE;
 * <li>{@code connect id port CASE n seed}: connect to 127.0.0.1:port, run the client role;
 * <li>{@code listen port [address]}: close the listener and listen on this port (0: any)
 *     of 127.0.0.1 or the address instead (SO_REUSEADDR; an IPv4 address gives an IPv4-only
 *     socket, an IPv6 one an IPv6 socket), prints {@code LISTENING port};
 * <li>{@code exit}: exit the JVM.
 * </ul>
 * After a role the child prints {@code RESULT id transport OK} or
 * {@code RESULT id transport FAIL what}, where transport is the channel's
 * {@link HadronioSocketOptions#TRANSPORT} right after connect/accept, or {@code jdk} for a
 * channel that is not hadroNIO's.
 */
final class Contract {
    static final String GREETING = "220 hadronio-it ready\r\n";
    static final String QUIT = "QUIT\r\n";
    static final String BYE = "221 bye\r\n";

    /** What one connection does; each has a server role and a client role. */
    enum Case {
        /** Blocking echo: the client writes n random bytes and shuts its output, the server echoes until end-of-stream. */
        ECHO,
        /**
         * The same with non-blocking channels driven by a Selector on each channel side, from
         * the connect (OP_CONNECT) and the accept (OP_ACCEPT) on ({@link Socket}s stay blocking).
         */
        SELECT_ECHO,
        /** Server-first: the server greets right after accept, the client reads before it writes anything. */
        SERVER_FIRST,
        /** The client writes n bytes and shuts its output; the server reads to end-of-stream, then answers n+1 bytes. */
        HALF_CLOSE_BY_CLIENT,
        /** The server writes n bytes and shuts its output; the client reads to end-of-stream, then answers n+1 bytes. */
        HALF_CLOSE_BY_SERVER,
        /** The server writes n bytes and closes; the client reads them all, then end-of-stream. */
        CLOSE_BY_SERVER,
        /** The client writes n bytes and closes; the server reads them all, then end-of-stream. */
        CLOSE_BY_CLIENT,
        /** The server closes with SO_LINGER 0; the client's read fails with an IOException. */
        RESET_BY_SERVER,
        /** The client closes with SO_LINGER 0; the server's read fails with an IOException. */
        RESET_BY_CLIENT
    }

    private Contract() {
    }

    // ---- connections -------------------------------------------------------------------------

    /** A connected stream of either kind: what the roles need of it. */
    interface Conn extends Closeable {
        /** A blocking read into a heap buffer: bytes read, or -1 at end-of-stream. */
        int read(ByteBuffer b) throws IOException;

        /** Writes all of b (blocking). */
        void write(ByteBuffer b) throws IOException;

        void shutdownOutput() throws IOException;

        /** SO_LINGER 0: the next close() resets the connection. */
        void lingerZero() throws IOException;

        /** The channel, or null for a {@link Socket}. */
        SocketChannel channel();

        /** {@link HadronioSocketOptions#TRANSPORT} of a hadroNIO channel, {@code jdk} for anything else. */
        String transport() throws IOException;
    }

    static Conn of(SocketChannel ch) {
        return new Conn() {
            @Override
            public int read(ByteBuffer b) throws IOException {
                return ch.read(b);
            }

            @Override
            public void write(ByteBuffer b) throws IOException {
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }

            @Override
            public void shutdownOutput() throws IOException {
                ch.shutdownOutput();
            }

            @Override
            public void lingerZero() throws IOException {
                ch.setOption(StandardSocketOptions.SO_LINGER, 0);
            }

            @Override
            public SocketChannel channel() {
                return ch;
            }

            @Override
            public String transport() throws IOException {
                return Contract.transport(ch);
            }

            @Override
            public void close() throws IOException {
                ch.close();
            }
        };
    }

    static Conn of(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        return new Conn() {
            @Override
            public int read(ByteBuffer b) throws IOException {
                if (!b.hasRemaining()) {
                    return 0;
                }
                int r = in.read(b.array(), b.arrayOffset() + b.position(), b.remaining());
                if (r > 0) {
                    b.position(b.position() + r);
                }
                return r;
            }

            @Override
            public void write(ByteBuffer b) throws IOException {
                out.write(b.array(), b.arrayOffset() + b.position(), b.remaining());
                b.position(b.limit());
            }

            @Override
            public void shutdownOutput() throws IOException {
                s.shutdownOutput();
            }

            @Override
            public void lingerZero() throws IOException {
                s.setSoLinger(true, 0);
            }

            @Override
            public SocketChannel channel() {
                return null;
            }

            @Override
            public String transport() {
                return "jdk";
            }

            @Override
            public void close() throws IOException {
                s.close();
            }
        };
    }

    static String transport(SocketChannel ch) throws IOException {
        return ChannelPath.of(ch);
    }

    // ---- data --------------------------------------------------------------------------------

    static byte[] random(long n, long seed) {
        byte[] b = new byte[Math.toIntExact(n)];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    private static byte[] ascii(String s) {
        return s.getBytes(StandardCharsets.US_ASCII);
    }

    /** Reads until end-of-stream; fails as soon as more than limit bytes came. */
    static byte[] readToEnd(Conn conn, int limit, String what) throws IOException {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        while (true) {
            buf.clear();
            int r = conn.read(buf);
            if (r < 0) {
                return got.toByteArray();
            }
            got.write(buf.array(), 0, r);
            if (got.size() > limit) {
                throw new AssertionError(what + ": more than the " + limit + " bytes expected before end-of-stream");
            }
        }
    }

    /** Reads exactly expected.length bytes and checks them. */
    static void expectExactly(Conn conn, byte[] expected, String what) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(expected.length);
        while (buf.hasRemaining()) {
            if (conn.read(buf) < 0) {
                throw new AssertionError(what + ": end-of-stream after " + buf.position() + " of "
                        + expected.length + " bytes");
            }
        }
        assertSame(expected, buf.array(), what);
    }

    /** Reads to end-of-stream and checks it is exactly expected. */
    static void expectStream(Conn conn, byte[] expected, String what) throws IOException {
        assertSame(expected, readToEnd(conn, expected.length, what), what);
    }

    static void assertSame(byte[] expected, byte[] got, String what) {
        int m = Arrays.mismatch(expected, got);
        if (m >= 0) {
            throw new AssertionError(what + ": got " + got.length + " bytes for " + expected.length
                    + ", first difference at offset " + m);
        }
    }

    // ---- roles -------------------------------------------------------------------------------

    static void server(Case c, Conn conn, long n, long seed) throws Exception {
        switch (c) {
            case ECHO -> echo(conn);
            case SELECT_ECHO -> {
                if (conn.channel() != null) {
                    selectEcho(conn.channel());
                } else {
                    echo(conn);
                }
            }
            case SERVER_FIRST -> {
                // at once, before anything came from the client
                conn.write(ByteBuffer.wrap(ascii(GREETING)));
                expectExactly(conn, ascii(QUIT), "the client's command");
                conn.write(ByteBuffer.wrap(ascii(BYE)));
                // nothing but what the client application wrote reaches us
                expectStream(conn, new byte[0], "after the client's command");
            }
            case HALF_CLOSE_BY_CLIENT -> {
                expectStream(conn, random(n, seed), "request up to the client's shutdownOutput");
                // end-of-stream came in; our direction is still open
                conn.write(ByteBuffer.wrap(random(n + 1, ~seed)));
            }
            case HALF_CLOSE_BY_SERVER -> {
                conn.write(ByteBuffer.wrap(random(n, seed)));
                conn.shutdownOutput();
                expectStream(conn, random(n + 1, ~seed), "the client's answer after our shutdownOutput");
            }
            case CLOSE_BY_SERVER -> conn.write(ByteBuffer.wrap(random(n, seed)));
            case CLOSE_BY_CLIENT -> expectStream(conn, random(n, seed), "the client's data before its close");
            case RESET_BY_SERVER -> reset(conn);
            case RESET_BY_CLIENT -> expectReset(conn);
            default -> throw new IllegalArgumentException(c.toString());
        }
        conn.close();
    }

    static void client(Case c, Conn conn, long n, long seed) throws Exception {
        switch (c) {
            case ECHO -> echoClient(conn, random(n, seed));
            case SELECT_ECHO -> {
                if (conn.channel() != null) {
                    selectEchoClient(conn.channel(), random(n, seed));
                } else {
                    echoClient(conn, random(n, seed));
                }
            }
            case SERVER_FIRST -> {
                // we write nothing before the greeting
                expectExactly(conn, ascii(GREETING), "the server's greeting");
                conn.write(ByteBuffer.wrap(ascii(QUIT)));
                expectExactly(conn, ascii(BYE), "the server's answer");
                conn.shutdownOutput();
                expectStream(conn, new byte[0], "after the server's answer");
            }
            case HALF_CLOSE_BY_CLIENT -> {
                conn.write(ByteBuffer.wrap(random(n, seed)));
                conn.shutdownOutput();
                expectStream(conn, random(n + 1, ~seed), "the server's answer after our shutdownOutput");
            }
            case HALF_CLOSE_BY_SERVER -> {
                expectStream(conn, random(n, seed), "the server's data up to its shutdownOutput");
                conn.write(ByteBuffer.wrap(random(n + 1, ~seed)));
            }
            case CLOSE_BY_SERVER -> expectStream(conn, random(n, seed), "the server's data before its close");
            case CLOSE_BY_CLIENT -> conn.write(ByteBuffer.wrap(random(n, seed)));
            case RESET_BY_SERVER -> expectReset(conn);
            case RESET_BY_CLIENT -> reset(conn);
            default -> throw new IllegalArgumentException(c.toString());
        }
        conn.close();
    }

    /** Reads one byte from the peer (the connection works both ways), then closes with SO_LINGER 0. */
    private static void reset(Conn conn) throws IOException {
        expectExactly(conn, new byte[] {'R'}, "the peer's byte before our reset");
        conn.lingerZero();
        conn.close();
    }

    /**
     * Sends one byte, then reads: the peer's SO_LINGER 0 close must end the read with an
     * IOException, and a write after it fails too.
     */
    static void expectReset(Conn conn) throws IOException {
        conn.write(ByteBuffer.wrap(new byte[] {'R'}));
        awaitReset(conn);
    }

    /** The peer has reset the connection (or is about to): a read fails, and so does a write after it. */
    static void awaitReset(Conn conn) throws IOException {
        int r;
        try {
            r = conn.read(ByteBuffer.allocate(16));
        } catch (ClosedChannelException e) {
            throw new AssertionError("read after the peer's reset: our own channel claims to be closed", e);
        } catch (IOException e) {
            // the reset, as the JDK's sockets report it ("Connection reset"); writing fails now too
            try {
                conn.write(ByteBuffer.wrap(new byte[] {'W'}));
            } catch (ClosedChannelException c) {
                throw new AssertionError("write after the peer's reset: our own channel claims to be closed", c);
            } catch (IOException expected) {
                return;
            }
            throw new AssertionError("a write after the read failed with " + e + " succeeded");
        }
        throw new AssertionError("read after the peer's SO_LINGER 0 close returned " + r
                + (r < 0 ? " (end-of-stream: an orderly close)" : " bytes") + " instead of failing with the reset");
    }

    private static void echo(Conn conn) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(64 * 1024);
        while (conn.read(buf) >= 0) {
            buf.flip();
            conn.write(buf);
            buf.clear();
        }
    }

    private static void echoClient(Conn conn, byte[] data) throws Exception {
        AtomicReference<Throwable> writeFailure = new AtomicReference<>();
        Thread writer = new Thread(() -> {
            try {
                conn.write(ByteBuffer.wrap(data));
                conn.shutdownOutput();
            } catch (Throwable t) {
                writeFailure.set(t);
                try {
                    conn.close(); // the reader would wait for an echo that cannot end
                } catch (IOException e) {
                    t.addSuppressed(e);
                }
            }
        }, "contract-writer");
        writer.setDaemon(true);
        writer.start();
        byte[] back;
        try {
            back = readToEnd(conn, data.length, "echo");
        } catch (Throwable t) {
            conn.close(); // ends the writer too
            writer.join();
            if (writeFailure.get() != null) {
                t.addSuppressed(writeFailure.get());
            }
            throw t;
        }
        writer.join();
        if (writeFailure.get() != null) {
            throw new AssertionError("writing the echo's request", writeFailure.get());
        }
        assertSame(data, back, "echo");
    }

    /** A non-blocking echo server on one channel: reads while it has room, writes back what it has. */
    private static void selectEcho(SocketChannel ch) throws IOException {
        ch.configureBlocking(false);
        try (Selector selector = ch.provider().openSelector()) {
            SelectionKey key = ch.register(selector, OP_READ);
            ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
            boolean eof = false;
            while (true) {
                selector.select();
                if (key.isReadable() && !eof && buf.hasRemaining()) {
                    eof = ch.read(buf) < 0;
                }
                if (key.isWritable() && buf.position() > 0) {
                    buf.flip();
                    ch.write(buf);
                    buf.compact();
                }
                selector.selectedKeys().clear();
                int ops = (!eof && buf.hasRemaining() ? OP_READ : 0) | (buf.position() > 0 ? OP_WRITE : 0);
                if (ops == 0) {
                    break; // end-of-stream and everything echoed
                }
                key.interestOps(ops);
            }
            key.cancel();
        }
        ch.configureBlocking(true);
    }

    /** A non-blocking client: writes data and shuts its output when done, reads the echo to end-of-stream. */
    private static void selectEchoClient(SocketChannel ch, byte[] data) throws IOException {
        ch.configureBlocking(false);
        ByteBuffer out = ByteBuffer.wrap(data);
        ByteBuffer in = ByteBuffer.allocate(data.length + 1);
        boolean shut = false;
        boolean eof = false;
        try (Selector selector = ch.provider().openSelector()) {
            SelectionKey key = ch.register(selector, OP_READ | OP_WRITE);
            while (!shut || !eof) {
                selector.select();
                if (key.isWritable() && !shut) {
                    ch.write(out);
                    if (!out.hasRemaining()) {
                        ch.shutdownOutput();
                        shut = true;
                    }
                }
                if (key.isReadable() && !eof) {
                    eof = ch.read(in) < 0;
                    if (!in.hasRemaining()) {
                        throw new AssertionError("echo: more than the " + data.length + " bytes sent came back");
                    }
                }
                selector.selectedKeys().clear();
                int ops = (shut ? 0 : OP_WRITE) | (eof ? 0 : OP_READ);
                if (ops != 0) {
                    key.interestOps(ops);
                }
            }
            key.cancel();
        }
        ch.configureBlocking(true);
        assertSame(data, Arrays.copyOf(in.array(), in.position()), "echo through a selector");
    }

    // ---- the child's side --------------------------------------------------------------------

    /** {@code Peer contract}: prints {@code PORT n} of its listener, then runs the commands of its stdin. */
    static void peer() throws Exception {
        InetAddress loopback = InetAddress.getLoopbackAddress();
        ServerSocketChannel listener = listen(0);
        Peer.say("PORT " + ((InetSocketAddress) listener.getLocalAddress()).getPort());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            String[] f = line.trim().split(" ");
            switch (f[0]) {
                case "accept" -> {
                    ServerSocketChannel l = listener;
                    Case c = Case.valueOf(f[2]);
                    role(f[1], true, () -> accept(l, c), c, Long.parseLong(f[3]), Long.parseLong(f[4]));
                }
                case "connect" -> {
                    InetSocketAddress to = new InetSocketAddress(loopback, Integer.parseInt(f[2]));
                    Case c = Case.valueOf(f[3]);
                    role(f[1], false, () -> connect(SocketChannel.open(), to, c), c, Long.parseLong(f[4]),
                            Long.parseLong(f[5]));
                }
                case "listen" -> {
                    listener.close();
                    listener = f.length > 2 ? listen(InetAddress.getByName(f[2]), Integer.parseInt(f[1]))
                            : listen(Integer.parseInt(f[1]));
                    Peer.say("LISTENING " + ((InetSocketAddress) listener.getLocalAddress()).getPort());
                }
                case "exit" -> System.exit(0);
                default -> Peer.say("ERROR unknown command " + line);
            }
        }
        System.exit(0);
    }

    /** Accepts as case c wants it: through a Selector (OP_ACCEPT) for SELECT_ECHO, else blocking. */
    static SocketChannel accept(ServerSocketChannel listener, Case c) throws IOException {
        if (c != Case.SELECT_ECHO) {
            return listener.accept();
        }
        listener.configureBlocking(false);
        try (Selector selector = listener.provider().openSelector()) {
            listener.register(selector, SelectionKey.OP_ACCEPT);
            while (true) {
                selector.select();
                selector.selectedKeys().clear();
                SocketChannel ch = listener.accept();
                if (ch != null) {
                    return ch;
                }
            }
        } finally {
            // the selector is closed: the listener is deregistered and may block again
            listener.configureBlocking(true);
        }
    }

    /** Connects as case c wants it: non-blocking through a Selector (OP_CONNECT, finishConnect) for SELECT_ECHO. */
    static SocketChannel connect(SocketChannel ch, InetSocketAddress to, Case c) throws IOException {
        if (c != Case.SELECT_ECHO) {
            ch.connect(to);
            return ch;
        }
        ch.configureBlocking(false);
        if (!ch.connect(to)) {
            try (Selector selector = ch.provider().openSelector()) {
                ch.register(selector, SelectionKey.OP_CONNECT);
                while (!ch.finishConnect()) {
                    selector.select();
                    selector.selectedKeys().clear();
                }
            }
        }
        ch.configureBlocking(true);
        return ch;
    }

    private static ServerSocketChannel listen(int port) throws IOException {
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return listener;
    }

    private static ServerSocketChannel listen(InetAddress address, int port) throws IOException {
        ServerSocketChannel listener = ServerSocketChannel.open(address instanceof java.net.Inet4Address
                ? java.net.StandardProtocolFamily.INET : java.net.StandardProtocolFamily.INET6);
        listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
        listener.bind(new InetSocketAddress(address, port));
        return listener;
    }

    private static void role(String id, boolean server, Callable<SocketChannel> open, Case c, long n, long seed) {
        String transport = "-";
        try (SocketChannel ch = open.call()) {
            Conn conn = of(ch);
            transport = conn.transport();
            if (server) {
                server(c, conn, n, seed);
            } else {
                client(c, conn, n, seed);
            }
            Peer.say("RESULT " + id + " " + transport + " OK");
        } catch (Throwable t) {
            Peer.say("RESULT " + id + " " + transport + " FAIL " + Peer.describe(t));
            t.printStackTrace(System.out);
            System.out.flush();
        }
    }
}
