package io.hadronio.connection;

import io.hadronio.observe.ConnectionEvents;
import io.hadronio.observe.Counters;
import io.hadronio.observe.Fallback;
import io.hadronio.reactor.Reactor;

import java.io.IOException;
import java.net.ProtocolException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import io.hadronio.connection.LifecycleTable.Event;

import static io.hadronio.connection.LifecycleTable.*;

/**
 * The one owner of a connection's lifecycle, plain or accelerated: its state ladder, the
 * path its bytes take, its half-closes, what its peer announced, and how it ends. The
 * socket channel, the selector, the UCX data path ({@link UcxHalf}) and the control
 * thread ({@link ConnectionControl}) tell it what happened and ask it what holds; none of them
 * keeps a copy. Parts of it live beside it: {@link ConnectionEnding}, the close in order
 * as the control thread drives it; {@link ConnectionUpgrade}, a local connection's move to
 * UCX (its session and the raw bytes each way); and {@link PeerRecords}, which turns the
 * peer's control records into the table's events. It names its UCX half and its upgrade
 * session only by what it needs of them ({@link UcxHalf}, {@link SwitchSession}).
 *
 * <h2>State</h2>
 * One {@code volatile int} ({@link #word}): the ladder in the low bits, which only ever
 * moves up, and facts above it, which are only ever set. It is changed in one place,
 * {@link #update}, under this object's monitor; it is read without a lock, so the hot
 * paths (read, write, readiness) pay one volatile read.
 *
 * <p>The word's bits, its events and the transition function (state × event → next word and
 * actions) are {@link LifecycleTable}'s, with the state table (docs/architecture.md,
 * "Lifecycle", is the same, checked against it). Each method here asks the table under the
 * monitor, stores the next word in {@link #update} and then performs the actions: sending
 * records, closing the socket, waking waiters. Where a record announces a fact (FIN_SENT),
 * the control thread asks first, sends, and stores the answer after: the word only gains
 * facts meanwhile, which {@link #store} keeps.
 *
 * <p>Every fact change wakes the threads waiting on the connection's worker, which then ask
 * the UCX half whether it is ready again.
 *
 * <h2>Threads</h2>
 * {@code word}, {@code peerFinCount}, {@code resetReason}, {@code connection}: volatile, written
 * under the monitor (the UCX half set once), read by any thread. {@code failure}: under the
 * monitor. {@code tcp}: replaced once, before anyone else sees the connection. {@code streamReset}
 * and {@code readinessListener}: set once (volatile). What {@link ConnectionEnding} and
 * {@link ConnectionUpgrade} keep is in their Javadoc.
 *
 * <h2>Lock order</h2>
 * (docs/architecture.md, "Lock order")
 * <ol>
 * <li>the channel's read lock, then its write lock;</li>
 * <li>the raw-input lock ({@link ConnectionUpgrade#lock}: a raw read, the peer's SWITCH, a
 *     close dropping the peer's raw bytes);</li>
 * <li>a {@link WorkerGroup}'s lock (every call into the UCX half's worker, such as
 *     {@link UcxHalf#messagesConsumed});</li>
 * <li>this object's monitor: a leaf. Nothing is locked, waited for or woken while it is held
 *     (a worker group's lock may be held when it is taken, never the other way round; so the
 *     UCX half's counts are asked before the monitor is taken, never under it).</li>
 * </ol>
 * {@link ConnectionEnding} adds no lock (control thread only); {@link ConnectionUpgrade} adds
 * the raw-input lock, taken before the monitor.
 */
public final class ConnectionLifecycle implements Reactor.Ticked, Reactor.ClosedAtExit {
    public static final int NEW = LifecycleTable.NEW;
    public static final int CONNECTING = LifecycleTable.CONNECTING;
    public static final int OPEN = LifecycleTable.OPEN;
    public static final int CLOSING = LifecycleTable.CLOSING;
    public static final int DRAINING = LifecycleTable.DRAINING;
    public static final int CLOSED = LifecycleTable.CLOSED;

    private final ConnectionControl reactor;
    // the kernel socket: the whole connection on PATH_TCP, the control connection on PATH_UCX
    // the kernel socket; replaced once, before the connection opens, by a local stream's (useStream)
    SocketChannel tcp;

