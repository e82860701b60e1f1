package io.hadronio.nio;

import io.hadronio.transport.Connection;
import io.hadronio.transport.ControlLoop;
import io.hadronio.transport.Connector;
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
 * A {@link SocketChannel} whose bytes travel over UCX.
 *
 * <p>A kernel TCP socket from the JDK's provider ({@code tcp}) does what users expect of
 * addresses, binding, connecting and options, and after the handshake serves as the
 * control connection; the {@link Connection} carries the data.
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

    private final UcxRuntime runtime;
    // the kernel socket: bootstrap, addresses, options, then control connection
    private final SocketChannel tcp;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    private final Object stateLock = new Object();
    // need stateLock to change
    private volatile int state;
    private volatile boolean inputShutdown;
    private volatile boolean outputShutdown;
    // set once connected
    private volatile Connection connection;
    private volatile ControlLoop.Control control;
    // reused one-element arrays for read(ByteBuffer)/write(ByteBuffer); under read/write lock
    private final ByteBuffer[] readOne = new ByteBuffer[1];
    private final ByteBuffer[] writeOne = new ByteBuffer[1];
    // outcome of a non-blocking connect, set by the control loop; read by finishConnect
    private volatile Connector.Established asyncConnected;
    private volatile IOException asyncFailure;
    // set by whoever closed an established connection that finishConnect never took over
    private final java.util.concurrent.atomic.AtomicBoolean unfinishedClosed =
            new java.util.concurrent.atomic.AtomicBoolean();
    // SO_TIMEOUT of the socket adaptor's streams, in ms (0: none)
    volatile int readTimeoutMillis;
    private SocketAdaptor socket;

    /** An unconnected channel ({@code SocketChannel.open()}). */
    public HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openSocketChannel();
    }

    /** An accepted channel, connected. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, SocketChannel tcp, Connection connection,
                          ControlLoop.Control control) {
        super(provider);
        this.runtime = runtime;
        this.tcp = tcp;
        this.connection = connection;
        this.control = control;
        this.state = ST_CONNECTED;
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    private Connection ensureConnected() throws IOException {
        int s = state;
        if (s >= ST_CLOSING || !isOpen()) {
            throw new ClosedChannelException();
        }
        if (s != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        return connection;
    }

    /** The transports UCX uses for this connection, e.g. [cma, sysv], for logs and tests. */
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
     * Connects (TCP, then the handshake) in the calling thread. In non-blocking mode too
     * the connection is established before returning true; a selector-driven connect
     * comes with the non-blocking half of the provider.
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
            if (!isBlocking()) {
                return startNonBlockingConnect(isa);
            }
            // end() runs (inner finally) before a failed connect closes the channel (catch):
            // the other way round, end() would take that close for an asynchronous one and
            // throw AsynchronousCloseException in place of the real cause (as the JDK does)
            try {
                boolean completed = false;
                try {
                    begin();
                    if (timeoutMillis > 0) {
                        tcp.socket().connect(isa, timeoutMillis);
                    } else {
                        tcp.connect(isa);
                    }
                    int handshakeTimeout = timeoutMillis > 0 ? timeoutMillis : runtime.config().handshakeMillis();
                    Connector.Established established = Connector.connect(runtime, tcp, handshakeTimeout);
                    synchronized (stateLock) {
                        if (state != ST_CONNECTIONPENDING || !isOpen()) {
                            established.control().close();
                            throw new AsynchronousCloseException();
                        }
                        connection = established.connection();
                        control = established.control();
                        state = ST_CONNECTED;
                    }
                    completed = true;
                    return true;
                } finally {
                    end(completed);
                }
            } catch (IOException e) {
                if (Thread.currentThread().isInterrupted()) {
                    // an interrupt during the TCP connect or the handshake closes the kernel
                    // socket (the channel the thread was blocked on; the handshake's stream
                    // reports that as a SocketException), not this channel: close it and
                    // report the interrupt, as the NIO contract says
                    close();
                    if (e instanceof ClosedByInterruptException) {
                        throw e;
                    }
                    ClosedByInterruptException cbie = new ClosedByInterruptException();
                    cbie.addSuppressed(e);
                    throw cbie;
                }
                if (e instanceof AsynchronousCloseException) {
                    throw e;
                }
                if (!isOpen()) {
                    AsynchronousCloseException ace = new AsynchronousCloseException();
                    ace.addSuppressed(e);
                    throw ace;
                }
                close();
                throw e;
            }
        } finally {
            writeLock.unlock();
            readLock.unlock();
        }
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

    /**
     * Non-blocking connect: the TCP connect is started here, and the control loop
     * finishes it and runs the handshake; {@link #finishConnect()} then completes it,
     * and the key is ready for {@code OP_CONNECT} as soon as it has ended either way.
     */
    private boolean startNonBlockingConnect(InetSocketAddress isa) throws IOException {
        try {
            tcp.configureBlocking(false);
            tcp.connect(isa);
        } catch (IOException e) {
            close();
            throw e;
        }
        runtime.control().connectAsync(tcp, new io.hadronio.transport.ControlLoop.ConnectListener() {
            @Override
            public void connected(Connection c, ControlLoop.Control ctl) {
                asyncConnected = new Connector.Established(c, ctl);
                if (!isOpen()) {
                    closeUnfinished(ctl);
                }
                c.group().wakeSleepers();
                runtime.wakeAll();
            }

            @Override
            public void failed(IOException cause) {
                asyncFailure = cause;
                runtime.wakeAll();
            }
        });
        return false;
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
                boolean blocking = isBlocking();
                boolean completed = false;
                try {
                    if (blocking) {
                        begin();
                    }
                    while (asyncConnected == null && asyncFailure == null && blocking && isOpen()) {
                        Thread.sleep(1);
                    }
                    IOException failure = asyncFailure;
                    if (failure != null) {
                        close();
                        throw failure;
                    }
                    Connector.Established e = asyncConnected;
                    if (e == null) {
                        return false;
                    }
                    synchronized (stateLock) {
                        if (!isOpen()) {
                            throw new ClosedChannelException();
                        }
                        connection = e.connection();
                        control = e.control();
                        state = ST_CONNECTED;
                    }
                    completed = true;
                    return true;
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return false;
                } finally {
                    if (blocking) {
                        end(completed);
                    }
                }
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
        if ((interestOps & SelectionKey.OP_CONNECT) != 0 && s == ST_CONNECTIONPENDING
                && (asyncConnected != null || asyncFailure != null)) {
            ready |= SelectionKey.OP_CONNECT;
        }
        Connection c = connection;
        if (c != null && s == ST_CONNECTED) {
            int rw = interestOps & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
            if (rw != 0) {
                if (inputShutdown) {
                    ready |= rw & SelectionKey.OP_READ;
                    rw &= ~SelectionKey.OP_READ;
                }
                ready |= c.readyOps(rw);
            }
        }
        return ready;
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
        tcp.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        ensureOpen();
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return tcp.supportedOptions();
    }

    // ---- shutdown ------------------------------------------------------------------------------

    @Override
    public SocketChannel shutdownInput() throws IOException {
        synchronized (stateLock) {
            ensureOpen();
            if (state != ST_CONNECTED) {
                throw new NotYetConnectedException();
            }
            inputShutdown = true;
        }
        // a reader blocked in await() waits for the connection's readiness, which knows
        // nothing of this flag: tell the connection, so the reader wakes and returns -1
        // (as the JDK's shutdownInput signals its reader thread)
        connection.shutdownInput();
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
                if (!outputShutdown) {
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
        Connection c = ensureConnected();
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
        Connection c = ensureConnected();
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
    protected void implConfigureBlocking(boolean block) {
        // blocking is a property of our own waits; the control socket stays non-blocking
    }

    /**
     * Starts closing: marks the channel closing and wakes blocked readers and writers.
     * It never blocks (it may run in a thread that interrupts a reader, or in the reader
     * itself); whoever leaves last - this call, or the last read or write - finishes
     * with {@link #tryFinishClose()}.
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
            Connector.Established unfinished = asyncConnected;
            if (connecting && unfinished != null) {
                // connected, but finishConnect was not called: the peer may have accepted
                // already; close as a connected channel does (the peer reads end-of-stream)
                closeUnfinished(unfinished.control());
            } else if (c == null || connecting) {
                // nothing sent yet: closing the kernel socket also ends a blocked connect
                tcp.close();
            }
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
