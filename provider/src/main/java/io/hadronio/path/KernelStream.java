package io.hadronio.path;

import io.hadronio.config.TransportOption;
import io.hadronio.connection.LocalStreams;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.ReadableBytes;
import io.hadronio.platform.PollSet;
import io.hadronio.path.Connection;
import io.hadronio.connection.ConnectionLifecycle;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The kernel half of a connection: its TCP socket (from the JDK's provider), or a local Unix
 * stream socket that poses as one ({@link LocalStreams}). It is the whole connection while a
 * direction is plain, and it is what a plain peer gets byte for byte. As a {@link DataPath} it
 * reads and writes in the channel's blocking mode, exactly as the JDK's channel would.
 *
 * <p>A local stream answers as TCP would: the addresses TCP would have (the client holds its
 * port with a bound TCP socket, the <em>reservation</em>), TCP's options (those a Unix socket
 * lacks are remembered, and read back as set), and TCP's reset semantics: an abortive close
 * leaves a reset mark that the peer's read finds at the end of the stream ("Connection
 * reset"), and the first write after the peer's close is taken, as TCP takes it, where a Unix
 * socket would fail it with "Broken pipe" (regression: LocalStreamTest).
 */
public final class KernelStream implements DataPath {
    // local Unix streams between hadroNIO processes (null: off); the JDK's provider, for probes
    private final LocalStreams streams;
    private final SelectorProvider platform;
    private final ConnectionLifecycle life;
    private final ChannelIo io;
    // the kernel socket; a local stream's Unix socket once connect chose one (set once, in
    // connect, before the connection opens)
    private SocketChannel socket;
    // the socket's fd, for selectors and poll(2), once plain
    private volatile int fd = -1;
    // a local stream connection: its addresses, as TCP's would be; null otherwise
    private InetSocketAddress streamLocal;
    private InetSocketAddress streamRemote;
    // a local stream client's TCP socket, bound and never connected: it holds the local port
    private SocketChannel reservation;
    // a local stream connection's id (its preamble's), which names its reset mark
    private long streamId;
    // a local stream connection's write met the peer's close once (under the write lock)
    private volatile boolean brokenPipeSeen;
    // a local stream connection read its peer's end (and so looked for its reset mark)
    private volatile boolean streamEndSeen;
    // a local stream connection's values of the TCP options a Unix socket lacks (they change
    // nothing there: a Unix socket has no Nagle, keep-alive or TOS)
    private Map<SocketOption<?>, Object> streamOptions;
    // a plain accepted connection: bytes the server's detection read that belong to the application
    private ByteBuffer prefix;
    // the options the application set before connect (a local stream connection applies them)
    private final Set<SocketOption<?>> explicitOptions = ConcurrentHashMap.newKeySet();

    // the kernel socket's options and ours; the same for every channel
    private static volatile Set<SocketOption<?>> options;
    // what a fresh TCP socket reports for each option (a local stream's options never set)
    private static volatile Map<SocketOption<?>, Object> tcpDefaults;

    /** An unconnected channel's socket, or an accepted plain one with the bytes its detection took ({@code prefix}, may be null). */
    public KernelStream(LocalStreams streams, SelectorProvider platform, ConnectionLifecycle life, ChannelIo io,
                        SocketChannel socket, ByteBuffer prefix) {
        this.streams = streams;
        this.platform = platform;
        this.life = life;
        this.io = io;
        this.socket = socket;
        this.prefix = prefix;
    }

    /** An accepted local stream connection. */
    public KernelStream(LocalStreams streams, SelectorProvider platform, ConnectionLifecycle life, ChannelIo io,
                        LocalStreams.Accepted accepted) {
        this(streams, platform, life, io, accepted.channel(), null);
        this.streamLocal = accepted.local();
        this.streamRemote = accepted.remote();
        this.streamOptions = new ConcurrentHashMap<>();
        this.streamId = accepted.id();
        life.streamReset(this::markReset);
    }

