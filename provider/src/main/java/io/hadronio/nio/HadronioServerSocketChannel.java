package io.hadronio.nio;

import io.hadronio.connection.LocalStreams;
import io.hadronio.connection.Peers;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.PollSet;
import io.hadronio.connection.AcceptQueue;
import io.hadronio.worker.AdaptiveSpin;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.runtime.UcxRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ServerSocketChannel} whose accepted channels carry their bytes over UCX when
 * the client runs hadroNIO, and over plain TCP when it does not.
 *
 * <p>{@code bind} opens a real kernel listener (JDK provider), so ports, port 0, the
 * wildcard, backlog and {@code getLocalAddress} behave as with the JDK, and makes the
 * port known to local hadroNIO clients ({@link io.hadronio.connection.LocalRendezvous}).
 * {@link #accept()} accepts on the kernel listener itself, in the caller's thread, and
 * asks {@link Peers} who the client is: a plain client's channel is returned at once; a
 * client that registered (or comes from a network configured as accelerated) goes to the
 * control thread for its handshake, and its channel waits in {@link #handshaken} until
 * the handshake ends. A client that never completes its handshake holds up nobody.
 *
 * <p>A blocking accept spins, then sleeps in {@code epoll_wait(2)} on the listener's fd
 * ({@link AcceptWait}) until a connection comes or a handshake ends. A selector polls the
 * listener's fd ({@link #pollFd()}) and asks {@link #readyOps} about {@link #handshaken}.
 */
public final class HadronioServerSocketChannel extends ServerSocketChannel implements AcceptQueue, UcxSelectable {
    private static final int DEFAULT_BACKLOG = 50;

    /** A connection whose handshake ended: accelerated (its open lifecycle) or plain (tcp, and prefix or null). */
    private record Handshaken(ConnectionLifecycle accelerated, SocketChannel tcp, ByteBuffer prefix,
                              LocalStreams.Accepted local) {
        void close() {
            try {
                if (accelerated != null) {
                    accelerated.closeUntaken();
                } else if (local != null) {
                    local.channel().close();
                } else {
                    tcp.close();
                }
            } catch (IOException e) {
                // nothing to do
            }
        }
    }

    private final UcxRuntime runtime;
    // the kernel listener, non-blocking once bound
    private final ServerSocketChannel tcp;
    private final ReentrantLock acceptLock = new ReentrantLock();
    private final Object stateLock = new Object();
    // connections whose handshake the control thread finished
    private final ConcurrentLinkedQueue<Handshaken> handshaken = new ConcurrentLinkedQueue<>();
    // our selection keys (a listener's are asked on every pass anyway; signalled when a connection is queued)
    private final ReadySignal readySignal = new ReadySignal();
    // need stateLock to change
    private volatile boolean bound;
    private volatile int port;
    // where a blocking accept waits; made at bind
    private AcceptWait acceptWait;
    // the offer to local hadroNIO clients (the rendezvous, local streams); made at bind
    private volatile LocalOffer localOffer;
    // the runtime had started at bind (else its start failed, and the listener is plain: it offers
    // nothing and every connection it accepts is plain); set at bind, before bound
    private boolean runtimeStarted;
    // the last blocking accept had to wait for its connection; under acceptLock
    private boolean acceptWaited;
    // a blocking accept's spin before it sleeps (hadronio.polling); under acceptLock
    private final AdaptiveSpin acceptSpin;
    // SO_TIMEOUT of the adaptor's accept, in ms
    volatile int acceptTimeoutMillis;
    private ServerSocketAdaptor socket;

    public HadronioServerSocketChannel(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openServerSocketChannel();
        this.acceptSpin = new AdaptiveSpin(runtime.config().spinNanos(), runtime.config().spinYields());
    }

    /** A channel of one protocol family ({@code ServerSocketChannel.open(family)}): IPv4 only, say. */
    public HadronioServerSocketChannel(SelectorProvider provider, UcxRuntime runtime, java.net.ProtocolFamily family)
            throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openServerSocketChannel(family);
        this.acceptSpin = new AdaptiveSpin(runtime.config().spinNanos(), runtime.config().spinYields());
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        // before the kernel listens: a local client that connects from then on finds the
        // rendezvous (the runtime's start makes it), or its upgrade would find none and stay
        // plain. Not under stateLock: a close must not wait for the start
        boolean started = runtime.awaitStarted();
        synchronized (stateLock) {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            runtimeStarted = started;
            tcp.bind(local, backlog < 1 ? DEFAULT_BACKLOG : backlog);
            tcp.configureBlocking(false);
            int listenerFd = PlatformChannels.fd(tcp);
            acceptWait = new AcceptWait(this, handshaken, listenerFd, acceptSpin);
            port = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
            LocalOffer offer = new LocalOffer(runtimeStarted ? runtime : null, tcp, listenerFd,
                    backlog < 1 ? DEFAULT_BACKLOG : backlog, onRegistered, acceptWait);
            localOffer = offer;
            pollFd = offer.pollFd();
            // last: an accept that sees the channel bound finds everything above
            bound = true;
            if (runtimeStarted && runtime.config().hasRemoteNetworks()) {
                // clients from other hosts may speak first at any time
                runtime.handshakes().acceptFor(tcp, this, port, true);
            }
        }
        return this;
    }

    // a registration at the rendezvous: a handshake will follow, whether accept() is called or not
    private final Runnable onRegistered = this::acceptForRegisteredClient;

    private void acceptForRegisteredClient() {
        runtime.handshakes().acceptFor(tcp, this, port, false);
    }

    @Override
    public void deliver(ConnectionLifecycle connection) {
        enqueue(new Handshaken(connection, null, null, null));
    }

    @Override
    public void deliverPlain(SocketChannel channel, ByteBuffer taken) {
        enqueue(new Handshaken(null, channel, taken, null));
    }

    private void enqueue(Handshaken h) {
        if (!isOpen()) {
            h.close();
            return;
        }
        handshaken.add(h);
        if (!isOpen() && handshaken.remove(h)) {
            // closed meanwhile, after close() emptied the queue
            h.close();
            return;
        }
        // a selector waiting for OP_ACCEPT is woken through its own fd: one that holds no
        // connection does not sleep on the workers' event fds
        readySignal.runAndWake();
        // (the selecting thread enqueues every plain one)
        acceptWait.signalIfSleeping();
    }

    @Override
    public int readyOps(int interestOps) {
        if ((interestOps & SelectionKey.OP_ACCEPT) != 0 && !handshaken.isEmpty()) {
            return SelectionKey.OP_ACCEPT;
        }
        return 0;
    }

    @Override
    public ReadySignal readySignal() {
        return readySignal;
    }

    @Override
    public int pollFd() {
        return pollFd;
    }

    // the kernel listener's fd, or the epoll set of both listeners
    private volatile int pollFd = -1;

    @Override
    public boolean pollWhileSpinning() {
        return false;
    }

    /**
     * The listener's fd is readable: a connection waits in the kernel. Whether accept()
     * will return it depends on who the client is, so take it now (the selecting thread
     * does): a plain one waits for accept() in {@link #handshaken}, one that registered
     * goes to its handshake. OP_ACCEPT is thus ready exactly when accept() returns a channel.
     */
    @Override
    public int readyOpsAfterPoll(int interestOps, int revents) {
        if ((interestOps & SelectionKey.OP_ACCEPT) != 0 && isOpen()) {
            try {
                // one per pass: accept() takes it and tries the listener itself for more, so
                // no pass pays for a failed accept(2); the listener stays readable while more wait
                LocalStreams.Accepted local = localOffer.accept();
                if (local != null) {
                    enqueue(new Handshaken(null, null, null, local));
                } else {
                    SocketChannel child = tcp.accept();
                    if (child != null) {
                        accepted(child);
                    }
                }
            } catch (IOException e) {
                // closed meanwhile, or the client gone: nothing to accept
            }
        }
        return readyOps(interestOps);
    }

    @Override
    public void accepted(SocketChannel child) {
        SocketChannel plain = classify(child);
        if (plain != null) {
            enqueue(new Handshaken(null, plain, null, null));
        }
    }

    /** The child itself when its client is plain; null when it went to its handshake (or is gone). */
    private SocketChannel classify(SocketChannel child) {
        try {
            InetSocketAddress remote = (InetSocketAddress) child.getRemoteAddress();
            Peers.Inbound inbound = runtimeStarted ? runtime.peers().inbound(remote, port) : Peers.Inbound.PLAIN;
            if (inbound == Peers.Inbound.PLAIN) {
                return child;
            }
            child.configureBlocking(false);
            runtime.handshakes().accept(child, inbound, this);
        } catch (IOException e) {
            // the client is gone already
            try {
                child.close();
            } catch (IOException ignored) {
                // nothing to do
            }
        }
        return null;
    }

    @Override
    public SocketChannel accept() throws IOException {
        return accept(0);
    }

    /** Accept bounded by {@code timeoutMillis} (> 0) in blocking mode, for the socket adaptor. */
    SocketChannel accept(int timeoutMillis) throws IOException {
        acceptLock.lock();
        try {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            if (!bound) {
                throw new NotYetBoundException();
            }
            boolean blocking = isBlocking();
            SocketChannel accepted = null;
            try {
                if (blocking) {
                    begin();
                }
                long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
                boolean waited = false;
                if (blocking && acceptWaited && handshaken.isEmpty()) {
                    // the last blocking accept found nothing either: a server that accepts
                    // connections one by one waits first, which spares it a failed accept(2);
                    // a wait that slept says the next accept should wait first too, one that
                    // found a connection there (a burst) does not
                    long start = System.nanoTime();
                    acceptWait.await(deadline == Long.MAX_VALUE ? -1 : timeoutMillis);
                    waited = System.nanoTime() - start > PollSet.SLEPT_NANOS;
                }
                while ((accepted = tryAccept()) == null && blocking && isOpen()) {
                    waited = true;
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new SocketTimeoutException("Accept timed out");
                    }
                    acceptWait.await(deadline == Long.MAX_VALUE ? -1 : (int) Math.max(1, left / 1_000_000));
                    if (Thread.currentThread().isInterrupted()) {
                        break;
                    }
                }
                acceptWaited = waited;
            } finally {
                if (blocking) {
                    end(accepted != null);
                }
            }
            if (accepted == null) {
                if (blocking && Thread.currentThread().isInterrupted()) {
                    // Thread.interrupt() sets the status before it runs the channel's
                    // interruptor; if our end() got in first, the interruptor never runs (we
                    // are no longer blocked on the channel). Do its work: close the channel
                    // and report the interrupt, as the NIO contract says.
                    close();
                    throw new ClosedByInterruptException();
                }
                if (!isOpen()) {
                    throw blocking ? new AsynchronousCloseException() : new ClosedChannelException();
                }
            }
            return accepted;
        } finally {
            acceptLock.unlock();
            // a close that could not take the lock (we held it) left the release to us; it
            // marked the channel closed before it tried
            if (!isOpen() && acceptLock.tryLock()) {
                try {
                    releaseWaitResources();
                } finally {
                    acceptLock.unlock();
                }
            }
        }
    }

    /**
     * One connection if there is one: a finished handshake first, else the kernel
     * listener's next connection, which is returned at once when its client is plain and
     * handed to the control thread for its handshake otherwise.
     */
    private SocketChannel tryAccept() throws IOException {
        while (true) {
            Handshaken h = handshaken.poll();
            if (h != null) {
                return wrap(h);
            }
            // (not when the wait just before saw TCP's listener ready and not the local one's)
            AcceptWait w = acceptWait;
            LocalStreams.Accepted local = w != null && w.takeLocalIdle() ? null : localOffer.accept();
            if (local != null) {
                return streamChannel(local);
            }
            SocketChannel child = tcp.accept();
            if (child == null) {
                return null;
            }
            SocketChannel plain = classify(child);
            if (plain != null) {
                return plainChannel(plain, null);
            }
        }
    }

    private SocketChannel wrap(Handshaken h) throws IOException {
        if (h.local != null) {
            return streamChannel(h.local);
        }
        if (h.accelerated == null) {
            try {
                return plainChannel(h.tcp, h.prefix);
            } catch (IOException e) {
                h.close();
                throw e;
            }
        }
        return SocketChannelFactory.accepted(provider(), runtime, h.accelerated);
    }

    /**
     * The channel of a plain connection. One from a local client may still move to UCX if
     * that client runs hadroNIO ({@code hadronio.upgrade}): it opens plain and upgrades in
     * the background.
     */
    private HadronioSocketChannel plainChannel(SocketChannel child, ByteBuffer prefix) throws IOException {
        HadronioSocketChannel ch = SocketChannelFactory.acceptedPlain(provider(), runtime, child, prefix);
        if (prefix == null && runtimeStarted && runtime.upgrades() != null
                && runtime.isLocal(((InetSocketAddress) child.getRemoteAddress()).getAddress())) {
            ch.upgradeAccepted(port);
        }
        return ch;
    }

    /** The channel of a local client's Unix stream connection; it may move to UCX as a TCP one does. */
    private HadronioSocketChannel streamChannel(LocalStreams.Accepted local) throws IOException {
        HadronioSocketChannel ch;
        try {
            ch = SocketChannelFactory.acceptedLocal(provider(), runtime, local);
        } catch (IOException e) {
            local.channel().close();
            throw e;
        }
        ch.upgradeAccepted(port);
        return ch;
    }

    /** How often a blocking accept slept in {@code epoll_wait(2)} (for tests: the spin caught the others). */
    long acceptSleeps() {
        AcceptWait w = acceptWait;
        return w == null ? 0 : w.sleeps();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return tcp.getLocalAddress();
    }

    boolean isBound() {
        return bound;
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        tcp.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return tcp.supportedOptions();
    }

    @Override
    public ServerSocket socket() {
        synchronized (stateLock) {
            if (socket == null) {
                socket = new ServerSocketAdaptor(this);
            }
            return socket;
        }
    }

    @Override
    protected void implConfigureBlocking(boolean block) {
        // accept() waits in poll(2) itself; the kernel listener stays non-blocking
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        LocalOffer offer = localOffer;
        if (offer != null) {
            // first: no local client may connect to a closed server
            offer.withdraw();
        }
        synchronized (stateLock) {
            if (bound) {
                // wake a blocked accept; it sees the channel closed
                acceptWait.signal();
                // the control thread may be accepting for us: only once it let go of the
                // listener does closing it close the kernel socket (no connection may reach
                // a closed server's port)
                java.util.concurrent.CountDownLatch released = new java.util.concurrent.CountDownLatch(1);
                runtime.handshakes().abandon(tcp, this, released::countDown);
                tcp.close();
                try {
                    released.await(2, java.util.concurrent.TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            } else {
                tcp.close();
            }
        }
        Handshaken h;
        while ((h = handshaken.poll()) != null) {
            h.close();
        }
        // a blocked accept may still poll them: it releases them as it leaves (this thread
        // must not wait for it: an interrupt closes the channel in the interrupting thread,
        // under a lock the accepting thread needs on its way out)
        if (acceptLock.tryLock()) {
            try {
                releaseWaitResources();
            } finally {
                acceptLock.unlock();
            }
        }
    }

    /** Closes the accept's wait and the listeners' poll set of a closed channel, once; under acceptLock. */
    private void releaseWaitResources() {
        assert acceptLock.isHeldByCurrentThread();
        if (bound) {
            acceptWait.close();
            LocalOffer offer = localOffer;
            if (offer != null) {
                offer.closePollSet();
            }
        }
    }

    @Override
    public String toString() {
        String local;
        try {
            local = isOpen() ? String.valueOf(tcp.getLocalAddress()) : "closed";
        } catch (IOException e) {
            local = "?";
        }
        return getClass().getSimpleName() + "[" + local + "]";
    }
}