    private volatile int word;
    // valid once PEER_FIN is set (written before it)
    private volatile long peerFinCount = -1;
    // set once, before RESET
    private volatile String resetReason;
    // the UCX half, from the handshake on (set once, under the monitor)
    private volatile UcxHalf connection;
    // a handshake that failed: thrown by the connect that takes the outcome
    private IOException failure;
    // why the connection stays off UCX, and how (or null), as first recorded where it was
    // decided (fellBack; under the monitor), for the observing tools; null: nothing recorded
    private volatile Fallback fallback;
    private volatile String fallbackHow;
    // when both directions of a connection that opened plain had moved to UCX (ms since the
    // epoch, set in update); 0: not moved
    private volatile long upgradedAt;

    // the move of a local connection to UCX (see UPGRADABLE): its session, the raw bytes each way
    private final ConnectionUpgrade upgrade;
    // the close in order, as the control thread drives it
    private final ConnectionEnding ending;

    private ConnectionLifecycle(ConnectionControl reactor, SocketChannel tcp, int word) {
        this.reactor = reactor;
        this.tcp = tcp;
        this.word = word;
        this.upgrade = new ConnectionUpgrade(this, reactor);
        this.ending = new ConnectionEnding(this, reactor);
    }

    /** The kernel socket: the whole connection when plain, the control connection when accelerated. */
    public SocketChannel tcp() {
        return tcp;
    }

    /**
     * A client's connection goes over a local Unix stream socket instead of its TCP socket
     * (connection/LocalStreams): in connect, before it opens and before anyone else sees it.
     */
    public void useStream(SocketChannel stream, Runnable reset) {
        assert state() == CONNECTING || state() == NEW;
        this.tcp = stream;
        this.streamReset = reset;
    }

    /** An accepted local stream connection: how it tells its peer that it closes with a reset. */
    public void streamReset(Runnable reset) {
        this.streamReset = reset;
    }

    // a local stream connection: what an abortive close runs before its socket closes, since a
    // Unix socket's close is never a reset (LocalStreams#markReset); null on TCP
    private volatile Runnable streamReset;

    /** Closes the socket; one that closes with SO_LINGER 0 on a local stream marks the reset first. */
    void closeSocket() throws IOException {
        Runnable r = streamReset;
        // (after our output's end the peer has read to it: a TCP reset then fails its writes, not its reads)
        if (r != null && (word & OUTPUT_SHUT) == 0) {
            try {
                Integer linger = tcp.getOption(java.net.StandardSocketOptions.SO_LINGER);
                if (linger != null && linger == 0) {
                    r.run();
                }
            } catch (IOException | RuntimeException e) {
                // closed already
            }
        }
        tcp.close();
    }

    /** A connection that is not set up yet ({@code SocketChannel.open()}). */
    public static ConnectionLifecycle unconnected(ConnectionControl reactor, SocketChannel tcp) {
        return new ConnectionLifecycle(reactor, tcp, NEW);
    }

    /** A plain TCP connection a server channel accepted. */
    public static ConnectionLifecycle acceptedPlain(ConnectionControl reactor, SocketChannel tcp) {
        return new ConnectionLifecycle(reactor, tcp, OPEN | PATH_TCP);
    }

    /** The server's side of a connection whose handshake runs (control thread). */
    static ConnectionLifecycle accepting(ConnectionControl reactor, SocketChannel tcp) {
        return new ConnectionLifecycle(reactor, tcp, CONNECTING);
    }

    // ---- the one place the word changes ------------------------------------------------------

    /**
     * Moves the ladder to {@code to} (if that is up) and sets {@code facts}; returns the
     * word before. Callers hold the monitor.
     */
    private int update(int to, int facts) {
        assert Thread.holdsLock(this);
        int w = word;
        int state = Math.max(w & LADDER, to);
        int next = (w & ~LADDER) | facts | state;
        word = next;
        if ((w & PATH_TCP) != 0 && !bothOnUcx(w) && bothOnUcx(next)) {
            upgradeFinished();
        }
        // last: the fields a caller sets before the update are part of what changed
      readinessChanged();
        return w;
    }