    /** The kernel socket: the whole connection when plain, set-up and control connection when on UCX. */
    public SocketChannel socket() {
        return socket;
    }

    /** The socket's fd once the connection went plain, for selectors; -1 before. */
    public int fd() {
        return fd;
    }

    /** True for a local stream connection (a Unix socket posing as TCP). */
    public boolean isLocalStream() {
        return streamRemote != null;
    }

    /** From now on the socket is the channel, in the channel's blocking mode. */
    public void goPlain(boolean blocking) throws IOException {
        socket.configureBlocking(blocking);
        fd = PlatformChannels.fd(socket);
    }

    public void configureBlocking(boolean blocking) throws IOException {
        socket.configureBlocking(blocking);
    }

    // ---- connection set-up ---------------------------------------------------------------------

    /**
     * A local hadroNIO listener of {@code isa} takes Unix stream connections: connects there
     * ({@link LocalStreams}; nothing in it waits) and makes that socket the connection's,
     * keeping the TCP socket as the holder of the local port. False: TCP.
     */
    public boolean connectStream(InetSocketAddress isa) throws IOException {
        if (streams == null) {
            return false;
        }
        LocalStreams.Connected c = streams.connect(isa, socket);
        if (c == null) {
            return false;
        }
        Map<SocketOption<?>, Object> opts = new ConcurrentHashMap<>();
        try {
            // what the application set before connect: the buffer sizes and linger go to the
            // Unix socket, the rest is remembered (an option never set reads as a fresh TCP
            // socket's default)
            for (SocketOption<?> o : explicitOptions) {
                Object v = socket.getOption(o);
                if (c.channel().supportedOptions().contains(o)) {
                    setRaw(c.channel(), o, v);
                } else if (v != null) {
                    opts.put(o, v);
                }
            }
        } catch (IOException | RuntimeException e) {
            c.channel().close();
            throw e;
        }
        reservation = socket;
        streamOptions = opts;
        streamLocal = c.local();
        streamRemote = new InetSocketAddress(isa.getAddress(), isa.getPort());
        streamId = c.id();
        socket = c.channel();
        life.useStream(socket, this::markReset);
        return true;
    }

    @SuppressWarnings("unchecked")
    private static <T> void setRaw(SocketChannel ch, SocketOption<T> o, Object v) throws IOException {
        ch.setOption(o, (T) v);
    }

    /** The local address to register at the rendezvous: binds the socket first if it is not bound. */
    public InetSocketAddress boundForRendezvous() throws IOException {
        if (socket.getLocalAddress() == null) {
            socket.bind(null);
        }
        return (InetSocketAddress) socket.getLocalAddress();
    }

    /** A plain TCP connect, in the socket's blocking mode; {@code timeoutMillis} > 0: the adaptor's, blocking. */
    public boolean connect(InetSocketAddress isa, int timeoutMillis) throws IOException {
        if (timeoutMillis > 0) {
            socket.socket().connect(isa, timeoutMillis);
            return true;
        }
        return socket.connect(isa);
    }

    /** Starts the TCP connect of an accelerated connection, whose handshake the control thread then runs. */
    public void connectForHandshake(InetSocketAddress isa) throws IOException {
        socket.configureBlocking(false);
        socket.connect(isa);
    }

    public boolean finishConnect() throws IOException {
        return socket.finishConnect();
    }

    // ---- addresses and options ---------------------------------------------------------------

    public InetSocketAddress localAddress() throws IOException {
        InetSocketAddress s = streamLocal;
        return s != null ? s : (InetSocketAddress) socket.getLocalAddress();
    }

    public InetSocketAddress remoteAddress() throws IOException {
        InetSocketAddress s = streamRemote;
        return s != null ? s : (InetSocketAddress) socket.getRemoteAddress();
    }

