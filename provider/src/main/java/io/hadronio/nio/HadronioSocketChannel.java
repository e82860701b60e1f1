package io.hadronio.nio;

import io.hadronio.HadronioSocketOptions;
import io.hadronio.transport.Connection;
import io.hadronio.transport.ConnectionLifecycle;
import io.hadronio.transport.UcxRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A {@link SocketChannel} whose bytes travel over UCX when its peer runs hadroNIO, and
 * over its kernel TCP connection, untouched, when it does not.
 *
 * <p>A kernel TCP socket from the JDK's provider ({@code tcp}) does what users expect of
 * addresses, binding, connecting and options. Which path the bytes take is decided once,
 * when the connection is set up ({@link io.hadronio.connection.Peers}), and never changes:
 * <ul>
 * <li>plain: every operation goes to {@code tcp}, whose blocking mode is this channel's; a
 *     selector polls its fd. Exactly the JDK's behaviour.</li>
 * <li>accelerated: the {@link Connection} carries the bytes; {@code tcp} belongs to the
 *     control thread and carries control records.</li>
 * </ul>
 *
 * <p>The channel keeps no state of its own: its {@link ConnectionLifecycle} owns the state
 * ladder, the path and the half-closes, and this class tells it what the application did
 * and asks it what holds. Lock order: {@link #readLock}, {@link #writeLock}, then the
 * lifecycle's (a leaf, never held while blocking).
 */
public final class HadronioSocketChannel extends SocketChannel implements UcxSelectable {
    private final UcxRuntime runtime;
    // the kernel socket: the whole connection when plain, set-up and control connection when
    // accelerated; a Unix stream socket for a local stream connection (set once, in connect,
    // before the connection opens)
    private SocketChannel tcp;
    // a local stream connection (connection/LocalStreams): its addresses, as TCP's would be;
    // null otherwise. Set before the connection opens
    private InetSocketAddress streamLocal;
    private InetSocketAddress streamRemote;
    // a local stream client's TCP socket, bound and never connected: it holds the local port
    private SocketChannel reservation;
    // a local stream connection's id (its preamble's), which names its reset mark
    private long streamId;
    // a local stream connection's write met the peer's close once (under writeLock)
    private volatile boolean brokenPipeSeen;
    // a local stream connection's values of the TCP options a Unix socket lacks (they change
    // nothing there: a Unix socket has no Nagle, keep-alive or TOS)
    private java.util.Map<SocketOption<?>, Object> streamOptions;
    private final ReentrantLock readLock = new ReentrantLock();
    private final ReentrantLock writeLock = new ReentrantLock();
    // the connection's state, path and half-closes
    private final ConnectionLifecycle life;
    // our selection keys; the lifecycle runs it when the connection's state changes or a UCX request completes
    private final ReadySignal readySignal = new ReadySignal();
    // tcp's fd, for selectors, once plain
    private volatile int tcpFd = -1;
    // a plain accepted channel: bytes the server's detection read that belong to the application
    private ByteBuffer prefix;
    // reused one-element arrays for read(ByteBuffer)/write(ByteBuffer); under read/write lock
    private final ByteBuffer[] readOne = new ByteBuffer[1];
    private final ByteBuffer[] writeOne = new ByteBuffer[1];
    // SO_TIMEOUT of the socket adaptor's streams, in ms (0: none)
    volatile int readTimeoutMillis;
    private SocketAdaptor socket;
    private final Object adaptorLock = new Object();

    /** An unconnected channel ({@code SocketChannel.open()}). */
    public HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openSocketChannel();
        this.life = ConnectionLifecycle.unconnected(runtime.control(), tcp);
        life.readinessListener(readySignal);
    }

    /** An unconnected channel of one protocol family ({@code SocketChannel.open(family)}). */
    public HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, java.net.ProtocolFamily family)
            throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openSocketChannel(family);
        this.life = ConnectionLifecycle.unconnected(runtime.control(), tcp);
        life.readinessListener(readySignal);
    }

    /** An accepted accelerated channel, open. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle accepted) {
        super(provider);
        this.runtime = runtime;
        this.tcp = accepted.tcp();
        this.life = accepted;
        life.readinessListener(readySignal);
    }

    /** An accepted plain channel, connected; {@code prefix}: bytes already read from it, or null. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime, SocketChannel tcp, ByteBuffer prefix)
            throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = tcp;
        this.prefix = prefix;
        this.life = ConnectionLifecycle.acceptedPlain(runtime.control(), tcp);
        life.readinessListener(readySignal);
        usePlainTcp();
    }

    /** An accepted local stream connection ({@link io.hadronio.connection.LocalStreams}), connected. */
    HadronioSocketChannel(SelectorProvider provider, UcxRuntime runtime,
                          io.hadronio.connection.LocalStreams.Accepted accepted) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = accepted.channel();
        this.streamLocal = accepted.local();
        this.streamRemote = accepted.remote();
        this.streamOptions = new java.util.concurrent.ConcurrentHashMap<>();
        this.streamId = accepted.id();
        this.life = ConnectionLifecycle.acceptedPlain(runtime.control(), tcp);
        life.streamReset(this::markStreamReset);
        life.readinessListener(readySignal);
        usePlainTcp();
    }

    /** Goes plain: from now on {@code tcp} is the channel, in this channel's blocking mode. */
    private void usePlainTcp() throws IOException {
        synchronized (blockingLock()) {
            life.choosePlain();
            tcp.configureBlocking(isBlocking());
            tcpFd = io.hadronio.platform.PlatformChannels.fd(tcp);
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

    /**
     * The path the bytes take, as {@link HadronioSocketOptions#TRANSPORT} reports it:
     * {@code "ucx:cma,sysv"} (the UCX transports in use), {@code "tcp"}, or {@code ""}
     * while not connected.
     */
    public String transport() {
        String t = life.transport();
        // a local stream connection that has not moved to UCX
        return streamRemote != null && "tcp".equals(t) ? "unix" : t;
    }

    /**
     * The transports UCX uses for this connection, e.g. [cma, sysv] ([] on plain TCP, and on
     * an upgraded one until both directions moved, as {@link #transport()} says), for logs and tests.
     */
    public String transports() {
        Connection c = life.connection();
        return c == null || !life.onUcx() ? "[]" : c.transports();
    }

    // ---- addresses and connection set-up -----------------------------------------------------

    @Override
    public SocketChannel bind(SocketAddress local) throws IOException {
        readLock.lock();
        writeLock.lock();
        try {
            ensureOpen();
            life.ensureUnconnected();
            tcp.bind(local);
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
            ensureOpen();
            life.beginConnect();
            boolean blocking = isBlocking();
            long rendezvousDeadline = System.nanoTime()
                    + java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(Math.min(1000, runtime.config().handshakeMillis()));
            io.hadronio.transport.Upgrades upgrades = runtime.upgrades();
            if (upgrades != null && runtime.peers().isLocal(isa.getAddress())) {
                // a local peer: a plain TCP connect now, exactly as the JDK's; if the peer runs
                // hadroNIO the connection moves to UCX in the background once it is open
                boolean stream = connectStream(isa);
                upgrades.prepareClient(life);
                life.idleOutputSwitch(this::switchIdleOutput);
                life.converter(this::requestConversion);
                usePlainTcp();
                if (stream) {
                    connectedPlainly();
                    return true;
                }
                return connectPlain(isa, timeoutMillis);
            }
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
            runtime.control().connectAsync(life);
            if (!blocking) {
                return false;
            }
            return completeConnect(timeoutMillis);
        } finally {
            writeLock.unlock();
            readLock.unlock();
        }
    }

    /**
     * A local hadroNIO listener of {@code isa} takes Unix stream connections: connects there
     * ({@link io.hadronio.connection.LocalStreams}; nothing in it waits) and makes that socket
     * this channel's, keeping the TCP socket as the holder of the local port. False: TCP.
     */
    private boolean connectStream(InetSocketAddress isa) throws IOException {
        io.hadronio.connection.LocalStreams streams = runtime.localStreams();
        if (streams == null) {
            return false;
        }
        io.hadronio.connection.LocalStreams.Connected c = streams.connect(isa, tcp);
        if (c == null) {
            return false;
        }
        java.util.Map<SocketOption<?>, Object> opts = new java.util.concurrent.ConcurrentHashMap<>();
        try {
            // what the application set before connect: the buffer sizes and linger go to the
            // Unix socket, the rest is remembered (an option never set reads as a fresh TCP
            // socket's default)
            for (SocketOption<?> o : explicitOptions) {
                Object v = tcp.getOption(o);
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
        reservation = tcp;
        streamOptions = opts;
        streamLocal = c.local();
        streamRemote = new InetSocketAddress(isa.getAddress(), isa.getPort());
        streamId = c.id();
        tcp = c.channel();
        life.useStream(tcp, this::markStreamReset);
        return true;
    }

    @SuppressWarnings("unchecked")
    private static <T> void setRaw(SocketChannel ch, SocketOption<T> o, Object v) throws IOException {
        ch.setOption(o, (T) v);
    }

    // the options the application set before connect (a local stream connection applies them)
    private final Set<SocketOption<?>> explicitOptions = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** The local address to register at the rendezvous: binds the socket first if it is not bound. */
    private InetSocketAddress boundForRendezvous() throws IOException {
        if (tcp.getLocalAddress() == null) {
            tcp.bind(null);
        }
        return (InetSocketAddress) tcp.getLocalAddress();
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

    private void connectedPlainly() throws IOException {
        ensureOpen();
        life.connectedPlain();
        if (!life.isUpgradeCandidate()) {
            return;
        }
        runtime.upgrades().startClient(life, (InetSocketAddress) getRemoteAddress(),
                (InetSocketAddress) getLocalAddress());
        if (runtime.config().upgradeDelayNanos() <= 0) {
            // no delay: the upgrade begins at once (connect and finishConnect hold both locks)
            requestConversion(life::beginUpgrade);
        }
    }

    /**
     * An accepted local connection (plain so far) may move to UCX if its client runs
     * hadroNIO and asks for it; it stays plain until then. Before the channel is handed to
     * the application.
     */
    void upgradeAccepted(int serverPort) throws IOException {
        life.idleOutputSwitch(this::switchIdleOutput);
        life.converter(this::requestConversion);
        runtime.upgrades().accepted(life, (InetSocketAddress) getRemoteAddress(), serverPort);
    }

    // ---- converting a plain local connection for its upgrade -------------------------------------

    // what runs once the socket is non-blocking (the upgrade's next step) while a conversion
    // is wanted; null otherwise
    private volatile Runnable afterConversion;

    /**
     * The upgrade of this (so far plain) connection wants to go on: its socket must become
     * non-blocking, and blocking emulated, before anything can switch a direction. A thread
     * asleep inside the socket (a blocking read waiting in the kernel, as with the JDK) would
     * hold the raw input across the peer's switch point, so the conversion happens when no
     * thread is inside the channel: now if none is, else at the next read or write
     * ({@link #convertIfWanted}). Then {@code then} runs. Any thread.
     */
    private void requestConversion(Runnable then) {
        afterConversion = then;
        tryConvert();
    }

    /** Converts when the upgrade wants it (or, {@code dueNow}, starts it) and no other thread is inside. */
    private void convertIfWanted(boolean dueNow) {
        if (dueNow) {
            requestConversion(life::beginUpgrade);
        } else if (afterConversion != null) {
            tryConvert();
        }
    }

    /** Converts once no other thread holds the read or write lock ({@link #underBothLocks}). */
    private void tryConvert() {
        underBothLocks(whileConversionWanted, convert);
    }

    /** Makes the socket non-blocking for the upgrade (under both locks): what runs next, or null. */
    private Runnable convertLocked() {
        synchronized (blockingLock()) {
            Runnable then = afterConversion;
            afterConversion = null;
            if (then == null || life.isUpgradable()) {
                return null;
            }
            if (!isOpen() || life.state() != ConnectionLifecycle.OPEN || life.isInputShut()
                    || !life.isUpgradeCandidate()) {
                // closed, or the input shut down in the kernel: it stays plain
                life.stayPlain();
                return null;
            }
            try {
                tcp.configureBlocking(false);
            } catch (IOException e) {
                life.stayPlain();
                return null;
            }
            life.converted();
            return then;
        }
    }

    /**
     * The UCX half is ready (rendezvous thread): if no writer is inside, our output moves to
     * UCX now; a writer that is inside moves it at its next write.
     */
    private void switchIdleOutput() {
        if (writeLock.tryLock()) {
            try {
                if (isOpen() && life.outputRaw()) {
                    life.trySwitchOutput();
                }
            } finally {
                writeLock.unlock();
            }
            // a close while we held the write lock left its last step to us: else the peer never
            // reads its end (UpgradeTest#shouldEndTheStreamWhenTheServerClosesAsItsIdleOutputMoves)
            afterUnlock();
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
        boolean completed = false;
        try {
            begin();
            long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
            try {
                completed = life.awaitHandshake(deadline);
            } catch (InterruptedException e) {
                // the channel's interruptor closes it; end() reports that
                Thread.currentThread().interrupt();
            }
        } finally {
            end(completed);
        }
        if (!completed) {
            close();
            if (Thread.currentThread().isInterrupted()) {
                // the wait saw the interrupt before the channel's interruptor ran (it sets the
                // status first): do its work, as the NIO contract says
                throw new ClosedByInterruptException();
            }
            throw new SocketTimeoutException("Connect timed out");
        }
        return takeOutcome();
    }

    /** Takes over what the ended handshake produced (UCX, plain TCP, or a failure, thrown); true once connected. */
    private boolean takeOutcome() throws IOException {
        ensureOpen();
        IOException failure = life.takeOutcome();
        if (failure != null) {
            close();
            throw failure;
        }
        if (life.isPlain()) {
            usePlainTcp();
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
                int s = life.state();
                if (s == ConnectionLifecycle.OPEN) {
                    return true;
                }
                if (s != ConnectionLifecycle.CONNECTING) {
                    throw new NoConnectionPendingException();
                }
                if (life.handshakeEnded()) {
                    return takeOutcome();
                }
                if (life.isPlain()) {
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
                return false;
            } finally {
                writeLock.unlock();
            }
        } finally {
            readLock.unlock();
            afterUnlock();
        }
    }

    @Override
    public int readyOps(int interestOps) {
        int ready = 0;
        int s = life.state();
        if ((interestOps & SelectionKey.OP_CONNECT) != 0 && life.handshakeEnded()) {
            ready |= SelectionKey.OP_CONNECT;
        }
        if (s != ConnectionLifecycle.OPEN) {
            return ready;
        }
        boolean inputShut = life.isInputShut();
        int rw = interestOps & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        if (life.isReset()) {
            // a read or write would fail now (on a raw direction too: the kernel socket may say nothing)
            if (!life.inputOutlivesReset()) {
                return ready | rw;
            }
            // only our output broke: the input is ready as it would be
            ready |= rw & SelectionKey.OP_WRITE;
            rw &= ~SelectionKey.OP_WRITE;
        }
        // a raw direction's readiness is its fd's (readyOpsAfterPoll), a switched one's is UCX's
        if (life.inputRaw()) {
            if ((rw & SelectionKey.OP_READ) != 0 && (inputShut || hasPrefix())) {
                ready |= SelectionKey.OP_READ;
            }
            rw &= ~SelectionKey.OP_READ;
        }
        if (life.outputRaw()) {
            rw &= ~SelectionKey.OP_WRITE;
        }
        Connection c = life.connection();
        if (c != null && rw != 0) {
            if (inputShut) {
                ready |= rw & SelectionKey.OP_READ;
                rw &= ~SelectionKey.OP_READ;
            }
            if (rw != 0) {
                ready |= c.readyOps(rw);
            }
        }
        return ready;
    }

    @Override
    public ReadySignal readySignal() {
        return readySignal;
    }

    /** On UCX both ways: every change of readiness is a lifecycle change or a UCX completion, both signalled. */
    @Override
    public boolean signalsReadiness() {
        return life.onUcx();
    }

    @Override
    public int pollFd() {
        return life.inputRaw() || life.outputRaw() ? tcpFd : -1;
    }

    @Override
    public int readyOpsAfterPoll(int interestOps, int revents) {
        int ops = UcxSelectable.opsFromPoll(interestOps, revents);
        if (!life.inputRaw()) {
            ops &= ~SelectionKey.OP_READ;
        }
        if (!life.outputRaw()) {
            ops &= ~SelectionKey.OP_WRITE;
        }
        return ops;
    }

    private boolean hasPrefix() {
        ByteBuffer p = prefix;
        return p != null && p.hasRemaining();
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
        InetSocketAddress s = streamLocal;
        return s != null ? s : tcp.getLocalAddress();
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        ensureOpen();
        InetSocketAddress s = streamRemote;
        return s != null ? s : tcp.getRemoteAddress();
    }

    // ---- options -------------------------------------------------------------------------------

    @Override
    public <T> SocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        ensureOpen();
        if (name == HadronioSocketOptions.TRANSPORT) {
            throw new UnsupportedOperationException("'" + name + "' is read-only");
        }
        java.util.Map<SocketOption<?>, Object> opts = streamOptions;
        if (opts != null && !tcp.supportedOptions().contains(name)) {
            setStreamOption(opts, name, value);
            return this;
        }
        tcp.setOption(name, value);
        if (life.state() == ConnectionLifecycle.NEW) {
            explicitOptions.add(name);
        }
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
        java.util.Map<SocketOption<?>, Object> opts = streamOptions;
        if (opts != null && !tcp.supportedOptions().contains(name)) {
            if (!supportedOptions().contains(name)) {
                throw new UnsupportedOperationException("'" + name + "' not supported");
            }
            Object v = opts.get(name);
            return (T) (v != null ? v : tcpDefaults().get(name));
        }
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        Set<SocketOption<?>> set = options;
        if (set == null) {
            Set<SocketOption<?>> all;
            if (streamRemote == null) {
                all = new java.util.HashSet<>(tcp.supportedOptions());
            } else {
                // a TCP socket's, not the Unix socket's
                try (SocketChannel probe = runtime.platform().openSocketChannel()) {
                    all = new java.util.HashSet<>(probe.supportedOptions());
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            }
            all.add(HadronioSocketOptions.TRANSPORT);
            options = set = java.util.Collections.unmodifiableSet(all);
        }
        return set;
    }

    // the kernel socket's options and ours; the same for every channel
    private static volatile Set<SocketOption<?>> options;

    /** A TCP option of a local stream connection: checked as the JDK checks it, then remembered. */
    private void setStreamOption(java.util.Map<SocketOption<?>, Object> opts, SocketOption<?> name, Object value) {
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        if (value == null || !name.type().isInstance(value)) {
            throw new IllegalArgumentException("Invalid value '" + value + "'");
        }
        if (name == java.net.StandardSocketOptions.IP_TOS) {
            int tos = (Integer) value;
            if (tos < 0 || tos > 255) {
                throw new IllegalArgumentException("Invalid IP_TOS value");
            }
        }
        opts.put(name, value);
    }

    /** What a fresh TCP socket reports for each option (for a local stream's options never set). */
    private java.util.Map<SocketOption<?>, Object> tcpDefaults() throws IOException {
        java.util.Map<SocketOption<?>, Object> d = TCP_DEFAULTS;
        if (d == null) {
            d = new java.util.HashMap<>();
            try (SocketChannel probe = runtime.platform().openSocketChannel()) {
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
            TCP_DEFAULTS = d = java.util.Map.copyOf(d);
        }
        return d;
    }

    private static volatile java.util.Map<SocketOption<?>, Object> TCP_DEFAULTS;

    // ---- shutdown ------------------------------------------------------------------------------

    @Override
    public SocketChannel shutdownInput() throws IOException {
        ensureConnected();
        if (life.isPlain() && !life.isUpgradable()) {
            tcp.shutdownInput();
            prefix = null;
        }
        // a reader blocked in await() wakes and returns -1 (as the JDK's shutdownInput
        // signals its reader thread)
        life.shutdownInput();
        return this;
    }

    @Override
    public SocketChannel shutdownOutput() throws IOException {
        writeLock.lock();
        try {
            ensureConnected();
            if (life.outputRaw()) {
                tcp.shutdownOutput();
                life.outputEndedRaw();
            }
            // accelerated: FIN goes out once the sends posted so far completed
            life.shutdownOutput();
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

    /** TCP urgent data, on a plain connection; on an accelerated one it is dropped (a peer without OOBINLINE drops it too). */
    void sendUrgentData(int data) throws IOException {
        ensureConnected();
        if (life.isPlain() && streamRemote == null) {
            tcp.socket().sendUrgentData(data);
        }
    }

    /** The TCP socket, for the adaptor's options that only a plain connection has. */
    java.net.Socket plainSocket() {
        return life.isPlain() && streamRemote == null ? tcp.socket() : null;
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
            afterUnlock();
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
            afterUnlock();
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
            afterUnlock();
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
        if (life.inputRaw()) {
            if (!life.isUpgradable() && life.isUpgradeCandidate()) {
                convertIfWanted(false);
            }
            if (!life.isUpgradable()) {
                long n = readPlain(dsts, offset, length, timeoutMillis);
                if (n > 0 && life.isUpgradeCandidate()) {
                    life.consumedPlain(n);
                    convertIfWanted(life.upgradeDueAtRead());
                }
                return n;
            }
            long n = readRaw(dsts, offset, length, timeoutMillis);
            if (n != INPUT_SWITCHED) {
                return n;
            }
        }
        Connection c = life.connection();
        if (life.isInputShut()) {
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
                while (n == 0 && isOpen() && !life.isInputShut() && Connection.hasRemaining(dsts, offset, length)) {
                    if (!c.await(Connection.OP_READ, deadline)) {
                        throw new SocketTimeoutException("Read timed out");
                    }
                    if (!isOpen()) {
                        break;
                    }
                    n = c.read(dsts, offset, length);
                }
                if (n == 0 && life.isInputShut()) {
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
                return streamRemote == null ? timedReadPlain(dsts[offset], timeoutMillis)
                        : timedReadStream(dsts[offset], timeoutMillis);
            }
            // one buffer: the kernel socket's read(2), as the JDK's, not its readv(2) machinery
            long n = length == 1 ? tcp.read(dsts[offset]) : tcp.read(dsts, offset, length);
            if (n < 0 && streamRemote != null) {
                streamEnded();
            }
            return n;
        } catch (ClosedByInterruptException e) {
            close();
            throw e;
        }
    }

    /** A local stream's end: "connection reset" when the peer marked a reset (LocalStreams), else nothing. */
    private void streamEnded() throws IOException {
        if (streamEndSeen) {
            return;
        }
        streamEndSeen = true;
        // the peer is the client when we are the server (the client holds the reservation)
        if (runtime.localStreams().takeReset(streamId, reservation == null)) {
            // as after TCP's reset, writes fail from now on (none is taken); brokenPipeSeen is
            // the write lock's, but a write that races this read would fail on the closed pipe anyway
            brokenPipeSeen = true;
            throw new java.net.SocketException("Connection reset");
        }
    }

    // a local stream connection read its peer's end (and so looked for its reset mark)
    private volatile boolean streamEndSeen;

    /** The peer of this local stream has closed its socket (ours says POLLHUP). */
    private boolean peerClosedStream() {
        return io.hadronio.platform.PollSet.hungUp(tcpFd);
    }

    /** An abortive close of a local stream: the peer's reads end in a reset, unless it closed already. */
    private void markStreamReset() {
        runtime.localStreams().markReset(streamId, reservation != null, tcpFd);
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
        int fd = tcpFd;
        while (true) {
            long left = (deadline - System.nanoTime()) / 1_000_000;
            if (left <= 0) {
                throw new java.net.SocketTimeoutException("Read timed out");
            }
            short ready = io.hadronio.platform.PollSet.pollOne(fd, io.hadronio.platform.PollSet.POLLIN,
                    (int) Math.min(left, 100));
            if (Thread.currentThread().isInterrupted()) {
                close();
                throw new ClosedByInterruptException();
            }
            if (!isOpen()) {
                throw new java.nio.channels.AsynchronousCloseException();
            }
            if (ready != 0) {
                int n = tcp.read(dst);
                if (n < 0) {
                    streamEnded();
                }
                return n;
            }
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
            afterUnlock();
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
            afterUnlock();
        }
    }

    private long implWrite(ByteBuffer[] srcs, int offset, int length) throws IOException {
        assert writeLock.isHeldByCurrentThread();
        ensureConnected();
        if (life.outputRaw()) {
            if (!life.isUpgradable() && life.isUpgradeCandidate()) {
                convertIfWanted(life.upgradeDueAtWrite());
            }
            if (!life.isUpgradable()) {
                try {
                    long n = length == 1 ? tcp.write(srcs[offset]) : tcp.write(srcs, offset, length);
                    life.wroteRaw(n);
                    return n;
                } catch (ClosedByInterruptException e) {
                    close();
                    throw e;
                } catch (IOException e) {
                    if (streamRemote == null || brokenPipeSeen || !isBrokenPipe(e)) {
                        throw e;
                    }
                    brokenPipeSeen = true;
                    if (!streamEndSeen && runtime.localStreams().takeReset(streamId, reservation == null)) {
                        // the peer reset the connection: as TCP after its reset, the write fails
                        // with it and a read then finds the end
                        streamEndSeen = true;
                        throw new java.net.SocketException("Connection reset");
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
            // the first write after the UCX half is ready moves our output there
            if (life.trySwitchOutput() < 0) {
                return writeRaw(srcs, offset, length);
            }
        }
        Connection c = life.connection();
        if (life.isOutputShut()) {
            throw new ClosedChannelException();
        }
        boolean blocking = isBlocking();
        long total = 0;
        boolean completed = false;
        try {
            if (blocking) {
                begin();
            }
            total = c.write(srcs, offset, length, !blocking);
            if (blocking) {
                while (isOpen() && Connection.hasRemaining(srcs, offset, length)) {
                    c.await(Connection.OP_WRITE, Long.MAX_VALUE);
                    if (!isOpen()) {
                        break;
                    }
                    total += c.write(srcs, offset, length, false);
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

    // ---- an upgradable connection's raw directions (non-blocking socket, emulated blocking) -------

    // readRaw's answer when the input moved to UCX: read from there instead
    private static final long INPUT_SWITCHED = Long.MIN_VALUE;
    // how long an emulated blocking wait sleeps in poll(2) before it looks at the channel again
    // (a close from another thread cannot wake a poll on the socket)
    private static final int RAW_WAIT_MILLIS = 20;
    // a poll(2) that took longer slept until its event came (one that finds the event there
    // returns within a few µs)
    static final long SLEPT_NANOS = 10_000;
    // the last blocking raw read had to wait for its bytes; under the read lock. A connection's
    // first read usually waits (a server for its request, a client for its answer)
    private boolean rawReadWaited = true;

    /**
     * A read from the raw input of an upgradable connection: the kernel socket's bytes, never
     * past the peer's switch point, under the lifecycle's raw-input lock so that the switch
     * point cannot arrive in the middle of it. Blocking mode waits in {@code poll(2)}.
     *
     * @return bytes read, 0, -1 at end-of-stream, or {@link #INPUT_SWITCHED}
     */
    private long readRaw(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        boolean blocking = isBlocking();
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
        long n = 0;
        try {
            boolean waited = false;
            if (blocking) {
                begin();
                if (rawReadWaited && isOpen()) {
                    // the last blocking read found nothing either (request and response): wait
                    // first, which spares a failed read(2); a wait that slept says the next
                    // read should wait first too, one that found the bytes there does not
                    long start = System.nanoTime();
                    awaitRaw(io.hadronio.platform.PollSet.POLLIN, deadline);
                    waited = System.nanoTime() - start > SLEPT_NANOS;
                }
            }
            while (true) {
                java.util.concurrent.locks.ReentrantLock raw = life.rawInputLock();
                raw.lock();
                try {
                    if (!life.inputRaw()) {
                        return INPUT_SWITCHED;
                    }
                    if (life.isReset() && !life.inputOutlivesReset()) {
                        // the upgrade broke (the peer never took our switch): the connection is gone
                        // both ways, whatever the kernel socket still holds - unless only our output
                        // broke and the peer's raw stream is whole (ConnectionLifecycle.resetOutput)
                        throw life.resetException();
                    }
                    if (life.isInputShut()) {
                        return n = -1;
                    }
                    long room = life.rawRoom();
                    n = room == Long.MAX_VALUE ? tcp.read(dsts, offset, length) : readBounded(dsts, offset, length, room);
                    if (n > 0) {
                        life.consumedRaw(n);
                        if (blocking) {
                            rawReadWaited = waited;
                        }
                        return n;
                    }
                    if (n < 0) {
                        if (life.rawLimitKnown()) {
                            throw new java.net.SocketException("Connection reset (the peer's raw bytes ended before "
                                    + "the switch point it announced)");
                        }
                        return -1;
                    }
                } finally {
                    raw.unlock();
                }
                if (!blocking || !Connection.hasRemaining(dsts, offset, length) || !isOpen()) {
                    return 0;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("Read timed out");
                }
                waited = true;
                awaitRaw(io.hadronio.platform.PollSet.POLLIN, deadline);
            }
        } finally {
            if (blocking) {
                end(n != 0);
            }
        }
    }

    /**
     * One slice of an emulated blocking wait on the socket: until {@code events}, the
     * {@link System#nanoTime()} deadline or {@link #RAW_WAIT_MILLIS}, whichever comes first.
     */
    private void awaitRaw(short events, long deadline) throws IOException {
        int millis = deadline == Long.MAX_VALUE ? RAW_WAIT_MILLIS
                : (int) Math.min(RAW_WAIT_MILLIS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        io.hadronio.platform.PollSet.pollOne(tcpFd, events, millis);
    }

    /** A read of at most {@code room} bytes into the buffers (their limits are restored). */
    private long readBounded(ByteBuffer[] dsts, int offset, int length, long room) throws IOException {
        if (room <= 0) {
            return 0;
        }
        int end = offset;
        long total = 0;
        while (end < offset + length && total < room) {
            total += dsts[end++].remaining();
        }
        ByteBuffer last = dsts[end - 1];
        int savedLimit = last.limit();
        if (total > room) {
            last.limit(last.limit() - (int) (total - room));
        }
        try {
            return tcp.read(dsts, offset, end - offset);
        } finally {
            last.limit(savedLimit);
        }
    }

    /** A write to the raw output of an upgradable connection; blocking mode waits in {@code poll(2)}. */
    private long writeRaw(ByteBuffer[] srcs, int offset, int length) throws IOException {
        life.wroteRawBefore();
        boolean blocking = isBlocking();
        long total = 0;
        boolean completed = false;
        try {
            if (blocking) {
                begin();
            }
            while (true) {
                if (life.isReset()) {
                    throw life.resetException();
                }
                long n = tcp.write(srcs, offset, length);
                if (n > 0) {
                    life.wroteRaw(n);
                    total += n;
                }
                if (!blocking || !Connection.hasRemaining(srcs, offset, length)) {
                    completed = true;
                    return total;
                }
                if (!isOpen()) {
                    return total;
                }
                awaitRaw(io.hadronio.platform.PollSet.POLLOUT, Long.MAX_VALUE);
            }
        } finally {
            if (blocking) {
                end(completed);
            }
        }
    }

    // ---- blocking mode, close --------------------------------------------------------------------

    @Override
    protected void implConfigureBlocking(boolean block) throws IOException {
        // on PATH_TCP the kernel socket is the channel; otherwise blocking is a property of
        // our own waits, and the control socket stays non-blocking
        if (life.isPlain() && !life.isUpgradable()) {
            tcp.configureBlocking(block);
        }
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
        // a mark the peer made for us, which we will never read to (a peer that has not closed
        // has not marked either: it marks before its socket closes; one that marks in the
        // instant between leaves a mark for the sweep). Asked before close() closes our socket
        boolean takeMark = streamRemote != null && !streamEndSeen && peerClosedStream();
        try {
            if (life.close()) {
                tryFinishClose();
            }
        } finally {
            if (takeMark) {
                runtime.localStreams().takeReset(streamId, reservation == null);
            }
            SocketChannel r = reservation;
            if (r != null) {
                // the local port goes free with the connection (its upgrade session, named by
                // it, was shut down in close())
                r.close();
            }
        }
    }

    /**
     * Called by every holder of the read or write lock after it released it: a close, or the
     * upgrade's conversion, that found the lock taken left its step to the holder (not only
     * readers and writers: shutdownOutput, finishConnect and the rendezvous thread's idle output
     * switch too). Without the conversion here, a channel that goes idle after a session came
     * while a thread was inside (a write, a shutdownOutput) would never move (regression:
     * UpgradeTest#shouldMoveOnceTheThreadInsideAtTheSessionLeavesAndTheChannelStaysIdle).
     */
    private void afterUnlock() {
        if (conversionWanted()) {
            tryConvert();
        }
        finishCloseIfClosing();
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
     * retry of {@link #underBothLocks}, a close that meets the rendezvous thread's idle output
     * switch would stay CLOSING, the peer's writes held back for ever (regression:
     * AbruptCloseAcrossJvmsTest#shouldFreeEverythingWhenClosingWhileThePeerWrites).
     */
    private void tryFinishClose() {
        underBothLocks(whileClosing, finishClose);
    }

    // the steps underBothLocks runs, and while it tries: no lambda made per call
    private final BooleanSupplier whileClosing = this::isClosing;
    private final Supplier<Runnable> finishClose = this::finishCloseLocked;
    private final BooleanSupplier whileConversionWanted = this::conversionWanted;
    private final Supplier<Runnable> convert = this::convertLocked;

    private boolean isClosing() {
        return life.state() == ConnectionLifecycle.CLOSING;
    }

    /** The close's last step (under both locks); nothing runs after it. */
    private Runnable finishCloseLocked() {
        if (isClosing()) {
            life.lastOut(lingerZero());
        }
        return null;
    }

    private boolean conversionWanted() {
        return afterConversion != null;
    }

    /**
     * Runs {@code step} under both the read and the write lock, while {@code wanted}, once no
     * other thread holds either (reentrant: a reader or writer inside needs only the other), and
     * then what {@code step} returned, with the locks released. One that fails on a lock leaves
     * the step to its holder, which runs it after it released the lock ({@link #afterUnlock}).
     * Two threads can each fail on the lock the other holds: one that took the read lock and
     * found the write lock held, and the write lock's holder, which released it and then found
     * the read lock held. So one that failed on the write lock tries again once it released the
     * read lock, unless the write lock is still held (its holder then runs the step).
     */
    private void underBothLocks(BooleanSupplier wanted, Supplier<Runnable> step) {
        while (wanted.getAsBoolean()) {
            if (!readLock.tryLock()) {
                return; // its holder runs the step after it released it
            }
            boolean ran = false;
            Runnable then = null;
            try {
                if (writeLock.tryLock()) {
                    ran = true;
                    try {
                        then = step.get();
                    } finally {
                        writeLock.unlock();
                    }
                }
            } finally {
                readLock.unlock();
                if (then != null) {
                    then.run();
                }
            }
            if (ran || writeLock.isLocked()) {
                return;
            }
            Thread.onSpinWait();
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
        synchronized (adaptorLock) {
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
            int s = life.state();
            sb.append(switch (s) {
                case ConnectionLifecycle.NEW -> "unconnected";
                case ConnectionLifecycle.CONNECTING -> "connection-pending";
                case ConnectionLifecycle.OPEN -> "connected";
                default -> "closing";
            });
            if (s == ConnectionLifecycle.OPEN) {
                sb.append(' ').append(transport());
            }
            try {
                sb.append(" local=").append(streamLocal != null ? streamLocal : tcp.getLocalAddress());
                if (s == ConnectionLifecycle.OPEN) {
                    sb.append(" remote=").append(streamRemote != null ? streamRemote : tcp.getRemoteAddress());
                }
            } catch (IOException e) {
                // omit addresses
            }
            // the connection's facts (which directions moved, what each side announced): what a
            // hung application's dump needs
            sb.append(' ').append(life);
        }
        return sb.append(']').toString();
    }
}