    /**
     * Both directions of a connection that opened plain are on UCX now (under the monitor, in
     * {@link #update}): counted, and a JFR event where enabled; a leaf like the monitor (the
     * counter is lock-free, and the event is written to this thread's JFR buffer).
     */
    private void upgradeFinished() {
        upgradedAt = System.currentTimeMillis();
        Counters.jvm().upgradeFinished();
        // the remote address as the channel noted it: asking the socket would take its lock here
        if (ConnectionEvents.upgradedWanted()) {
            java.net.SocketAddress remote = peer;
            ConnectionEvents.upgraded(remote == null ? "" : remote.toString());
        }
    }

    // the remote address, as the channel noted it when the connection opened (observeAs); null before
    private volatile java.net.SocketAddress peer;

    /** The channel's note of the remote address, when the connection opened (for the observing tools). */
    public void observeAs(java.net.SocketAddress remote) {
        peer = remote;
    }

    /**
     * The remote address, for the observing tools: the channel's note, or the kernel socket's; ""
     * when none. Formatted here, when asked, not at every open: {@code InetSocketAddress.toString}
     * was a tenth of a cold server's work per accepted connection.
     */
    public String peerText() {
        java.net.SocketAddress a = peer;
        if (a == null) {
            try {
                a = tcp.getRemoteAddress();
            } catch (IOException | RuntimeException e) {
                return "";
            }
        }
        return a == null ? "" : a.toString();
    }

    /**
     * The connection stays off UCX for {@code reason} ({@code how}: details, or null): recorded
     * for the listing (the first reason wins), counted and, where enabled, a JFR event. Where the
     * decision is made, never on a data path.
     */
    public void fellBack(Fallback reason, String how) {
        synchronized (this) {
            if (fallback != null) {
                return;
            }
            fallbackHow = how;
            fallback = reason;
        }
        Counters.jvm().fellBack(reason);
        if (ConnectionEvents.fellBackWanted()) {
            ConnectionEvents.fellBack(peerText(), reason, how);
        }
    }

    /**
     * Why the connection is not on UCX now, for the listing: null once both directions are on
     * it; while it moves or waits to, {@link Fallback#UPGRADE_PENDING} or
     * {@link Fallback#UPGRADE_NOT_TRIGGERED}; else the reason recorded ({@link #fellBack}), or
     * {@code startFailed}'s {@link Fallback#UCX_NOT_STARTED}, or {@link Fallback#PEER_PLAIN}.
     */
    public Fallback whyNotOnUcx(boolean startFailed) {
        int w = word;
        if (connection != null && bothOnUcx(w)) {
            return null;
        }
        Fallback f = fallback;
        if (f != null) {
            return f;
        }
        if ((w & UPGRADE_OFF) == 0 && (w & (UPGRADABLE | UPGRADE_READY | OUT_UCX | IN_UCX)) != 0) {
            return Fallback.UPGRADE_PENDING;
        }
        if ((w & UPGRADE_OFF) == 0 && upgrade.session() != null) {
            return startFailed ? Fallback.UCX_NOT_STARTED : Fallback.UPGRADE_NOT_TRIGGERED;
        }
        return startFailed ? Fallback.UCX_NOT_STARTED : Fallback.PEER_PLAIN;
    }

    /** The details of the recorded reason ({@link #fellBack}), or null. */
    public String fallbackHow() {
        return fallbackHow;
    }

    /** When both directions of a connection that opened plain had moved to UCX (ms since the epoch), or 0. */
    public long upgradedAt() {
        return upgradedAt;
    }

    /** The ladder's name: NEW, CONNECTING, OPEN, CLOSING, DRAINING, CLOSED. */
    public String stateName() {
        return ladderName(state());
    }

    private static String ladderName(int s) {
        return switch (s) {
            case NEW -> "NEW";
            case CONNECTING -> "CONNECTING";
            case OPEN -> "OPEN";
            case CLOSING -> "CLOSING";
            case DRAINING -> "DRAINING";
            default -> "CLOSED";
        };
    }

