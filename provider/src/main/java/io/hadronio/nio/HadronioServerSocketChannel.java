package io.hadronio.nio;

import io.hadronio.connection.LocalStreams;
import io.hadronio.connection.Peers;
import io.hadronio.platform.EPollSet;
import io.hadronio.platform.EventFd;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.PollSet;
import io.hadronio.transport.AcceptQueue;
import io.hadronio.transport.AdaptiveSpin;
import io.hadronio.transport.ConnectionLifecycle;
import io.hadronio.transport.UcxRuntime;
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
 * <p>A blocking accept sleeps in {@code epoll_wait(2)} on the listener's fd and on
 * {@link #wakeFd}, which a finished handshake, {@code close} and an interrupt (through
 * close) signal. Before it sleeps it spins, as every adaptive waiter does
 * ({@code hadronio.polling}), asking epoll without waiting: a server that accepts
 * connections one by one then takes the next one on a core that never went idle, where the
 * JDK's accept wakes from {@code accept(2)} on an idle one (short connections with one
 * client: 1.32x the JDK's rate with the spin, level without it;
 * docs/benchmarks/connections.md). A selector polls the listener's fd ({@link #pollFd()})
 * and asks {@link #readyOps} about {@link #handshaken}.
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
    private volatile int listenerFd = -1;
    private volatile int port;
    // signalled by a finished handshake and by close; made at bind
    private EventFd wakeFd;
    // where a blocking accept sleeps: an epoll set of the listener's fd and wakeFd, made once
    // (a poll(2) sets up and tears down its wait on both fds at every accept: ~4 us of a
    // connection's ~100 in a thread-per-connection server); under acceptLock
    private EPollSet acceptWait;
    // acceptWait and wakeFd are closed (under acceptLock)
    private boolean waitResourcesReleased;
    // where the local rendezvous listens for this channel's clients (null: it does not)
    private volatile InetSocketAddress rendezvousAddress;
    // local hadroNIO clients' Unix stream connections (connection/LocalStreams); null: none come
    private volatile LocalStreams.Listener streamListener;
    // what a selector polls when streamListener is there: an epoll set of both listeners' fds
    // (level-triggered, so readable while either has a connection); made at bind
    private EPollSet listeners;
    // the last blocking accept had to wait for its connection; under acceptLock
    private boolean acceptWaited;
    // a blocking accept is about to sleep or sleeps in poll(2): a finished handshake must
    // signal wakeFd (set before it looks at handshaken, read after an enqueue: no lost wake-up)
    private volatile boolean acceptSleeping;
    // a blocking accept's spin before it sleeps (hadronio.polling); under acceptLock
    private final AdaptiveSpin acceptSpin;
    // blocking accepts that slept in epoll_wait; written under acceptLock
    private volatile long acceptSleeps;
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
        synchronized (stateLock) {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            tcp.bind(local, backlog < 1 ? DEFAULT_BACKLOG : backlog);
            tcp.configureBlocking(false);
            wakeFd = new EventFd();
            listenerFd = PlatformChannels.fd(tcp);
            pollFd = listenerFd;
            acceptWait = new EPollSet(3);
            acceptWait.add(listenerFd, EPollSet.EPOLLIN);
            acceptWait.add(wakeFd.fd(), EPollSet.EPOLLIN);
            port = ((InetSocketAddress) tcp.getLocalAddress()).getPort();
            bound = true;
            offerRendezvous();
            offerLocalStreams(backlog < 1 ? DEFAULT_BACKLOG : backlog);
            if (runtime.config().hasRemoteNetworks()) {
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

    /**
     * Lets local hadroNIO clients find this listener ({@link io.hadronio.connection.LocalRendezvous}),
     * unless SO_REUSEPORT is on: another process (maybe a plain one) may then share the
     * port, and a client that registered with us could land on it.
     */
    private void offerRendezvous() throws IOException {
        Boolean reusePort = tcp.supportedOptions().contains(java.net.StandardSocketOptions.SO_REUSEPORT)
                ? tcp.getOption(java.net.StandardSocketOptions.SO_REUSEPORT) : Boolean.FALSE;
        if (Boolean.TRUE.equals(reusePort)) {
            return;
        }
        InetSocketAddress local = (InetSocketAddress) tcp.getLocalAddress();
        rendezvousAddress = local;
        runtime.peers().rendezvous().listen(local.getAddress(), local.getPort(), onRegistered);
    }

    /**
     * Lets local hadroNIO clients connect without kernel TCP ({@link LocalStreams}), where the
     * rendezvous is offered (so not with SO_REUSEPORT) and connections upgrade.
     */
    private void offerLocalStreams(int backlog) throws IOException {
        LocalStreams streams = runtime.localStreams();
        InetSocketAddress local = rendezvousAddress;
        if (streams == null || local == null || runtime.upgrades() == null) {
            return;
        }
        LocalStreams.Listener l;
        try {
            l = streams.listen(local, backlog, runtime.peers()::isLocal);
        } catch (IOException e) {
            // local clients use TCP
            return;
        }
        EPollSet both = new EPollSet(2);
        both.add(listenerFd, EPollSet.EPOLLIN);
        both.add(l.fd(), EPollSet.EPOLLIN);
        acceptWait.add(l.fd(), EPollSet.EPOLLIN);
        listeners = both;
        streamListener = l;
        pollFd = both.fd();
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
        if (acceptSleeping) {
            // (a write(2) per connection otherwise: the selecting thread enqueues every plain one)
            wakeFd.signal();
        }
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
                LocalStreams.Listener streams = streamListener;
                LocalStreams.Accepted local = streams == null ? null : streams.accept();
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
            Peers.Inbound inbound = runtime.peers().inbound(remote, port);
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
                    awaitAcceptable(deadline == Long.MAX_VALUE ? -1 : timeoutMillis);
                    waited = System.nanoTime() - start > PollSet.SLEPT_NANOS;
                }
                while ((accepted = tryAccept()) == null && blocking && isOpen()) {
                    waited = true;
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        throw new SocketTimeoutException("Accept timed out");
                    }
                    awaitAcceptable(deadline == Long.MAX_VALUE ? -1 : (int) Math.max(1, left / 1_000_000));
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
            LocalStreams.Listener streams = streamListener;
            LocalStreams.Accepted local = streams == null ? null : streams.accept();
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
        return new HadronioSocketChannel(provider(), runtime, h.accelerated);
    }

    /**
     * The channel of a plain connection. One from a local client may still move to UCX if
     * that client runs hadroNIO ({@code hadronio.upgrade}): it opens plain and upgrades in
     * the background.
     */
    private HadronioSocketChannel plainChannel(SocketChannel child, ByteBuffer prefix) throws IOException {
        HadronioSocketChannel ch = new HadronioSocketChannel(provider(), runtime, child, prefix);
        if (prefix == null && runtime.upgrades() != null
                && runtime.peers().isLocal(((InetSocketAddress) child.getRemoteAddress()).getAddress())) {
            ch.upgradeAccepted(port);
        }
        return ch;
    }

    /** The channel of a local client's Unix stream connection; it may move to UCX as a TCP one does. */
    private HadronioSocketChannel streamChannel(LocalStreams.Accepted local) throws IOException {
        HadronioSocketChannel ch;
        try {
            ch = new HadronioSocketChannel(provider(), runtime, local);
        } catch (IOException e) {
            local.channel().close();
            throw e;
        }
        ch.upgradeAccepted(port);
        return ch;
    }

    /**
     * The adaptive spin of a blocking accept before it sleeps ({@link AdaptiveSpin}):
     * epoll's count of ready fds once the listener or {@link #wakeFd} is ready, 0 when the
     * spin ended (its window, the crowd check, {@code hadronio.polling=event}), a handshake
     * finished, or the channel closed. Each turn is one {@code epoll_wait(2)} that does not
     * wait.
     *
     * @param timeoutMillis the accept's timeout, -1 for none
     */
    private int spinForConnection(EPollSet e, int timeoutMillis) throws IOException {
        if (!acceptSpin.spins()) {
            return 0;
        }
        long start = System.nanoTime();
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : start + timeoutMillis * 1_000_000L;
        acceptSpin.start(start);
        try {
            while (true) {
                int n = e.poll(0);
                if (n != 0 || !handshaken.isEmpty() || !isOpen()) {
                    return n;
                }
                long now = System.nanoTime();
                if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                    return 0;
                }
                if (!acceptSpin.turn(now)) {
                    return 0;
                }
            }
        } finally {
            acceptSpin.stop();
        }
    }

    /** How often a blocking accept slept in {@code epoll_wait(2)} (for tests: the spin caught the others). */
    long acceptSleeps() {
        return acceptSleeps;
    }

    /** Sleeps until the listener has a connection, a handshake finished, or close/interrupt signalled. */
    private void awaitAcceptable(int timeoutMillis) throws IOException {
        EPollSet e = acceptWait;
        int n;
        acceptSleeping = true;
        try {
            if (!handshaken.isEmpty() || !isOpen()) {
                return;
            }
            long start = System.nanoTime();
            n = spinForConnection(e, timeoutMillis);
            if (n == 0 && handshaken.isEmpty() && isOpen()) {
                // what is left of the timeout after the spin (busy polling spins all of it)
                long left = timeoutMillis < 0 ? -1
                        : Math.max(0, timeoutMillis - (System.nanoTime() - start) / 1_000_000);
                if (left != 0) {
                    acceptSleeps++;
                    n = e.poll((int) left);
                }
            }
        } finally {
            acceptSleeping = false;
        }
        int wake = wakeFd.fd();
        for (int i = 0; i < n; i++) {
            if (e.readyFd(i) == wake) {
                wakeFd.drain();
            }
        }
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
        LocalStreams.Listener streams = streamListener;
        if (streams != null) {
            // first: no local client may connect to a closed server
            streams.close();
        }
        InetSocketAddress r = rendezvousAddress;
        if (r != null) {
            runtime.peers().rendezvous().unlisten(r.getAddress(), r.getPort(), onRegistered);
        }
        synchronized (stateLock) {
            if (bound) {
                // wake a blocked accept; it sees the channel closed
                wakeFd.signal();
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

    /** Closes the poll set and the wake-up fd of a closed channel, once; under acceptLock. */
    private void releaseWaitResources() {
        assert acceptLock.isHeldByCurrentThread();
        if (bound && !waitResourcesReleased) {
            waitResourcesReleased = true;
            acceptWait.close();
            wakeFd.close();
            if (listeners != null) {
                listeners.close();
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