    /**
     * Sets an option of {@link #supportedOptions()} to a value of its type (the channel checked
     * both, in the JDK's order); {@code beforeConnect}: remembered, for a local stream that connect
     * may choose.
     */
    public <T> void setOption(SocketOption<T> name, T value, boolean beforeConnect) throws IOException {
        Map<SocketOption<?>, Object> opts = streamOptions;
        if (opts != null && !socket.supportedOptions().contains(name)) {
            setStreamOption(opts, name, value);
            return;
        }
        socket.setOption(name, value);
        if (beforeConnect) {
            explicitOptions.add(name);
        }
    }

    /** An option of {@link #supportedOptions()} (the channel checked it); a local stream's as TCP's would read. */
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Map<SocketOption<?>, Object> opts = streamOptions;
        if (opts != null && !socket.supportedOptions().contains(name)) {
            Object v = opts.get(name);
            return (T) (v != null ? v : tcpDefaults().get(name));
        }
        return socket.getOption(name);
    }

    /** A TCP socket's options (a local stream's too) and {@link TransportOption#TRANSPORT}. */
    public Set<SocketOption<?>> supportedOptions() {
        Set<SocketOption<?>> set = options;
        if (set == null) {
            Set<SocketOption<?>> all;
            if (streamRemote == null) {
                all = new HashSet<>(socket.supportedOptions());
            } else {
                // a TCP socket's, not the Unix socket's
                try (SocketChannel probe = platform.openSocketChannel()) {
                    all = new HashSet<>(probe.supportedOptions());
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            }
            all.add(TransportOption.TRANSPORT);
            options = set = Collections.unmodifiableSet(all);
        }
        return set;
    }

    /**
     * A TCP option of a local stream connection, remembered. The channel checked that TCP has
     * the option and that the value has its type; what TCP's socket checks of the value itself
     * (the range of IP_TOS) is checked here, as it would have been.
     */
    private static void setStreamOption(Map<SocketOption<?>, Object> opts, SocketOption<?> name, Object value) {
        if (name == StandardSocketOptions.IP_TOS) {
            int tos = (Integer) value;
            if (tos < 0 || tos > 255) {
                throw new IllegalArgumentException("Invalid IP_TOS value");
            }
        }
        opts.put(name, value);
    }

    private Map<SocketOption<?>, Object> tcpDefaults() throws IOException {
        Map<SocketOption<?>, Object> d = tcpDefaults;
        if (d == null) {
            d = new HashMap<>();
            try (SocketChannel probe = platform.openSocketChannel()) {
                for (SocketOption<?> o : probe.supportedOptions()) {
                    try {
                        Object v = probe.getOption(o);
                        if (v != null) {
                            d.put(o, v);
                        }
                    } catch (IOException | UnsupportedOperationException e) {
                        // not readable on an unconnected socket
                    }
                }
            }
            tcpDefaults = d = Map.copyOf(d);
        }
        return d;
    }

    /** SO_LINGER 0: close is abortive (the peer sees a reset), as with the JDK's sockets. */
    public boolean lingerZero() {
        try {
            Integer linger = socket.getOption(StandardSocketOptions.SO_LINGER);
            return linger != null && linger == 0;
        } catch (IOException e) {
            return false;
        }
    }

    // ---- shutdown, urgent data ---------------------------------------------------------------

    /** The kernel's shutdownInput, and the detection's bytes go with the input. */
    public void shutdownInput() throws IOException {
        socket.shutdownInput();
        prefix = null;
    }

    public void shutdownOutput() throws IOException {
        socket.shutdownOutput();
    }

    /** TCP urgent data on a plain TCP connection; a local stream drops it (a peer without OOBINLINE drops it too). */
    public void sendUrgentData(int data) throws IOException {
        if (streamRemote == null) {
            socket.socket().sendUrgentData(data);
        }
    }

    /** The TCP socket, for the adaptor's options that only a plain TCP connection has; null on a local stream. */
    public java.net.Socket plainSocket() {
        return streamRemote == null ? socket.socket() : null;
    }

    // ---- the data path -------------------------------------------------------------------------

    /**
     * Bytes a read takes without waiting for the network: those the server's detection took first
     * and the kernel socket's receive queue (as the JDK's socket stream answers {@code available()}).
     */
    public int available() throws IOException {
        ByteBuffer p = prefix;
        int n = p == null ? 0 : p.remaining();
        int f = fd >= 0 ? fd : PlatformChannels.fd(socket);
        return n + ReadableBytes.of(f);
    }

    /** Bytes the server's detection took first and the application has not read yet. */
    public boolean hasPrefix() {
        ByteBuffer p = prefix;
        return p != null && p.hasRemaining();
    }

    /**
     * The bytes the server's detection took first, then the socket's. A read on a connection
     * that may move to UCX first lets the upgrade convert it ({@link #MOVED} once it did), and
     * counts what it read towards the upgrade's trigger. An interrupt closes the socket (its own
     * interruptor runs, not the channel's): the channel closes too, as the NIO contract says.
     */
    @Override
    public long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        if (life.upgrade().isCandidate()) {
            io.upgradeWanted(false);
            if (life.isUpgradable()) {
                return MOVED;
            }
        }
        long n = readPlain(dsts, offset, length, timeoutMillis);
        if (n > 0 && life.upgrade().isCandidate()) {
            life.upgrade().consumedPlain(n);
            io.upgradeWanted(life.upgrade().dueAtRead());
        }
        return n;
    }

    private long readPlain(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        ByteBuffer p = prefix;
        if (p != null) {
            long n = 0;
            for (int i = offset; i < offset + length && p.hasRemaining(); i++) {
                int k = Math.min(dsts[i].remaining(), p.remaining());
                dsts[i].put(dsts[i].position(), p, p.position(), k);
                dsts[i].position(dsts[i].position() + k);
                p.position(p.position() + k);
                n += k;
            }
            if (!p.hasRemaining()) {
                prefix = null;
            }
            if (n > 0 || !Connection.hasRemaining(dsts, offset, length)) {
                return n;
            }
        }
        try {
            if (timeoutMillis > 0 && length == 1 && io.isBlocking()) {
                return streamRemote == null ? timedReadTcp(dsts[offset], timeoutMillis)
                        : timedReadStream(dsts[offset], timeoutMillis);
            }
            // one buffer: the kernel socket's read(2), as the JDK's, not its readv(2) machinery
            long n = length == 1 ? socket.read(dsts[offset]) : socket.read(dsts, offset, length);
            if (n < 0 && streamRemote != null) {
                streamEnded();
            }
            return n;
        } catch (ClosedByInterruptException e) {
            io.close();
            throw e;
        }
    }

    /**
     * The socket's write, in the channel's blocking mode. A connection that may move to UCX
     * first lets the upgrade convert it ({@link #MOVED} once it did). On a local stream, the
     * first write after the peer's close is taken as TCP takes it, and one after the peer's
     * reset fails with "Connection reset".
     */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (life.upgrade().isCandidate()) {
            io.upgradeWanted(life.upgrade().dueAtWrite());
            if (life.isUpgradable()) {
                return MOVED;
            }
        }
        try {
            long n = length == 1 ? socket.write(srcs[offset]) : socket.write(srcs, offset, length);
            life.upgrade().wrote(n);
            return n;
        } catch (ClosedByInterruptException e) {
            io.close();
            throw e;
        } catch (IOException e) {
            if (streamRemote == null || brokenPipeSeen || !isBrokenPipe(e)) {
                throw e;
            }
            brokenPipeSeen = true;
            if (!streamEndSeen && streams.takeReset(streamId, reservation == null)) {
                // the peer reset the connection: as TCP after its reset, the write fails
                // with it and a read then finds the end
                streamEndSeen = true;
                throw new SocketException("Connection reset");
            }
            // TCP takes the first write after the peer's close (the peer's answer, a
            // reset, fails the next); a Unix socket fails it at once: take it, as TCP
            long n = 0;
            for (int i = offset; i < offset + length; i++) {
                n += srcs[i].remaining();
                srcs[i].position(srcs[i].limit());
            }
            return n;
        }
    }

    /** A local stream's end: "connection reset" when the peer marked a reset (LocalStreams), else nothing. */
    private void streamEnded() throws IOException {
        if (streamEndSeen) {
            return;
        }
        streamEndSeen = true;
        // the peer is the client when we are the server (the client holds the reservation)
        if (streams.takeReset(streamId, reservation == null)) {
            // as after TCP's reset, writes fail from now on (none is taken); brokenPipeSeen is
            // the write lock's, but a write that races this read would fail on the closed pipe anyway
            brokenPipeSeen = true;
            throw new SocketException("Connection reset");
        }
    }

    /** An abortive close of a local stream: the peer's reads end in a reset, unless it closed already. */
    private void markReset() {
        streams.markReset(streamId, reservation != null, fd);
    }

    private static boolean isBrokenPipe(IOException e) {
        String m = e.getMessage();
        return m != null && m.contains("Broken pipe");
    }

    /**
     * A blocking read with a timeout on a local stream connection (a Unix channel has no socket
     * adaptor): waits in poll(2) for input, in slices so that an interrupt is seen, then reads.
     */
    private int timedReadStream(ByteBuffer dst, int timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        int f = fd;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new SocketTimeoutException("Read timed out");
            }
            short ready = PollSet.pollOne(f, PollSet.POLLIN, (int) Math.min(left, 100));
            if (Thread.currentThread().isInterrupted()) {
                io.close();
                throw new ClosedByInterruptException();
            }
            if (!io.isOpen()) {
                throw new AsynchronousCloseException();
            }
            if (ready != 0) {
                int n = socket.read(dst);
                if (n < 0) {
                    streamEnded();
                }
                return n;
            }
        }
    }

    /** A blocking read with a timeout through the kernel socket's own adaptor, which the JDK makes interruptible. */
    private int timedReadTcp(ByteBuffer dst, int timeoutMillis) throws IOException {
        java.net.Socket s = socket.socket();
        s.setSoTimeout(timeoutMillis);
        if (dst.hasArray()) {
            int n = s.getInputStream().read(dst.array(), dst.arrayOffset() + dst.position(), dst.remaining());
            if (n > 0) {
                dst.position(dst.position() + n);
            }
            return n;
        }
        byte[] b = new byte[Math.min(dst.remaining(), 64 * 1024)];
        int n = s.getInputStream().read(b, 0, b.length);
        if (n > 0) {
            dst.put(b, 0, n);
        }
        return n;
    }

    // ---- close ---------------------------------------------------------------------------------

    /**
     * Before the connection's close: whether the peer of a local stream left a reset mark for us
     * that we will never read to (a peer that has not closed has not marked either: it marks
     * before its socket closes; one that marks in the instant between leaves a mark for the
     * sweep). Asked before the close closes our socket.
     */
    public boolean peerMarkUnread() {
        return streamRemote != null && !streamEndSeen && PollSet.hungUp(fd);
    }

    /** After the connection's close: takes the mark {@link #peerMarkUnread} found, and frees the reserved port. */
    public void closed(boolean takeMark) throws IOException {
        if (takeMark) {
            streams.takeReset(streamId, reservation == null);
        }
        SocketChannel r = reservation;
        if (r != null) {
            // the local port goes free with the connection (its upgrade session, named by it,
            // was shut down by the close)
            r.close();
        }
    }

    /** Addresses for the channel's toString, without throwing. */
    public String describe(boolean remoteToo) {
        try {
            StringBuilder sb = new StringBuilder(" local=").append(localAddress());
            if (remoteToo) {
                sb.append(" remote=").append(remoteAddress());
            }
            return sb.toString();
        } catch (IOException e) {
            return "";
        }
    }
}