    /**
     * Asks the table what {@code event} does now, under the monitor (where nobody else changes
     * the word while the caller holds it too). Stores nothing: see {@link #store}.
     */
    synchronized long ask(Event event, int in, long n, long m, long k) {
        return LifecycleTable.decide(word, event, in, n, m, k);
    }

    long ask(Event event, int in) {
        return ask(event, in, 0, 0, 0);
    }

    /**
     * Stores a table's answer (unless it says not to) and returns its actions. The next word
     * may have been decided from an earlier snapshot: {@link #update} merges it (facts are only
     * set, the ladder only climbs), so nothing set meanwhile is lost.
     */
    long store(long result) {
        assert Thread.holdsLock(this);
        long a = LifecycleTable.actions(result);
        if ((a & NOT_STORED) == 0) {
            int next = LifecycleTable.next(result);
            update(next & LADDER, next & ~LADDER);
        }
        return a;
    }

    /** Asks the table and stores its answer, under the monitor; returns the actions. */
    synchronized long step(Event event, int in, long n, long m, long k) {
        return store(ask(event, in, n, m, k));
    }

    long step(Event event, int in) {
        return step(event, in, 0, 0, 0);
    }

    long step(Event event) {
        return step(event, 0, 0, 0, 0);
    }

    // told whenever the word changes or a UCX request of the connection completes: the channel's
    // selection keys, which their selectors then look at again (see HadronioSelector); null: none
    private volatile Runnable readinessListener;

    /** The channel's "my readiness may have changed", run lock-free under any lock (it only queues). */
    public void readinessListener(Runnable listener) {
        readinessListener = listener;
    }

    /**
     * Something a selector's {@code readyOps} depends on may have changed: the word, or a UCX
     * request (from inside a call into the worker). Queues; wakes nobody (whoever made the
     * change wakes the waiters).
     */
    public void readinessChanged() {
        Runnable r = readinessListener;
        if (r != null) {
            r.run();
        }
    }

    void wake() {
        UcxHalf c = connection;
        if (c != null) {
            c.group().wakeSleepers();
        }
        upgrade.wakeRawReader();
    }

    // ---- what holds --------------------------------------------------------------------------

    public int state() {
        return word & LADDER;
    }

    public boolean isAccelerated() {
        return (word & PATH_UCX) != 0;
    }

    /** Both directions take the kernel socket, raw (plain TCP, or an upgrade that switched nothing yet). */
    public boolean isPlain() {
        int w = word;
        return (w & PATH_TCP) != 0 && (w & (OUT_UCX | IN_UCX)) == 0;
    }

    public boolean isInputShut() {
        return (word & INPUT_SHUT) != 0;
    }

    public boolean isOutputShut() {
        return (word & OUTPUT_SHUT) != 0;
    }

    /** The UCX half, or null (plain, or no handshake ended accelerated yet). */
    public UcxHalf connection() {
        return connection;
    }

    /** True once a connect's handshake has ended (the outcome waits for finishConnect: OP_CONNECT). */
    public boolean handshakeEnded() {
        return (word & (OUTCOME | LADDER)) == (OUTCOME | CONNECTING);
    }

    public boolean isReset() {
        return (word & RESET) != 0;
    }

    /** What a read or write of a reset connection throws, naming why it broke. */
    public java.net.SocketException resetException() {
        return new java.net.SocketException("Connection reset (" + resetReason + ")");
    }

    /** The peer's announced message count, or -1 while it has not announced its end. */
    public long peerFinCount() {
        return (word & PEER_FIN) != 0 ? peerFinCount : -1;
    }

    /** The peer closed, or the connection was reset: writes are answered as the kernel answers them. */
    public boolean peerLeft() {
        return (word & (PEER_CLOSED | RESET)) != 0;
    }

    /** True for the one write after the peer's orderly close that is still taken (the kernel takes it too). */
    public boolean takeLateWrite() {
        return (step(Event.LATE_WRITE_ASKED) & UNCHANGED) == 0;
    }

    /**
     * No reader or writer should wait any more: the channel is closing, or the connection broke.
     * {@code op} is the UCX half's OP_READ or OP_WRITE, which are SelectionKey's.
     */
    public boolean waitersMustLeave(int op) {
        int w = word;
        return (w & LADDER) >= CLOSING
                || (w & RESET) != 0 && (op != SelectionKey.OP_READ || !inputOutlivesReset());
    }

