package io.hadronio.nio;

import io.hadronio.config.TransportOption;
import io.hadronio.path.ChannelIo;
import io.hadronio.path.KernelStream;
import io.hadronio.path.Paths;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.observe.SocketEvents;
import io.hadronio.observe.SocketReadEvent;
import io.hadronio.observe.SocketWriteEvent;
import io.hadronio.runtime.UcxRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BiFunction;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A {@link SocketChannel} whose bytes travel over UCX when its peer runs hadroNIO, and
 * over its kernel socket, untouched, when it does not: the NIO contract (locks, the
 * {@code begin}/{@code end} brackets, blocking mode, options, the socket adaptor, close)
 * and nothing else.
 *
 * <p>The bytes take a {@link DataPath} per direction, which {@link Paths} picks as the
 * connection's {@link ConnectionLifecycle} says: the kernel socket ({@link KernelStream}: TCP,
 * or a local Unix stream posing as TCP) while plain, the kernel socket with emulated blocking
 * while the connection moves to UCX, UCX once the direction switched. The channel keeps no
 * state of the connection: the lifecycle owns the state ladder, the paths and the
 * half-closes; this class tells it what the application did and asks it what holds.
 *
 * <p>Lock order: {@link #readLock}, {@link #writeLock}, then the lifecycle's raw-input lock,
 * then the worker group's, then the lifecycle's monitor (a leaf, never held while blocking).
 *
 * <p>Made only by {@link SocketChannelFactory}; not final for its one subclass,
 * {@code TrustedSocketChannel}, which adds nothing but what {@code FileChannel.transferTo} asks of a target.
 */
public class HadronioSocketChannel extends SocketChannel implements UcxSelectable {
    private final UcxRuntime runtime;
    // the read and write locks, and the step that runs when no other thread holds either
    private final ChannelLocks locks = new ChannelLocks();
    private final ReentrantLock readLock = locks.read;
    private final ReentrantLock writeLock = locks.write;
    // what the data paths need of this channel
    private final ChannelIo io = new Io();
    // the connection's state, paths and half-closes
    private final ConnectionLifecycle life;
    // the kernel socket (or local stream) and the paths of both directions
    private final KernelStream kernel;
    private final Paths paths;
    // the conversion of a plain local connection for its move to UCX
    private final UpgradeConversion conversion;
    // connect and finishConnect: who the peer is, which way the connection starts
    private final ClientConnect connector;
    // the connection as the observing tools see it (hadronio ss, the MBean, JFR's connection events)
    private final ChannelObservation observation;
    // our selection keys; the lifecycle runs it when the connection's state changes or a UCX request completes
    private final ReadySignal readySignal = new ReadySignal();
    // reused one-element arrays for read(ByteBuffer)/write(ByteBuffer); under read/write lock
    private final ByteBuffer[] readOne = new ByteBuffer[1];
    private final ByteBuffer[] writeOne = new ByteBuffer[1];
    // SO_TIMEOUT of the socket adaptor's streams, in ms (0: none)
    volatile int readTimeoutMillis;
    private SocketAdaptor socket;
    private final Object adaptorLock = new Object();

    /**
     * A channel on {@code life}'s connection, its kernel socket made by {@code kernel}. Only
     * {@link SocketChannelFactory} calls it (for this class or its trusted subclass), and then
     * tells the channel what kind it is ({@link #openedPlain}, {@link #opened}).
     */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle life,
                          BiFunction<ConnectionLifecycle, ChannelIo, KernelStream> kernel) {
        super(provider);
        this.runtime = runtime;
        this.life = life;
        this.kernel = kernel.apply(life, io);
        this.paths = new Paths(life, this.kernel, io);
        this.conversion = new UpgradeConversion(locks, life, this.kernel, io, blockingLock(), this::afterUnlock);
        this.connector = new ClientConnect(runtime, life, this.kernel, io, conversion, this::usePlainTcp);
        this.observation = new ChannelObservation(runtime, life, this.kernel, this.paths);
        life.readinessListener(readySignal);
    }

    /** An accepted channel, open: the observing tools see it from now on. */
    void opened() {
        observation.opened();
    }

    /** An accepted plain channel (or local stream), connected: it goes plain, then the observing tools see it. */
    void openedPlain() throws IOException {
        usePlainTcp();
        observation.opened();
    }

    /** Goes plain: from now on the kernel socket is the channel, in this channel's blocking mode. */
    private void usePlainTcp() throws IOException {
        synchronized (blockingLock()) {
            paths.goPlain(isBlocking());
        }
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    private void ensureConnected() throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        life.ensureOpenForIo();
    }

    /** The path the bytes take ({@link Paths#transport()}), as {@link TransportOption#TRANSPORT} reports it. */
    public String transport() {
        return paths.transport();
    }

    /** The transports UCX uses for this connection ({@link Paths#transports()}), for logs and tests. */
    public String transports() {
        return paths.transports();
    }

    /** The connection's owner: its state, paths and half-closes (diagnostics and tests read it; nothing else). */
    public ConnectionLifecycle lifecycle() {
        return life;
    }

    /** The runtime the channel's connection lives in. */
    public UcxRuntime runtime() {
        return runtime;
    }

    /** The upgrade wants the channel converted and waits for the threads inside it to leave. */
    public boolean conversionPending() {
        return conversion.isWanted();
    }

    // ---- addresses and connection set-up -----------------------------------------------------

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        readLock.lock();
        writeLock.lock();
        try {
            ensureOpen();
            int s = life.state();
            if (s == ConnectionLifecycle.CONNECTING) {
                throw new java.nio.channels.ConnectionPendingException();
            }
            if (s != ConnectionLifecycle.NEW) {
                // a connected socket is bound: SocketChannel.bind documents AlreadyBoundException
                // for it (the JDK's throws it), and a local stream's socket is not the TCP one
                throw new java.nio.channels.AlreadyBoundException();
            }
            kernel.socket().bind(local);
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
     * Connects ({@link ClientConnect}: a local peer at once, plain first; a remote one after it
     * was asked whether it runs hadroNIO).
     *
     * @param timeoutMillis the socket adaptor's connect timeout (blocking only), 0: none
     */
    boolean connect(SocketAddress remote, int timeoutMillis) throws IOException {
        InetSocketAddress isa = ClientConnect.checkRemote(remote);
        readLock.lock();
        writeLock.lock();
        try {
            ensureOpen();
            boolean connected = connector.connect(isa, timeoutMillis);
            if (connected) {
                observation.opened();
            }
            return connected;
        } finally {
            writeLock.unlock();
            readLock.unlock();
            // the runtime's start waits for a pause after the last connect, counted from its end
            runtime.connecting();
        }
    }

    /** An accepted local connection may move to UCX later (before the application gets the channel). */
    void upgradeAccepted(int serverPort) throws IOException {
        connector.accepted(serverPort);
    }

    @Override
    public boolean finishConnect() throws IOException {
        readLock.lock();
        try {
            writeLock.lock();
            try {
                ensureOpen();
                boolean connected = connector.finish();
                if (connected) {
                    observation.opened();
                }
                return connected;
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
            afterUnlock();
        }
    }

    // ---- readiness -----------------------------------------------------------------------------

    @Override
    public int readyOps(int interestOps) {
        return paths.readyOps(interestOps);
    }

    @Override
    public ReadySignal readySignal() {
        return readySignal;
    }

    @Override
    public boolean isConnection() {
        return true;
    }

    /** On UCX both ways: every change of readiness is a lifecycle change or a UCX completion, both signalled. */
    @Override
    public boolean signalsReadiness() {
        return life.onUcx();
    }

    @Override
    public int pollFd() {
        return paths.pollFd();
    }

    @Override
    public int readyOpsAfterPoll(int interestOps, int revents) {
        return paths.readyOpsAfterPoll(UcxSelectable.opsFromPoll(interestOps, revents));
    }

    @Override
    public boolean isConnected() {
        return life.state() == ConnectionLifecycle.OPEN;
    }

    @Override
    public boolean isConnectionPending() {
        return life.state() == ConnectionLifecycle.CONNECTING;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return kernel.localAddress();
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        ensureOpen();
        return kernel.remoteAddress();
    }

    // ---- options -------------------------------------------------------------------------------

    /** The one check of an option and its value; the paths take them as checked. */
    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        // the JDK's order: the option, then its value, then whether the channel is open
        ensureSupported(name);
        if (!name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "'");
        }
        ensureOpen();
        paths.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        ensureSupported(name);
        ensureOpen();
        return paths.getOption(name);
    }

    private void ensureSupported(SocketOption<?> name) {
        if (!supportedOptions().contains(Objects.requireNonNull(name))) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return kernel.supportedOptions();
    }

    // ---- shutdown ------------------------------------------------------------------------------

    @Override
    public SocketChannel shutdownInput() throws IOException {
        ensureConnected();
        paths.shutdownInput();
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        writeLock.lock();
        try {
            ensureConnected();
            paths.shutdownOutput();
        } finally {
            writeLock.unlock();
            afterUnlock();
        }
        return this;
    }

    boolean isInputShutdown() {
        return life.isInputShut();
    }

    boolean isOutputShutdown() {
        return life.isOutputShut();
    }

    /** TCP urgent data ({@link Paths#sendUrgentData}), for the socket adaptor. */
    void sendUrgentData(int data) throws IOException {
        ensureConnected();
        if (life.isOutputShut()) {
            // what the JDK's adaptor throws here, whichever path carries the connection
            throw AdaptorExceptions.closedInBlockingCall();
        }
        paths.sendUrgentData(data);
    }

    /** Bytes a read takes now without waiting for the network (the adaptor's stream's {@code available()}). */
    int available() throws IOException {
        return paths.available();
    }

    /** The TCP socket for the adaptor's TCP-only options ({@link Paths#plainSocket()}), or null. */
    Socket plainSocket() {
        return paths.plainSocket();
    }

    // ---- data path -----------------------------------------------------------------------------

    // Each read and write is JFR's io.hadronio.SocketRead/SocketWrite when a recording enables it,
    // as the JDK's SocketChannelImpl emits jdk.SocketRead/SocketWrite: one check of the event
    // type's enabled flag when none does (observe/SocketEvents), nothing allocated.

    @Override
    public int read(ByteBuffer dst) throws IOException {
        Objects.requireNonNull(dst);
        if (!SocketEvents.readEnabled()) {
            return readBuffer(dst, 0);
        }
        SocketReadEvent e = SocketEvents.beginRead();
        int n = readBuffer(dst, 0);
        SocketEvents.endRead(e, n, remoteForEvent(), 0, paths.inputPath());
        return n;
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, dsts.length);
        for (int i = offset; i < offset + length; i++) {
            Objects.requireNonNull(dsts[i]);
        }
        if (!SocketEvents.readEnabled()) {
            return readBuffers(dsts, offset, length);
        }
        SocketReadEvent e = SocketEvents.beginRead();
        long n = readBuffers(dsts, offset, length);
        SocketEvents.endRead(e, n, remoteForEvent(), 0, paths.inputPath());
        return n;
    }

    /** A read bounded by {@code timeoutMillis} (> 0) in blocking mode, for the socket adaptor. */
    int timedRead(ByteBuffer dst, int timeoutMillis) throws IOException {
        if (!SocketEvents.readEnabled()) {
            return readBuffer(dst, timeoutMillis);
        }
        SocketReadEvent e = SocketEvents.beginRead();
        int n = readBuffer(dst, timeoutMillis);
        SocketEvents.endRead(e, n, remoteForEvent(), timeoutMillis, paths.inputPath());
        return n;
    }

    /** The remote address for a JFR event (only when one is recorded); null when there is none. */
    private SocketAddress remoteForEvent() {
        try {
            return kernel.remoteAddress();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private long readBuffers(ByteBuffer[] dsts, int offset, int length) throws IOException {
        readLock.lock();
        try {
            return implRead(dsts, offset, length, 0);
        } finally {
            readLock.unlock();
            afterUnlock();
        }
    }

    /** One buffer's read; {@code timeoutMillis} > 0: bounded, in blocking mode (the socket adaptor). */
    private int readBuffer(ByteBuffer dst, int timeoutMillis) throws IOException {
        readLock.lock();
        try {
            readOne[0] = dst;
            return (int) implRead(readOne, 0, 1, timeoutMillis);
        } finally {
            readOne[0] = null;
            readLock.unlock();
            afterUnlock();
        }
    }

    /** The input's current path reads; one that moved on meanwhile hands the read to the next. */
    private long implRead(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        assert readLock.isHeldByCurrentThread();
        for (int i = offset; i < offset + length; i++) {
            if (dsts[i].isReadOnly()) {
                throw new IllegalArgumentException("read-only buffer");
            }
        }
        ensureConnected();
        return paths.read(dsts, offset, length, timeoutMillis);
    }

    @Override
    public int write(ByteBuffer src) throws IOException {
        Objects.requireNonNull(src);
        if (!SocketEvents.writeEnabled()) {
            return writeBuffer(src);
        }
        SocketWriteEvent e = SocketEvents.beginWrite();
        int n = writeBuffer(src);
        SocketEvents.endWrite(e, n, remoteForEvent(), paths.outputPath());
        return n;
    }

    private int writeBuffer(ByteBuffer src) throws IOException {
        writeLock.lock();
        try {
            writeOne[0] = src;
            return (int) implWrite(writeOne, 0, 1);
        } finally {
            writeOne[0] = null;
            writeLock.unlock();
            afterUnlock();
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Objects.checkFromIndexSize(offset, length, srcs.length);
        for (int i = offset; i < offset + length; i++) {
            Objects.requireNonNull(srcs[i]);
        }
        if (!SocketEvents.writeEnabled()) {
            return writeBuffers(srcs, offset, length);
        }
        SocketWriteEvent e = SocketEvents.beginWrite();
        long n = writeBuffers(srcs, offset, length);
        SocketEvents.endWrite(e, n, remoteForEvent(), paths.outputPath());
        return n;
    }

    private long writeBuffers(ByteBuffer[] srcs, int offset, int length) throws IOException {
        writeLock.lock();
        try {
            return implWrite(srcs, offset, length);
        } finally {
            writeLock.unlock();
            afterUnlock();
        }
    }

    /** The output's current path writes; one that moved on meanwhile hands the write to the next. */
    private long implWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        assert writeLock.isHeldByCurrentThread();
        ensureConnected();
        return paths.write(srcs, offset, length);
    }

    /** What the data paths need of this channel: its mode, its brackets, its close, the upgrade's conversion. */
    private final class Io implements ChannelIo {
        @Override
        public boolean isBlocking() {
            return HadronioSocketChannel.this.isBlocking();
        }

        @Override
        public boolean isOpen() {
            return HadronioSocketChannel.this.isOpen();
        }

        @Override
        public void begin() {
            HadronioSocketChannel.this.begin();
        }

        @Override
        public void end(boolean completed) throws AsynchronousCloseException {
            HadronioSocketChannel.this.end(completed);
        }

        @Override
        public void close() throws IOException {
            HadronioSocketChannel.this.close();
        }

        @Override
        public void upgradeWanted(boolean dueNow) {
            conversion.ifWanted(dueNow);
        }
    }

    // ---- blocking mode, close --------------------------------------------------------------------

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        paths.configureBlocking(block);
    }

    /**
     * Starts closing. A plain channel (or one with nothing set up yet) closes its kernel
     * socket, as the JDK does. Otherwise it never blocks (it may run in a thread that
     * interrupts a reader, or in the reader itself): the lifecycle moves to CLOSING and
     * wakes blocked readers and writers, and whoever leaves last - this call, or the last
     * read or write - finishes with {@link #tryFinishClose()}.
     */
    @Override
    protected void implCloseSelectableChannel() throws IOException {
        boolean takeMark = kernel.peerMarkUnread();
        try {
            if (life.close()) {
                tryFinishClose();
            }
        } finally {
            kernel.closed(takeMark);
            observation.closed();
            releaseWaitsIfClosed();
        }
    }

    /**
     * What a blocking read's wait on a moving connection's socket holds (an event fd) goes with the
     * channel, once no reader is inside: the closer tries, and every thread that leaves a lock
     * after the close tries again ({@link #afterUnlock}), so the last one out does it.
     */
    private void releaseWaitsIfClosed() {
        if (!isOpen() && readLock.tryLock()) {
            try {
                paths.closed();
            } finally {
                readLock.unlock();
            }
        }
    }

    /**
     * Called by every holder of the read or write lock after it released it: a close, or the
     * upgrade's conversion, that found the lock taken left its step to the holder (not only
     * readers and writers: shutdownOutput, finishConnect and the rendezvous thread's idle output
     * switch, {@link UpgradeConversion#switchIdleOutput}, too). Without the conversion here, a
     * channel that goes idle after a session came while a thread was inside (a write, a
     * shutdownOutput) would never move (regression:
     * UpgradeTest#shouldMoveOnceTheThreadInsideAtTheSessionLeavesAndTheChannelStaysIdle).
     */
    private void afterUnlock() {
        if (conversion.isWanted()) {
            conversion.tryConvert();
        }
        finishCloseIfClosing();
        releaseWaitsIfClosed();
    }

    /** A close that found a lock taken: its holder finishes it. */
    private void finishCloseIfClosing() {
        if (isClosing()) {
            tryFinishClose();
        }
    }

    /**
     * Finishes a close once no read or write is in progress: the control thread then
     * waits for posted sends, announces FIN and CLOSE, and frees the connection. Without the
     * retry of {@link ChannelLocks#runAlone}, a close that meets the rendezvous thread's idle output
     * switch would stay CLOSING, the peer's writes held back for ever (regression:
     * AbruptCloseAcrossJvmsTest#shouldFreeEverythingWhenClosingWhileThePeerWrites).
     */
    private void tryFinishClose() {
        locks.runAlone(whileClosing, finishClose);
    }

    // the steps runAlone runs, and while it tries: no lambda made per call
    private final BooleanSupplier whileClosing = this::isClosing;
    private final Supplier<Runnable> finishClose = this::finishCloseLocked;

    private boolean isClosing() {
        return life.state() == ConnectionLifecycle.CLOSING;
    }

    /** The close's last step (under both locks); nothing runs after it. */
    private Runnable finishCloseLocked() {
        if (isClosing()) {
            life.lastOut(kernel.lingerZero());
        }
        return null;
    }

    @Override
    public Socket socket() {
        synchronized (adaptorLock) {
            if (socket == null) {
                socket = SocketAdaptor.create(this);
            }
            return socket;
        }
    }

    @Override
    public String toString() {
        // the class's name, not getClass()'s: the trusted subclass is the same channel to a reader of logs
        return "HadronioSocketChannel[" + (isOpen() ? paths.describe() : "closed") + ']';
    }
}
