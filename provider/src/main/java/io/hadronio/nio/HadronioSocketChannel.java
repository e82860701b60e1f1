package io.hadronio.nio;

import io.hadronio.HadronioSocketOptions;
import io.hadronio.transport.Connection;
import io.hadronio.transport.ControlLoop;
import io.hadronio.transport.UcxRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link SocketChannel} whose bytes travel over UCX when its peer runs hadroNIO, and
 * over its kernel TCP connection, untouched, when it does not.
 *
 * <p>A kernel TCP socket from the JDK's provider ({@code tcp}) does what users expect of
 * addresses, binding, connecting and options. Which path the bytes take is decided once,
 * when the connection is set up ({@link io.hadronio.connection.Peers}), and never changes:
 * <ul>
 * <li>{@code PATH_TCP}: plain TCP. Every operation goes to {@code tcp}, whose blocking mode
 *     is this channel's; a selector polls its fd. Exactly the JDK's behaviour.</li>
 * <li>{@code PATH_UCX}: accelerated. The {@link Connection} carries the bytes; {@code tcp}
 *     belongs to the control thread and carries control records.</li>
 * </ul>
 *
 * <p>State ladder: {@code ST_UNCONNECTED < ST_CONNECTIONPENDING < ST_CONNECTED < ST_CLOSING
 * < ST_CLOSED}, changed only under {@link #stateLock}. Lock order: {@link #readLock},
 * {@link #writeLock}, {@link #stateLock}; nothing blocks under {@code stateLock}.
 */
public final class HadronioSocketChannel extends SocketChannel implements UcxSelectable {
    private static final int ST_UNCONNECTED = 0;
    private static final int ST_CONNECTIONPENDING = 1;
    private static final int ST_CONNECTED = 2;
    private static final int ST_CLOSING = 3;
    private static final int ST_CLOSED = 4;

    private static final int PATH_UNDECIDED = 0;
    private static final int PATH_TCP = 1;
    private static final int PATH_UCX = 2;

    private final UcxRuntime runtime;
    // the kernel socket: the whole connection on PATH_TCP, bootstrap and control connection on PATH_UCX
    private final SocketChannel tcp;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final Object stateLock = new Object();
    // need stateLock to change
    private volatile int state;
    // set once (under blockingLock(), together with tcp's blocking mode)
    private volatile int path;
    // tcp's fd, for selectors, once on PATH_TCP
    private volatile int tcpFd = -1;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    // PATH_UCX, set once connected
    private volatile Connection connection;
    private volatile ControlLoop.Control control;
    // PATH_TCP of an accepted channel: bytes the server's detection read that belong to the application
    private ByteBuffer prefix;
    // reused one-element arrays for read(ByteBuffer)/write(ByteBuffer); under read/write lock
    private final ByteBuffer[] readOne = new ByteBuffer[1];
    private final ByteBuffer[] writeOne = new ByteBuffer[1];
    // how a handshake run by the control thread ended (null while it runs); guarded by itself
    private final Object outcomeLock = new Object();
    private volatile Outcome outcome;
    // set by whoever closed an established connection that finishConnect never took over
    private final java.util.concurrent.atomic.AtomicBoolean unfinishedClosed =
            new java.util.concurrent.atomic.AtomicBoolean();
    // SO_TIMEOUT of the socket adaptor's streams, in ms (0: none)
    volatile int readTimeoutMillis;
    private SocketAdaptor socket;

    /** How an accelerated connect ended: UCX, plain TCP after all, or a failure. */
    private record Outcome(Connection connection, ControlLoop.Control control, IOException failure) {
        static final Outcome PLAIN = new Outcome(null, null, null);
    }

    /** An unconnected channel ({@code SocketChannel.open()}). */
    public HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openSocketChannel();
    }

    /** An unconnected channel of one protocol family ({@code SocketChannel.open(family)}). */
    public HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, java.net.ProtocolFamily family)
            throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openSocketChannel(family);
    }

    /** An accepted accelerated channel, connected. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, SocketChannel tcp, Connection connection,
                          ControlLoop.Control control) {
        super(provider);
        this.runtime = runtime;
        this.tcp = tcp;
        this.connection = connection;
        this.control = control;
        this.path = PATH_UCX;
        this.state = ST_CONNECTED;
    }

    /** An accepted plain channel, connected; {@code prefix}: bytes already read from it, or null. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, SocketChannel tcp, ByteBuffer prefix)
            throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = tcp;
        this.prefix = prefix;
        this.state = ST_CONNECTED;
        usePlainTcp();
    }

    /** Switches to PATH_TCP: from now on {@code tcp} is the channel, in this channel's blocking mode. */
    private void usePlainTcp() throws IOException {
        synchronized (blockingLock()) {
            tcp.configureBlocking(isBlocking());
            tcpFd = io.hadronio.platform.PlatformChannels.fd(tcp);
            path = PATH_TCP;
        }
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    private void ensureConnected() throws IOException {
        int s = state;
        if (s >= ST_CLOSING || !isOpen()) {
            throw new ClosedChannelException();
        }
        if (s != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
    }

    /**
     * The path the bytes take, as {@link HadronioSocketOptions#TRANSPORT} reports it:
     * {@code "ucx:cma,sysv"} (the UCX transports in use), {@code "tcp"}, or {@code ""}
     * while not connected.
     */
    public String transport() {
        if (state != ST_CONNECTED && state != ST_CLOSING) {
            return "";
        }
        if (path == PATH_TCP) {
            return "tcp";
        }
        Connection c = connection;
        if (c == null) {
            return "";
        }
        String t = c.transports();
        return "ucx:" + t.substring(1, t.length() - 1).replace(" ", "");
    }

    /** The transports UCX uses for this connection, e.g. [cma, sysv] ([] on plain TCP), for logs and tests. */
    public String transports() {
        Connection c = connection;
        return c == null ? "[]" : c.transports();
    }

    // ---- addresses and connection set-up -----------------------------------------------------

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        readLock.lock();
        writeLock.lock();
        try {
            synchronized (stateLock) {
                ensureOpen();
                if (state == ST_CONNECTIONPENDING) {
                    throw new ConnectionPendingException();
                }
                if (state == ST_CONNECTED) {
                    throw new AlreadyConnectedException();
                }
                tcp.bind(local);
            }
            return this;
        } finally {
            writeLock.unlock();
            readLock.unlock();
        }
    }

    @Override
    public boolean connect(SocketAddress remote) throws IOException {
        return connect(remote, 0);
    }

    /**
     * Connects. First asks who the peer is ({@link io.hadronio.connection.Peers}: on this
     * host, the accelerated listener's rendezvous, which answers at once or not at all):
     * a plain peer gets a plain TCP connect, exactly as the JDK makes it; an accelerated
     * one gets a TCP connect and the handshake, run by the control thread, which a
     * blocking connect waits for and a non-blocking one leaves to {@link #finishConnect()}.
     *
     * @param timeoutMillis the socket adaptor's connect timeout (blocking only), 0: none
     */
    boolean connect(SocketAddress remote, int timeoutMillis) throws IOException {
        InetSocketAddress isa = checkRemote(remote);
        readLock.lock();
        writeLock.lock();
        try {
            synchronized (stateLock) {
                ensureOpen();
                if (state == ST_CONNECTED) {
                    throw new AlreadyConnectedException();
                }
                if (state == ST_CONNECTIONPENDING) {
                    throw new ConnectionPendingException();
                }
                state = ST_CONNECTIONPENDING;
            }
            boolean blocking = isBlocking();
            long rendezvousDeadline = System.nanoTime()
                    + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(Math.min(1000, runtime.config().handshakeMillis()));
            boolean accelerate;
            try {
                accelerate = runtime.peers().accelerateTo(isa, this::boundForRendezvous, rendezvousDeadline);
            } catch (IOException e) {
                close();
                throw e;
            }
            if (!accelerate) {
                usePlainTcp();
                return connectPlain(isa, timeoutMillis);
            }
            try {
                tcp.configureBlocking(false);
                tcp.connect(isa);
            } catch (IOException e) {
                close();
                throw e;
            }
            runtime.control().connectAsync(tcp, new ControlLoop.ConnectListener() {
                @Override
                public void connected(Connection c, ControlLoop.Control ctl) {
                    publish(new Outcome(c, ctl, null));
                    if (!isOpen()) {
                        closeUnfinished(ctl);
                    }
                }

                @Override
                public void connectedPlain() {
                    publish(Outcome.PLAIN);
                }

                @Override
                public void failed(IOException cause) {
                    publish(new Outcome(null, null, cause));
                }
            });
            if (!blocking) {
                return false;
            }
            return completeConnect(timeoutMillis);
        } finally {
            writeLock.unlock();
            readLock.unlock();
        }
    }

    /** The local address to register at the rendezvous: binds the socket first if it is not bound. */
    private InetSocketAddress boundForRendezvous() throws IOException {
        if (tcp.getLocalAddress() == null) {
            tcp.bind(null);
        }
        return (InetSocketAddress) tcp.getLocalAddress();
    }

    private void publish(Outcome o) {
        synchronized (outcomeLock) {
            outcome = o;
            outcomeLock.notifyAll();
        }
        if (o.connection() != null) {
            o.connection().group().wakeSleepers();
        }
        runtime.wakeAll();
    }

    /** A plain TCP connect on {@code tcp}, which is in this channel's blocking mode. */
    private boolean connectPlain(InetSocketAddress isa, int timeoutMillis) throws IOException {
        boolean connected;
        try {
            if (timeoutMillis > 0) {
                tcp.socket().connect(isa, timeoutMillis);
                connected = true;
            } else {
                connected = tcp.connect(isa);
            }
        } catch (IOException e) {
            close();
            throw e;
        }
        if (connected) {
            connectedPlainly();
        }
        return connected;
    }

    private void connectedPlainly() throws ClosedChannelException {
        synchronized (stateLock) {
            if (state != ST_CONNECTIONPENDING || !isOpen()) {
                throw new ClosedChannelException();
            }
            state = ST_CONNECTED;
        }
    }

    /**
     * Waits (blocking mode) for the control thread's handshake to end and takes its
     * outcome: the UCX connection, plain TCP, or the real cause of a failure (refused,
     * reset, timed out), which closes the channel.
     *
     * @param timeoutMillis > 0: at most this long (the adaptor's connect timeout)
     */
    private boolean completeConnect(int timeoutMillis) throws IOException {
        Outcome o;
        boolean completed = false;
        try {
            begin();
            long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
            synchronized (outcomeLock) {
                while ((o = outcome) == null && isOpen()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        outcomeLock.wait(Math.max(1, Math.min(left / 1_000_000, 1000)));
                    } catch (InterruptedException e) {
                        // the channel's interruptor closes it; the loop sees that
                        Thread.currentThread().interrupt();
                        break;
                    }
                }
            }
            completed = o != null;
        } finally {
            end(completed);
        }
        if (o == null) {
            close();
            if (Thread.currentThread().isInterrupted()) {
                // the wait saw the interrupt before the channel's interruptor ran (it sets the
                // status first): do its work, as the NIO contract says
                throw new ClosedByInterruptException();
            }
            throw new SocketTimeoutException("Connect timed out");
        }
        return takeOutcome(o);
    }

    /** Takes over what the handshake produced; true once connected. */
    private boolean takeOutcome(Outcome o) throws IOException {
        if (o.failure() != null) {
            close();
            throw o.failure();
        }
        if (o.connection() == null) {
            usePlainTcp();
            connectedPlainly();
            return true;
        }
        synchronized (stateLock) {
            if (state != ST_CONNECTIONPENDING || !isOpen()) {
                throw new ClosedChannelException();
            }
            connection = o.connection();
            control = o.control();
            path = PATH_UCX;
            state = ST_CONNECTED;
        }
        return true;
    }

    private static InetSocketAddress checkRemote(SocketAddress remote) {
        Objects.requireNonNull(remote, "remote");
        if (!(remote instanceof InetSocketAddress isa)) {
            throw new UnsupportedAddressTypeException();
        }
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    @Override
    public boolean finishConnect() throws IOException {
        readLock.lock();
        try {
            writeLock.lock();
            try {
                ensureOpen();
                int s = state;
                if (s == ST_CONNECTED) {
                    return true;
                }
                if (s != ST_CONNECTIONPENDING) {
                    throw new NoConnectionPendingException();
                }
                if (path == PATH_TCP) {
                    boolean done;
                    try {
                        done = tcp.finishConnect();
                    } catch (IOException e) {
                        close();
                        throw e;
                    }
                    if (done) {
                        connectedPlainly();
                    }
                    return done;
                }
                if (isBlocking()) {
                    return completeConnect(0);
                }
                Outcome o = outcome;
                return o != null && takeOutcome(o);
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    @Override
    public int readyOps(int interestOps) {
        int ready = 0;
        int s = state;
        int p = path;
        if ((interestOps & SelectionKey.OP_CONNECT) != 0 && s == ST_CONNECTIONPENDING && p != PATH_TCP
                && outcome != null) {
            ready |= SelectionKey.OP_CONNECT;
        }
        if (s != ST_CONNECTED) {
            return ready;
        }
        if (p == PATH_TCP) {
            // the fd tells the rest
            if ((interestOps & SelectionKey.OP_READ) != 0 && (inputShutdown || hasPrefix())) {
                ready |= SelectionKey.OP_READ;
            }
            return ready;
        }
        Connection c = connection;
        int rw = interestOps & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        if (c != null && rw != 0) {
            if (inputShutdown) {
                ready |= rw & SelectionKey.OP_READ;
                rw &= ~SelectionKey.OP_READ;
            }
            ready |= c.readyOps(rw);
        }
        return ready;
    }

    @Override
    public int pollFd() {
        return path == PATH_TCP ? tcpFd : -1;
    }

    private boolean hasPrefix() {
        ByteBuffer p = prefix;
        return p != null && p.hasRemaining();
    }

    @Override
    public boolean isConnected() {
        return state == ST_CONNECTED;
    }

    @Override
    public boolean isConnectionPending() {
        return state == ST_CONNECTIONPENDING;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return tcp.getLocalAddress();
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        ensureOpen();
        return tcp.getRemoteAddress();
    }

    // ---- options -------------------------------------------------------------------------------

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        ensureOpen();
        if (name == HadronioSocketOptions.TRANSPORT) {
            throw new UnsupportedOperationException("'" + name + "' is read-only");
        }
        tcp.setOption(name, value);
        return this;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        ensureOpen();
        if (name == HadronioSocketOptions.TRANSPORT) {
            return (T) transport();
        }
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        Set<SocketOption<?>> set = options;
        if (set == null) {
            Set<SocketOption<?>> all = new java.util.HashSet<>(tcp.supportedOptions());
            all.add(HadronioSocketOptions.TRANSPORT);
            options = set = java.util.Collections.unmodifiableSet(all);
        }
        return set;
    }

    // the kernel socket's options and ours; the same for every channel
    private static volatile Set<SocketOption<?>> options;

    // ---- shutdown ------------------------------------------------------------------------------

    @Override
    public SocketChannel shutdownInput() throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (state != ST_CONNECTED) {
                throw new NotYetConnectedException();
            }
            if (path == PATH_TCP) {
                tcp.shutdownInput();
                prefix = null;
            }
            inputShutdown = true;
        }
        if (path == PATH_UCX) {
            // a reader blocked in await() waits for the connection's readiness, which knows
            // nothing of this flag: tell the connection, so the reader wakes and returns -1
            // (as the JDK's shutdownInput signals its reader thread)
            connection.shutdownInput();
        }
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        writeLock.lock();
        try {
            synchronized (stateLock) {
                ensureOpen();
                if (state != ST_CONNECTED) {
                    throw new NotYetConnectedException();
                }
                if (path == PATH_TCP) {
                    tcp.shutdownOutput();
                    outputShutdown = true;
                } else if (!outputShutdown) {
                    outputShutdown = true;
                    control.shutdownOutput();
                }
            }
        } finally {
            writeLock.unlock();
        }
        return this;
    }

    boolean isInputShutdown() {
        return inputShutdown;
    }

    boolean isOutputShutdown() {
        return outputShutdown;
    }

    /** TCP urgent data, on a plain connection; on an accelerated one it is dropped (a peer without OOBINLINE drops it too). */
    void sendUrgentData(int data) throws IOException {
        ensureConnected();
        if (path == PATH_TCP) {
            tcp.socket().sendUrgentData(data);
        }
    }

    /** The TCP socket, for the adaptor's options that only a plain connection has. */
    java.net.Socket plainSocket() {
        return path == PATH_TCP ? tcp.socket() : null;
    }

    // ---- data path -----------------------------------------------------------------------------

    @Override
    public int read(ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst);
        readLock.lock();
        try {
            readOne[0] = dst;
            return (int) implRead(readOne, 0, 1, 0);
        } finally {
            readOne[0] = null;
            readLock.unlock();
            if (state == ST_CLOSING) {
                tryFinishClose();
            }
        }
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        for (int i = offset; i < offset + length; i++) {
            Objects.requireNonNull(dsts[i]);
        }
        readLock.lock();
        try {
            return implRead(dsts, offset, length, 0);
        } finally {
            readLock.unlock();
            if (state == ST_CLOSING) {
                tryFinishClose();
            }
        }
    }

    /** A read bounded by {@code timeoutMillis} (> 0) in blocking mode, for the socket adaptor. */
    int timedRead(ByteBuffer dst, int timeoutMillis) throws IOException {
        readLock.lock();
        try {
            readOne[0] = dst;
            return (int) implRead(readOne, 0, 1, timeoutMillis);
        } finally {
            readOne[0] = null;
            readLock.unlock();
            if (state == ST_CLOSING) {
                tryFinishClose();
            }
        }
    }

    private long implRead(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        assert readLock.isHeldByCurrentThread();
        for (int i = offset; i < offset + length; i++) {
            if (dsts[i].isReadOnly()) {
                throw new IllegalArgumentException("read-only buffer");
            }
        }
        ensureConnected();
        if (path == PATH_TCP) {
            return readPlain(dsts, offset, length, timeoutMillis);
        }
        Connection c = connection;
        if (inputShutdown) {
            return -1;
        }
        boolean blocking = isBlocking();
        long n = 0;
        try {
            if (blocking) {
                begin();
            }
            n = c.read(dsts, offset, length);
            if (n == 0 && blocking) {
                long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
                while (n == 0 && isOpen() && !inputShutdown && Connection.hasRemaining(dsts, offset, length)) {
                    if (!c.await(Connection.OP_READ, deadline)) {
                        throw new SocketTimeoutException("Read timed out");
                    }
                    if (!isOpen()) {
                        break;
                    }
                    n = c.read(dsts, offset, length);
                }
                if (inputShutdown && n == 0) {
                    n = -1;
                }
            }
            return n;
        } finally {
            if (blocking) {
                end(n != 0);
            } else if (!isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }

    /**
     * PATH_TCP: the bytes the server's detection took first, then the kernel socket's.
     * An interrupt closes {@code tcp} (its own interruptor runs, not ours): close this
     * channel too, as the NIO contract says.
     */
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
            if (timeoutMillis > 0 && length == 1 && isBlocking()) {
                return timedReadPlain(dsts[offset], timeoutMillis);
            }
            return tcp.read(dsts, offset, length);
        } catch (ClosedByInterruptException e) {
            close();
            throw e;
        }
    }

    /** A blocking read with a timeout through the kernel socket's own adaptor, which the JDK makes interruptible. */
    private int timedReadPlain(ByteBuffer dst, int timeoutMillis) throws IOException {
        java.net.Socket s = tcp.socket();
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

    @Override
    public int write(ByteBuffer src) throws IOException {
        Objects.requireNonNull(src);
        writeLock.lock();
        try {
            writeOne[0] = src;
            return (int) implWrite(writeOne, 0, 1);
        } finally {
            writeOne[0] = null;
            writeLock.unlock();
            if (state == ST_CLOSING) {
                tryFinishClose();
            }
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        for (int i = offset; i < offset + length; i++) {
            Objects.requireNonNull(srcs[i]);
        }
        writeLock.lock();
        try {
            return implWrite(srcs, offset, length);
        } finally {
            writeLock.unlock();
            if (state == ST_CLOSING) {
                tryFinishClose();
            }
        }
    }

    private long implWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        assert writeLock.isHeldByCurrentThread();
        ensureConnected();
        if (path == PATH_TCP) {
            try {
                return tcp.write(srcs, offset, length);
            } catch (ClosedByInterruptException e) {
                close();
                throw e;
            }
        }
        Connection c = connection;
        if (outputShutdown) {
            throw new ClosedChannelException();
        }
        boolean blocking = isBlocking();
        long total = 0;
        boolean completed = false;
        try {
            if (blocking) {
                begin();
            }
            total = c.write(srcs, offset, length);
            if (blocking) {
                while (isOpen() && Connection.hasRemaining(srcs, offset, length)) {
                    c.await(Connection.OP_WRITE, Long.MAX_VALUE);
                    if (!isOpen()) {
                        break;
                    }
                    total += c.write(srcs, offset, length);
                }
            }
            completed = !Connection.hasRemaining(srcs, offset, length) || !blocking;
            return total;
        } finally {
            if (blocking) {
                end(completed);
            } else if (!isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }

    // ---- blocking mode, close --------------------------------------------------------------------

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        // on PATH_TCP the kernel socket is the channel; otherwise blocking is a property of
        // our own waits, and the control socket stays non-blocking
        if (path == PATH_TCP) {
            tcp.configureBlocking(block);
        }
    }

    /**
     * Starts closing. On PATH_TCP it closes the kernel socket, as the JDK does. Otherwise
     * it never blocks (it may run in a thread that interrupts a reader, or in the reader
     * itself): it marks the channel closing and wakes blocked readers and writers, and
     * whoever leaves last - this call, or the last read or write - finishes with
     * {@link #tryFinishClose()}.
     */
    @Override
    protected void implCloseSelectableChannel() throws IOException {
        Connection c;
        synchronized (stateLock) {
            if (state >= ST_CLOSING) {
                return;
            }
            boolean connecting = state == ST_CONNECTIONPENDING;
            state = ST_CLOSING;
            c = connection;
            if (path == PATH_TCP) {
                state = ST_CLOSED;
                tcp.close();
                return;
            }
            Outcome unfinished = outcome;
            if (connecting && unfinished != null && unfinished.control() != null) {
                // connected, but finishConnect was not called: the peer may have accepted
                // already; close as a connected channel does (the peer reads end-of-stream)
                closeUnfinished(unfinished.control());
            } else if (c == null) {
                // nothing sent yet: closing the kernel socket also ends the handshake
                tcp.close();
            }
        }
        synchronized (outcomeLock) {
            outcomeLock.notifyAll();
        }
        if (c != null) {
            c.markReleased();
        }
        tryFinishClose();
    }

    /**
     * Closes a connection that a non-blocking connect established but finishConnect never
     * took over (the channel was closed first), once, whichever of close() and the control
     * loop's report comes last.
     */
    private void closeUnfinished(ControlLoop.Control ctl) {
        if (unfinishedClosed.compareAndSet(false, true)) {
            ctl.close();
        }
    }

    /**
     * Finishes a close once no read or write is in progress: the control loop then
     * waits for posted sends, announces FIN and CLOSE, and frees the connection.
     */
    private void tryFinishClose() {
        if (!readLock.tryLock()) {
            return;
        }
        try {
            if (!writeLock.tryLock()) {
                return;
            }
            try {
                synchronized (stateLock) {
                    if (state != ST_CLOSING) {
                        return;
                    }
                    state = ST_CLOSED;
                    if (control != null) {
                        if (lingerZero()) {
                            control.abort();
                        } else {
                            control.close();
                        }
                    }
                }
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
        }
    }

    /** SO_LINGER 0: close is abortive (the peer sees a reset), as with the JDK's sockets. */
    private boolean lingerZero() {
        try {
            Integer linger = tcp.getOption(java.net.StandardSocketOptions.SO_LINGER);
            return linger != null && linger == 0;
        } catch (IOException e) {
            return false;
        }
    }

    @Override
    public Socket socket() {
        synchronized (stateLock) {
            if (socket == null) {
                socket = SocketAdaptor.create(this);
            }
            return socket;
        }
    }

    @Override
    public String toString() {
        StringBuilder sb = new StringBuilder(getClass().getSimpleName()).append('[');
        if (!isOpen()) {
            sb.append("closed");
        } else {
            sb.append(switch (state) {
                case ST_UNCONNECTED -> "unconnected";
                case ST_CONNECTIONPENDING -> "connection-pending";
                case ST_CONNECTED -> "connected";
                default -> "closing";
            });
            if (state == ST_CONNECTED) {
                sb.append(' ').append(transport());
            }
            try {
                sb.append(" local=").append(tcp.getLocalAddress());
                if (state == ST_CONNECTED) {
                    sb.append(" remote=").append(tcp.getRemoteAddress());
                }
            } catch (IOException e) {
                // omit addresses
            }
        }
        return sb.append(']').toString();
    }
}