    /** For readiness: local shutdownInput, the peer closed, or the waits are over (the UCX half's isReady). */
    int word() {
        return word;
    }

    /** Throws what the JDK throws when a read or write finds the channel not connected. */
    public void ensureOpenForIo() throws ClosedChannelException {
        int s = word & LADDER;
        if (s == OPEN) {
            return;
        }
        if (s >= CLOSING) {
            throw new ClosedChannelException();
        }
        throw new NotYetConnectedException();
    }

    /** Both directions on UCX: accelerated from the start, or upgraded both ways (also once closed). */
    public boolean onUcx() {
        return connection != null && bothOnUcx(word);
    }

    private static boolean bothOnUcx(int w) {
        return (w & PATH_TCP) == 0 || (w & (OUT_UCX | IN_UCX)) == (OUT_UCX | IN_UCX);
    }

    /**
     * The path the bytes take, as {@code HadronioSocketOptions.TRANSPORT} reports it:
     * {@code "ucx:cma,sysv"}, {@code "tcp"}, or {@code ""} while not connected.
     */
    public String transport() {
        int w = word;
        int s = w & LADDER;
        if (s != OPEN && s != CLOSING) {
            return "";
        }
        if (!bothOnUcx(w)) {
            return "tcp";
        }
        UcxHalf c = connection;
        if (c == null) {
            return "";
        }
        String t = c.transports();
        return "ucx:" + t.substring(1, t.length() - 1).replace(" ", "");
    }

    // ---- connect (application) ---------------------------------------------------------------

    /** connect(): NEW → CONNECTING, or what the JDK throws. */
    public void beginConnect() throws ClosedChannelException {
        long a = step(Event.CONNECT);
        if ((a & THROW_CLOSED) != 0) {
            throw new ClosedChannelException();
        }
        if ((a & THROW_PENDING) != 0) {
            throw new ConnectionPendingException();
        }
        if ((a & THROW_CONNECTED) != 0) {
            throw new AlreadyConnectedException();
        }
    }

    /** The peer is plain: the bytes take the kernel socket, from the connect on. */
    public void choosePlain() {
        step(Event.PLAIN_PEER);
    }

    /** A plain connect completed: CONNECTING → OPEN. */
    public void connectedPlain() throws ClosedChannelException {
        if ((step(Event.TCP_CONNECTED) & THROW_CLOSED) != 0) {
            throw new ClosedChannelException();
        }
    }

    /** The control thread's handshake ended accelerated. False when the channel closed first (the caller frees it). */
    boolean handshakeAccelerated(UcxHalf c) {
        long a;
        synchronized (this) {
            long r = ask(Event.HANDSHAKE_ACCELERATED, 0);
            if ((LifecycleTable.actions(r) & UNCHANGED) != 0) {
                return false;
            }
            connection = c;
            a = store(r);
            notifyAll();
        }
        if ((a & WATCH) != 0) {
            reactor.watch(this);
        }
        wake();
        // a selector waiting for OP_CONNECT may sleep on any worker
        reactor.wakeSelectors();
        return true;
    }

    /**
     * The control thread's handshake ended with a server that does not share our key:
     * plain TCP, once finishConnect takes it (the socket has left the control thread).
     */
    void handshakePlain(Fallback reason, String how) {
        fellBack(reason, how);
        synchronized (this) {
            store(ask(Event.HANDSHAKE_PLAIN, 0));
            notifyAll();
        }
        reactor.wakeSelectors();
    }

    /** The control thread's handshake failed (refused, reset, timed out). */
    void handshakeFailed(IOException cause) {
        Counters.jvm().handshakeFailed();
        synchronized (this) {
            long r = ask(Event.HANDSHAKE_FAILED, 0);
            if ((LifecycleTable.actions(r) & KEEP_FAILURE) != 0) {
                failure = cause;
            }
            store(r);
            notifyAll();
        }
        reactor.wakeSelectors();
    }

    /**
     * Waits (a blocking connect) until the handshake has ended, the channel closed, or the
     * deadline passed; true when it ended.
     */
    public synchronized boolean awaitHandshake(long deadline) throws InterruptedException {
        while ((word & OUTCOME) == 0 && (word & LADDER) == CONNECTING) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            wait(Math.max(1, Math.min(TimeUnit.NANOSECONDS.toMillis(left), 1000)));
        }
        return (word & OUTCOME) != 0;
    }

    /**
     * finishConnect takes the outcome of an ended handshake: CONNECTING → OPEN on the path
     * the handshake chose; or the handshake's failure, which the caller throws after
     * closing the channel (the state stays CONNECTING until then).
     *
     * @return the failure, or null when connected
     */
    public synchronized IOException takeOutcome() throws ClosedChannelException {
        long a = store(ask(Event.TAKE_OUTCOME, (failure != null ? FAILED : 0) | (connection != null ? HALF : 0)));
        if ((a & THROW_CLOSED) != 0) {
            throw new ClosedChannelException();
        }
        return (a & THROW_FAILURE) != 0 ? failure : null;
    }

    /** The server's handshake ended accelerated: the connection is open (control thread). */
    synchronized void acceptedAccelerated(UcxHalf c) {
        connection = c;
        store(ask(Event.ACCEPTED_ACCELERATED, HALF));
    }

    // ---- local half-closes and close (application) -------------------------------------------

    /** shutdownInput: readers waiting for data wake and see end-of-stream. */
    public void shutdownInput() {
        if ((step(Event.SHUTDOWN_INPUT) & WAKE) != 0) {
            wake();
        }
    }

    /** shutdownOutput: no more writes; on PATH_UCX, FIN goes out once the sends posted so far completed. */
    public void shutdownOutput() {
        if ((step(Event.SHUTDOWN_OUTPUT) & WATCH) != 0) {
            reactor.watch(this);
        }
    }

    /**
     * close(): never blocks. Plain, or before anything was set up, the socket closes at
     * once (that also ends a handshake in progress): CLOSED, returns false. Otherwise
     * CLOSING, waiters wake, and the caller finishes with {@link #lastOut} once no read
     * or write is in progress: returns true.
     */
    public boolean close() throws IOException {
        long a;
        synchronized (this) {
            a = store(ask(Event.CLOSE, connection != null ? HALF : 0));
            if ((a & UNCHANGED) != 0) {
                return false;
            }
            notifyAll();
        }
        if ((a & CLOSE_SOCKET) != 0) {
            // the session first: its end must reach the server before this port can be reused
            SwitchSession u = upgrade.session();
            if (u != null) {
                u.end();
            }
            closeSocket();
            upgrade.wakeRawReader();
            return false;
        }
        wake();
        return true;
    }

    /**
     * The last reader and writer left a closing channel: CLOSING → DRAINING. The control
     * thread then waits for the posted sends, announces FIN and CLOSE and frees
     * everything, or, when {@code abortive} ({@code SO_LINGER} 0), drops it all at once.
     */
    public void lastOut(boolean abortive) {
        long a = step(Event.LAST_OUT, abortive ? ABORTIVE : 0);
        if ((a & RUN_ABORT) != 0) {
            reactor.execute(ending::abort);
        } else if ((a & WATCH) != 0) {
            reactor.watch(this);
        }
    }

    /** For a connection no channel ever took (a closing server channel's queue): close it in order. */
    public void closeUntaken() throws IOException {
        if (close()) {
            lastOut(false);
        }
    }

    // ---- events from the control connection and UCX (control thread, upcalls) ----------------

    /**
     * A control record (control thread; {@link PeerRecords}). One that breaks the protocol resets
     * the connection at once: returns false then.
     */
    boolean onRecord(byte type, long value) {
        return PeerRecords.take(this, type, value);
    }

    /**
     * The peer posted {@code messages} DATA messages in all: its FIN record (control thread), or
     * its DONE answer to our CLOSING over the upgrade session (rendezvous thread).
     */
    public void onFin(long messages) throws ProtocolException {
        onFin(Event.DONE, messages);
    }

    /** The peer's count, from {@code event} (FIN_RECORD or DONE); throws when it breaks the protocol. */
    void onFin(Event event, long messages) throws ProtocolException {
        // (the group's lock: taken before the monitor, never under it)
        long consumed = connection.messagesConsumed();
        long a;
        long earlier;
        synchronized (this) {
            earlier = peerFinCount();
            long r = ask(event, 0, messages, consumed, earlier);
            if ((LifecycleTable.actions(r) & NOT_STORED) == 0) {
                peerFinCount = messages;
            }
            a = store(r);
        }
        PeerRecords.checked(a, ControlRecord.FIN, messages < 0 || earlier >= 0 && earlier != messages
                ? "FIN of " + messages + " messages (earlier: " + earlier + ")"
                : "peer announced the end after " + messages + " messages, but " + consumed + " arrived");
        wake();
    }

    /**
     * The control connection ended: after CLOSE that is the orderly end; otherwise the
     * peer died or reset, and its endpoint is closed by force at once, so that sends UCX
     * never reported (it misses a peer that dies before its first rendezvous completed)
     * complete now and nothing waits for them.
     */
    void onControlEof(String error) {
        UcxHalf c = connection;
        long a = step(Event.CONTROL_EOF, (error != null ? ERROR : 0) | (ending.awaitingPeer() ? AWAITING_PEER : 0)
                | (c != null ? HALF : 0));
        if ((a & DO_RESET) != 0) {
          reset(error != null ? error : "peer closed the control connection without closing");
        }
        if ((a & ABORT_ENDPOINT) != 0) {
            c.abortEndpoint();
        }
    }

    /**
     * Our output switched, but the peer can no longer learn where (its upgrade session ended
     * first, as when it wrote and closed at once), or the peer closed where no record of it can
     * reach us (its output still raw, or its records behind raw bytes of it we have not read;
     * the session's end, see PathSwitch): a reset for everything we write. A raw input
     * whose peer never announced a switch still reads to the kernel's end-of-stream, since its
     * bytes are the peer's whole stream ({@link #inputOutlivesReset}); resetting it too would
     * lose the last bytes of a peer that wrote and closed while our idle output moved
     * (regression: OrderlyCloseTest).
     */
    public void resetOutput(String reason) {
        markReset(Event.RESET_OUTPUT, reason);
        wake();
    }

    /**
     * A reset of our output only ({@link #resetOutput}) leaves the input readable to its end:
     * a raw input whose peer never announced a switch to the kernel's end-of-stream (its bytes
     * are the peer's whole stream, whatever broke later), and a switched one (or one whose
     * switch point is known) until the peer's FIN count, CLOSE or the end of its control
     * connection without them, unless the input broke itself. A peer that answers and
     * closes at once ends its upgrade session before our idle output's SWITCH reaches it: we
     * must still read its last answer (regression:
     * CloseAfterAnswerAcrossJvmsTest#shouldAnswerEveryRequestThenEndTheStream).
     */
    public boolean inputOutlivesReset() {
        int w = word;
        return (w & OUTPUT_RESET) != 0 && ((w & IN_LIMIT) == 0 || (w & INPUT_RESET) == 0);
    }

    /** The connection broke: readers and writers see an IOException from now on. */
    public void reset(String reason) {
        markReset(Event.RESET, reason);
        wake();
    }

    /** Sets RESET with its first reason; the caller wakes the waiters when it may. */
    private synchronized void markReset(Event event, String reason) {
        if (resetReason == null) {
            resetReason = reason;
            Counters.jvm().reset();
        }
        store(ask(event, 0));
    }

    /**
     * UCX's report that the peer failed, from inside a progress of the worker (an upcall,
     * under the group's lock: no call into the worker here); the group wakes its waiters
     * after that progress returns.
     */
    public void onPeerFailure(String reason) {
        markReset(Event.PEER_FAILURE, reason);
    }

    // ---- upgrade: raw TCP first, then UCX, one direction at a time (see ConnectionUpgrade) ---

    /** The application's bytes from the peer still come raw from the kernel socket. */
    public boolean inputRaw() {
        return inputRoute() != ROUTE_UCX;
    }

    /** Our bytes still go raw over the kernel socket. */
    public boolean outputRaw() {
        return outputRoute() != ROUTE_UCX;
    }

    /** A connection that may move to UCX: its socket is non-blocking, the channel emulates blocking. */
    public boolean isUpgradable() {
        return (word & UPGRADABLE) != 0;
    }

    /** {@link #inputRoute}/{@link #outputRoute}: the direction is on UCX. */
    public static final int ROUTE_UCX = 0;
    /** The direction goes raw over the kernel socket, which is the whole connection (plain). */
    public static final int ROUTE_KERNEL = 1;
    /** The direction goes raw over the kernel socket of a connection that may move to UCX. */
    public static final int ROUTE_MOVING = 2;

    /**
     * The path a read takes now ({@link #ROUTE_UCX}, {@link #ROUTE_KERNEL}, {@link #ROUTE_MOVING}):
     * {@link #inputRaw} and {@link #isUpgradable} from one read of the state word. Asked one by one
     * on the data path, the second (a lone bit test of the volatile word) made C2 give up load
     * subsumption in every method that inlines a read or write into a loop (an application's read
     * loop, ours) and compile it a second time (docs/benchmarks/load.md, the JIT compiler's share).
     */
    public int inputRoute() {
        return route(word, IN_UCX);
    }

    /** The path a write takes now, as {@link #inputRoute}. */
    public int outputRoute() {
        return route(word, OUT_UCX);
    }

    private static int route(int w, int switchedBit) {
        if ((w & PATH_TCP) == 0 || (w & switchedBit) != 0) {
            return ROUTE_UCX;
        }
        return (w & UPGRADABLE) != 0 ? ROUTE_MOVING : ROUTE_KERNEL;
    }

    /** The connection's move to UCX: its session, the channel's hooks, the raw bytes each way. */
    public ConnectionUpgrade upgrade() {
        return upgrade;
    }

    /** The UCX half is connected (rendezvous thread); false when the channel closed first (the caller frees it). */
    public synchronized boolean upgradeReady(UcxHalf c) {
        long r = ask(Event.UPGRADE_READY, HALF);
        if ((LifecycleTable.actions(r) & UNCHANGED) != 0) {
            return false;
        }
        connection = c;
        store(r);
        return true;
    }

    /** No direction will switch any more, if none did; true when one already did (the upgrade must go on). */
    public boolean upgradeOff() {
        return (step(Event.UPGRADE_OFF) & GO_ON) != 0;
    }

    // ---- the control thread's part: closing in order (ConnectionEnding) ----------------------
    // (tick, startTicking, owesPeer and closeAtExit stay here as the control loop's entry points)

    /** The close in order as the control thread drives it. */
    public ConnectionEnding ending() {
        return ending;
    }

    /** A timer tick on the control thread ({@link ConnectionEnding#tick}); true while there is more to do. */
    @Override
    public boolean tick() {
        return ending.tick();
    }

    /** Marks this connection as on the control thread's tick list; false when it already was. */
    boolean startTicking() {
        return ending.startTicking();
    }

    /** A FIN or CLOSE is still to be sent (the JVM's exit waits for those). */
    @Override
    public boolean owesPeer() {
        return ending.owesPeer();
    }

    /** JVM exit (control thread): close in order what the application left open ({@link ConnectionEnding#closeAtExit}). */
    @Override
    public void closeAtExit() {
        ending.closeAtExit();
    }

    @Override
    public String toString() {
        int w = word;
        return "ConnectionLifecycle[" + ladderName(w & LADDER) + ((w & PATH_UCX) != 0 ? " ucx" : (w & PATH_TCP) != 0 ? " tcp" : "")
                + ((w & INPUT_SHUT) != 0 ? " input-shut" : "") + ((w & OUTPUT_SHUT) != 0 ? " output-shut" : "")
                + ((w & FIN_SENT) != 0 ? " fin-sent" : "") + ((w & PEER_FIN) != 0 ? " peer-fin" : "")
                + ((w & PEER_CLOSED) != 0 ? " peer-closed" : "") + ((w & RESET) != 0 ? " reset" : "")
                + ((w & UPGRADABLE) != 0 ? upgrade.describe(w) : "")
                + ending + "]";
    }
}
