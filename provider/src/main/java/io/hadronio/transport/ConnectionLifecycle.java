package io.hadronio.transport;

import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import io.hadronio.transport.LifecycleTable.Event;

import static io.hadronio.transport.LifecycleTable.*;

/**
 * The one owner of a connection's lifecycle, plain or accelerated: its state ladder, the
 * path its bytes take, its half-closes, what its peer announced, and how it ends. The
 * socket channel, the selector, the UCX data path ({@link Connection}) and the control
 * thread ({@link ConnectionControl}) tell it what happened and ask it what holds; none of them
 * keeps a copy.
 *
 * <h2>State</h2>
 * One {@code volatile int} ({@link #word}): the ladder in the low bits, which only ever
 * moves up, and facts above it, which are only ever set. It is changed in one place,
 * {@link #update}, under this object's monitor; it is read without a lock, so the hot
 * paths (read, write, readiness) pay one volatile read. The monitor is a leaf: nothing is
 * locked, waited for or woken while it is held (a {@link WorkerGroup}'s lock may be held
 * when it is taken, never the other way round).
 *
 * <p>The word's bits, its events and the transition function (state × event → next word and
 * actions) are {@link LifecycleTable}'s, with the state table (docs/architecture.md,
 * "Lifecycle", is the same, checked against it). Each method here asks the table under the
 * monitor, stores the next word in {@link #update} and then performs the actions: sending
 * records, draining, lingering, closing the socket, waking waiters. Where a record announces
 * a fact (FIN_SENT), the control thread asks first, sends, and stores the answer after: the
 * word only gains facts meanwhile, which {@link #store} keeps.
 *
 * <p>Every fact change wakes the threads waiting on the connection's worker, which then ask
 * {@link Connection#isReady} again.
 */
public final class ConnectionLifecycle implements Reactor.Ticked, Reactor.ClosedAtExit {
    private static final System.Logger LOG = System.getLogger(ConnectionLifecycle.class.getName());
    public static final int NEW = LifecycleTable.NEW;
    public static final int CONNECTING = LifecycleTable.CONNECTING;
    public static final int OPEN = LifecycleTable.OPEN;
    public static final int CLOSING = LifecycleTable.CLOSING;
    public static final int DRAINING = LifecycleTable.DRAINING;
    public static final int CLOSED = LifecycleTable.CLOSED;

    // how long a closed connection whose peer takes none of its last bytes keeps them before it
    // resets the connection instead (the kernel likewise gives up on a closed socket whose peer's
    // window stays shut). Counted from the close and from every message the peer takes since, so a
    // slow reader that keeps taking loses nothing (regression: SlowReaderCloseTest).
    // A half-closed connection (shutdownOutput) waits for as long as it takes, as the kernel does.
    // Tests shorten it.
    static volatile long closeLingerNanos = TimeUnit.SECONDS.toNanos(60);
    // how long a closed connection waits for its peer's FIN, and for the messages it counts, after
    // our CLOSE or ABORT (the peer's control thread answers at once; this bounds a wedged peer)
    private static final long PEER_END_NANOS = TimeUnit.SECONDS.toNanos(5);
    // after this long with sends outstanding, a closing side nudges its peer
    private static final long NUDGE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

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
    private volatile Connection connection;
    // a handshake that failed: thrown by the connect that takes the outcome
    private IOException failure;

    // ---- upgrade (see UPGRADABLE) ----
    // a raw read and the peer's SWITCH never overlap: a read bounded by what it knew could
    // otherwise take bytes past the switch point
    private final java.util.concurrent.locks.ReentrantLock rawInput = new java.util.concurrent.locks.ReentrantLock();
    // raw bytes the peer sent before its switch (valid with IN_LIMIT) and we consumed (under rawInput)
    private volatile long rawLimit = -1;
    private long rawConsumed;
    // raw bytes we wrote (writers only, under the channel's write lock); frozen by the switch
    private long rawWritten;
    private volatile long switchedAt = -1;
    private volatile Upgrade upgrade;

    // ---- control thread only ----
    private long drainStarted;
    // the close's linger (closeLingerNanos): when it last started over, and the peer's progress then
    private long lingerFrom;
    private long lingerProgress;
    // a FIN or ABORT record told the peer where our stream ends; without one, the socket must not
    // end with the kernel's FIN either, which the peer would take for the end of a stream cut short
    private boolean endAnnounced;
    // after our CLOSE or ABORT: until when we take the peer's last DATA messages (0: not waiting).
    // While we wait, however the control connection ends is not news of the peer's death
    private long peerEndDeadline;
    // the wait for the peer's last messages learns their count over the upgrade session (our
    // output was raw: no record could ask), not from a FIN record; and that none will come
    private volatile boolean peerEndBySession;
    private volatile boolean peerEndLost;
    private boolean nudged;
    // the peer nudged us: progress until its FIN
    private boolean progressForPeer;
    private boolean ticking;
    // exit closes without freeing memory: application threads may still be inside a read or write
    private boolean keepMemory;

    private ConnectionLifecycle(ConnectionControl reactor, SocketChannel tcp, int word) {
        this.reactor = reactor;
        this.tcp = tcp;
        this.word = word;
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
    private void closeSocket() throws IOException {
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
        word = (w & ~LADDER) | facts | state;
        // last: the fields a caller sets before the update are part of what changed
        readinessChanged();
        return w;
    }

    /**
     * Asks the table what {@code event} does now, under the monitor (where nobody else changes
     * the word while the caller holds it too). Stores nothing: see {@link #store}.
     */
    private synchronized long ask(Event event, int in, long n, long m, long k) {
        return LifecycleTable.decide(word, event, in, n, m, k);
    }

    private long ask(Event event, int in) {
        return ask(event, in, 0, 0, 0);
    }

    /**
     * Stores a table's answer (unless it says not to) and returns its actions. The next word
     * may have been decided from an earlier snapshot: {@link #update} merges it (facts are only
     * set, the ladder only climbs), so nothing set meanwhile is lost.
     */
    private long store(long result) {
        assert Thread.holdsLock(this);
        long a = LifecycleTable.actions(result);
        if ((a & NOT_STORED) == 0) {
            int next = LifecycleTable.next(result);
            update(next & LADDER, next & ~LADDER);
        }
        return a;
    }

    /** Asks the table and stores its answer, under the monitor; returns the actions. */
    private synchronized long step(Event event, int in, long n, long m, long k) {
        return store(ask(event, in, n, m, k));
    }

    private long step(Event event, int in) {
        return step(event, in, 0, 0, 0);
    }

    private long step(Event event) {
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
    void readinessChanged() {
        Runnable r = readinessListener;
        if (r != null) {
            r.run();
        }
    }

    private void wake() {
        Connection c = connection;
        if (c != null) {
            c.group().wakeSleepers();
        }
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
    public Connection connection() {
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
    long peerFinCount() {
        return (word & PEER_FIN) != 0 ? peerFinCount : -1;
    }

    /** The peer closed, or the connection was reset: writes are answered as the kernel answers them. */
    boolean peerLeft() {
        return (word & (PEER_CLOSED | RESET)) != 0;
    }

    /** True for the one write after the peer's orderly close that is still taken (the kernel takes it too). */
    boolean takeLateWrite() {
        return (step(Event.LATE_WRITE_ASKED) & UNCHANGED) == 0;
    }

    /** No reader or writer should wait any more: the channel is closing, or the connection broke. */
    boolean waitersMustLeave(int op) {
        int w = word;
        return (w & LADDER) >= CLOSING
                || (w & RESET) != 0 && (op != Connection.OP_READ || !inputOutlivesReset());
    }

    /** For readiness: local shutdownInput, the peer closed, or the waits are over (see {@link Connection#isReady}). */
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
        Connection c = connection;
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
    boolean handshakeAccelerated(Connection c) {
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
    void handshakePlain() {
        synchronized (this) {
            store(ask(Event.HANDSHAKE_PLAIN, 0));
            notifyAll();
        }
        reactor.wakeSelectors();
    }

    /** The control thread's handshake failed (refused, reset, timed out). */
    void handshakeFailed(IOException cause) {
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
    synchronized void acceptedAccelerated(Connection c) {
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
            Upgrade u = upgrade;
            if (u != null) {
                u.end();
            }
            closeSocket();
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
            reactor.execute(this::abort);
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
     * A control record. One that breaks the protocol resets the connection at once (as a
     * broken control connection does), so that no reader waits for an end-of-stream that
     * will never come: returns false then.
     */
    boolean onRecord(byte type, long value) {
        try {
            switch (type) {
                case ControlRecord.FIN -> onFin(Event.FIN_RECORD, value);
                case ControlRecord.CLOSE -> {
                    long a = step(Event.CLOSE_RECORD, 0, value, 0, 0);
                    recordChecked(a, type, "CLOSE without FIN");
                    if ((a & WAKE) != 0) {
                        wake();
                    }
                    if ((a & END_OUTPUT_FOR_PEER) != 0) {
                        endOutputForPeer();
                    }
                }
                case ControlRecord.ABORT -> {
                    long a = step(Event.ABORT_RECORD, 0, value, 0, 0);
                    recordChecked(a, type, "ABORT " + value);
                    if ((a & DO_RESET) != 0) {
                        reset("Connection reset by peer");
                    }
                    if ((a & END_OUTPUT_FOR_PEER) != 0) {
                        endOutputForPeer();
                    }
                }
                case ControlRecord.SWITCHED -> {
                    long limit = rawLimit;
                    long a = step(Event.SWITCHED_RECORD, 0, value, limit, 0);
                    recordChecked(a, type, "SWITCHED " + value + " where " + limit + " raw bytes were announced");
                }
                case ControlRecord.NUDGE -> {
                    long a = step(Event.NUDGE_RECORD, progressForPeer ? PROGRESSING : 0);
                    recordChecked(a, type, null);
                    if ((a & PROGRESS_FOR_PEER) != 0) {
                        progressForPeer = true;
                        reactor.watch(this);
                    }
                }
                default -> recordChecked(step(Event.UNKNOWN_RECORD), type, "unknown control record type " + type);
            }
            return true;
        } catch (ProtocolException e) {
            onControlEof(e.getMessage());
            return false;
        }
    }

    /** Throws what the table found wrong with a record of {@code type} (its message, or one after the peer's end). */
    private static void recordChecked(long actions, byte type, String brokenMessage) throws ProtocolException {
        if ((actions & RECORD_AFTER_END) != 0) {
            throw new ProtocolException("control record of type " + type + " after CLOSE or ABORT");
        }
        if ((actions & PROTOCOL_ERROR) != 0) {
            throw new ProtocolException(brokenMessage);
        }
    }

    /**
     * The peer closed (CLOSE or ABORT): our output ends here. Writes see that from now on and
     * post nothing more, bytes held back for a credit are dropped (the peer will never read
     * them, as the kernel drops what a closed peer's socket receives), and a FIN tells the peer
     * how many DATA messages we posted, so that it can take them all before it lets go of its
     * receives: a message it left in UCX would keep our send, and our memory, for ever (a
     * rendezvous completes only when the receiver takes it), and an early eager one its memory.
     * Control thread.
     */
    private void endOutputForPeer() {
        // decided before the record goes, stored after it (a FIN_SENT seen early would skip it)
        long r = ask(Event.OUTPUT_ENDS_FOR_PEER, connection != null ? HALF : 0);
        if ((LifecycleTable.actions(r) & SEND_FIN_ENDING_OUTPUT) == 0) {
            return;
        }
        reactor.send(this, ControlRecord.FIN, connection.endOutput());
        endAnnounced = true;
        synchronized (this) {
            store(r);
        }
    }

    /**
     * The peer posted {@code messages} DATA messages in all: its FIN record (control thread), or
     * its DONE answer to our CLOSING over the upgrade session (rendezvous thread).
     */
    void onFin(long messages) throws ProtocolException {
        onFin(Event.DONE, messages);
    }

    private void onFin(Event event, long messages) throws ProtocolException {
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
        recordChecked(a, ControlRecord.FIN, messages < 0 || earlier >= 0 && earlier != messages
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
        Connection c = connection;
        long a = step(Event.CONTROL_EOF, (error != null ? ERROR : 0) | (peerEndDeadline != 0 ? AWAITING_PEER : 0)
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
     * first, as when it wrote and closed at once), or the peer closed while its own output was
     * still raw (no record can tell us that; Upgrade#onEnd): a reset for everything we write. A raw input
     * whose peer never announced a switch still reads to the kernel's end-of-stream, since its
     * bytes are the peer's whole stream ({@link #rawInputOutlivesReset}); resetting it too would
     * lose the last bytes of a peer that wrote and closed while our idle output moved
     * (regression: OrderlyCloseTest).
     */
    void resetOutput(String reason) {
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
    void reset(String reason) {
        markReset(Event.RESET, reason);
        wake();
    }

    /** Sets RESET with its first reason; the caller wakes the waiters when it may. */
    private synchronized void markReset(Event event, String reason) {
        if (resetReason == null) {
            resetReason = reason;
        }
        store(ask(event, 0));
    }

    /**
     * UCX's report that the peer failed, from inside a progress of the worker (an upcall,
     * under the group's lock: no call into the worker here); the group wakes its waiters
     * after that progress returns.
     */
    void onPeerFailure(String reason) {
        markReset(Event.PEER_FAILURE, reason);
    }

    // ---- upgrade: raw TCP first, then UCX, one direction at a time (see Upgrade) --------------

    /** The application's bytes from the peer still come raw from the kernel socket. */
    public boolean inputRaw() {
        int w = word;
        return (w & PATH_TCP) != 0 && (w & IN_UCX) == 0;
    }

    /** Our bytes still go raw over the kernel socket. */
    public boolean outputRaw() {
        int w = word;
        return (w & PATH_TCP) != 0 && (w & OUT_UCX) == 0;
    }

    /** A connection that may move to UCX: its socket is non-blocking, the channel emulates blocking. */
    public boolean isUpgradable() {
        return (word & UPGRADABLE) != 0;
    }

    /**
     * A local connection that may move to UCX once it carries traffic (see {@link Upgrade}),
     * set before the channel is shared. Until its channel {@linkplain #converted converts}
     * it, it is a plain connection in every respect: its socket in the application's
     * blocking mode, a blocking read asleep in the kernel as with the JDK. A short connection
     * ends that way.
     */
    public void offerUpgrade(Upgrade u) {
        upgrade = u;
    }

    /** Offered an upgrade that has not converted the connection yet, nor been given up. */
    public boolean isUpgradeCandidate() {
        return upgrade != null && (word & (UPGRADABLE | UPGRADE_OFF)) == 0;
    }

    /**
     * The channel made the socket non-blocking with no thread inside it (under its read and
     * write locks): from now on it emulates blocking, and the upgrade may go on.
     */
    public void converted() {
        step(Event.CONVERTED);
    }

    // the channel's "convert, then run this" (any thread; see convertThen), or null
    private volatile java.util.function.Consumer<Runnable> converter;

    /** What converts this connection for its upgrade (the channel's read and write locks are its business). */
    public void converter(java.util.function.Consumer<Runnable> c) {
        converter = c;
    }

    /**
     * The upgrade's next step needs the socket non-blocking: {@code then} runs once the
     * channel converted it, at once when no thread is inside the channel, else at its next
     * read or write (a blocking reader asleep in the kernel wakes when bytes come); never when
     * the connection closes first.
     */
    void convertThen(Runnable then) {
        java.util.function.Consumer<Runnable> c = converter;
        if (c != null) {
            c.accept(then);
        }
    }

    /** Client, candidate: a write that is not the connection's first, with the upgrade's delay past. */
    public boolean upgradeDueAtWrite() {
        Upgrade u = upgrade;
        return u != null && rawWritten > 0 && (word & (UPGRADABLE | UPGRADE_OFF)) == 0 && u.due();
    }

    /** Client, candidate: 64 KiB read, with the upgrade's delay past. */
    public boolean upgradeDueAtRead() {
        Upgrade u = upgrade;
        return u != null && rawConsumed >= UPGRADE_AFTER_READING && (word & (UPGRADABLE | UPGRADE_OFF)) == 0
                && u.due();
    }

    /** A candidate that cannot convert (closed, input shut down): it stays plain. */
    public void stayPlain() {
        upgradeOff();
    }

    /** Client: the converted connection's upgrade begins (once). */
    public void beginUpgrade() {
        usedRaw();
    }

    /** A candidate's plain read took {@code n} bytes (under the channel's read lock; no switch can come before it converts). */
    public void consumedPlain(long n) {
        rawConsumed += n;
    }

    // the channel's "move an idle output now" (it needs the channel's write lock), or null
    private volatile Runnable idleOutputSwitch;

    /**
     * What moves this connection's output to UCX when the UCX half is ready and no writer is
     * inside the channel: without it, the output of a side that only reads (a stream's
     * receiver) would stay on the kernel socket for the connection's life.
     */
    public void idleOutputSwitch(Runnable r) {
        idleOutputSwitch = r;
    }

    /** The UCX half is ready (rendezvous thread): an idle output moves now, a busy one at its next write. */
    void switchIdleOutput() {
        Runnable r = idleOutputSwitch;
        if (r != null) {
            r.run();
        }
    }

    /** The UCX half is connected (rendezvous thread); false when the channel closed first (the caller frees it). */
    synchronized boolean upgradeReady(Connection c) {
        long r = ask(Event.UPGRADE_READY, HALF);
        if ((LifecycleTable.actions(r) & UNCHANGED) != 0) {
            return false;
        }
        connection = c;
        store(r);
        return true;
    }

    /** No direction will switch any more, if none did; true when one already did (the upgrade must go on). */
    boolean upgradeOff() {
        return (step(Event.UPGRADE_OFF) & GO_ON) != 0;
    }

    /** shutdownOutput or close before the output switched: the kernel's FIN ends it; the peer stops waiting for a switch. */
    public void outputEndedRaw() {
        Upgrade u = upgrade;
        if (u != null) {
            u.outputEndedRaw();
        }
    }

    // raw input that makes a connection worth upgrading when its client only reads (a stream)
    private static final long UPGRADE_AFTER_READING = 64 * 1024;

    /**
     * A write on the raw connection (under the channel's write lock): a client's upgrade
     * begins at a write once it is due, but not at the connection's first write. A connection
     * that writes once (a request) and reads its answer is over before an upgrade could pay
     * for itself, however long its connect took; one that writes again carries traffic, and
     * moves a round trip later.
     */
    public void wroteRawBefore() {
        if (rawWritten > 0) {
            usedRaw();
        }
    }

    private void usedRaw() {
        Upgrade u = upgrade;
        // a candidate's channel converts first (upgradeDueAtWrite/AtRead), then begins
        if (u != null && (word & UPGRADABLE) != 0) {
            u.poke();
        }
    }

    /** Raw bytes a writer handed to the kernel (under the channel's write lock). */
    public void wroteRaw(long n) {
        rawWritten += n;
    }

    /**
     * A writer (under the channel's write lock) moves our output to UCX when it can: the UCX
     * half is ready, the output is open and still raw. Returns the switch point (raw bytes
     * written), or -1 when the output stays raw for now.
     */
    public long trySwitchOutput() {
        long n;
        synchronized (this) {
            long r = ask(Event.OUTPUT_SWITCH, 0);
            if ((LifecycleTable.actions(r) & SEND_SWITCH) == 0) {
                return -1;
            }
            n = rawWritten;
            switchedAt = n;
            store(r);
        }
        reactor.track(this);
        upgrade.sendSwitch(n);
        return n;
    }

    /** The upgrade of this connection, or null. */
    Upgrade upgrade() {
        return upgrade;
    }

    long switchedAt() {
        return switchedAt;
    }

    /**
     * The peer took our switch point: records may follow on the kernel socket (rendezvous
     * thread). SWITCHED must be the first record after our raw bytes, and every other record
     * is written by the control thread once OUT_ACKED is set; so the control thread writes
     * SWITCHED and only then sets OUT_ACKED (the other way round, a close's FIN or CLOSE could
     * go out first and the peer would read it as data or as a broken protocol).
     */
    void outputAcked() {
        reactor.execute(() -> {
            if (tcp.isOpen()) {
                reactor.send(this, ControlRecord.SWITCHED, switchedAt);
            }
            long a = step(Event.OUTPUT_ACKED);
            if ((a & WATCH) != 0) {
                reactor.watch(this);
            }
            if ((a & END_OUTPUT_FOR_PEER) != 0) {
                endOutputForPeer();
            }
        });
    }

    /** The lock a raw read holds (with {@link #rawRoom}, {@link #consumedRaw}) so that the peer's switch point never overtakes it. */
    public java.util.concurrent.locks.ReentrantLock rawInputLock() {
        return rawInput;
    }

    /** How many raw bytes may still be read (under {@link #rawInputLock}): unbounded until the peer's switch point is known. */
    public long rawRoom() {
        return (word & IN_LIMIT) != 0 ? rawLimit - rawConsumed : Long.MAX_VALUE;
    }

    /** True when the peer announced a switch point: a raw end-of-stream before it is a reset. */
    public boolean rawLimitKnown() {
        return (word & IN_LIMIT) != 0;
    }

    /** A raw read took {@code n} bytes (under {@link #rawInputLock}). */
    public void consumedRaw(long n) {
        rawConsumed += n;
        if (rawConsumed >= UPGRADE_AFTER_READING) {
            // a client that only reads upgrades once a stream came; one that reads a single
            // answer (and is about to close) does not
            usedRaw();
        }
        if ((word & IN_LIMIT) != 0 && rawConsumed == rawLimit) {
            inputSwitched();
        }
    }

    /** The peer's SWITCH(n): its raw bytes end at n (rendezvous thread). */
    void peerSwitched(long n) throws ProtocolException {
        rawInput.lock();
        try {
            long a;
            synchronized (this) {
                long r = ask(Event.PEER_SWITCH, 0, n, rawConsumed, 0);
                if ((LifecycleTable.actions(r) & PROTOCOL_ERROR) != 0) {
                    throw new ProtocolException("SWITCH at " + n + " after " + rawConsumed + " raw bytes were read");
                }
                rawLimit = n;
                a = store(r);
            }
            if ((a & INPUT_DONE) != 0) {
                inputSwitched();
            }
        } finally {
            rawInput.unlock();
        }
    }

    /** All raw bytes of the peer are read: input from UCX, control records from the kernel socket. */
    private void inputSwitched() {
        long a = step(Event.INPUT_SWITCHED);
        if ((a & READ_RECORDS) != 0) {
            reactor.readRecords(this);
        }
        if ((a & WAKE) != 0) {
            wake();
        }
    }

    // ---- the control thread's part: closing in order -----------------------------------------

    /**
     * A timer tick on the control thread while this connection has something to finish:
     * progress for a peer that nudged us, FIN once the sends completed, CLOSE and freeing
     * when draining. True while there is more to do.
     */
    public boolean tick() {
        boolean more = false;
        if (progressForPeer) {
            progressForPeer = connection.progressForPeer();
            more = progressForPeer;
        }
        if (owesPeer()) {
            more |= drainStep();
        }
        ticking = more;
        return more;
    }

    /** Marks this connection as on the control thread's tick list; false when it already was. */
    boolean startTicking() {
        if (ticking) {
            return false;
        }
        ticking = true;
        return true;
    }

    /** A FIN or CLOSE is still to be sent (the JVM's exit waits for those). */
    public boolean owesPeer() {
        int w = word;
        int s = w & LADDER;
        return s != CLOSED && ((w & (OUTPUT_SHUT | FIN_SENT)) == OUTPUT_SHUT && (w & (PATH_UCX | OUT_UCX)) != 0
                || s == DRAINING);
    }

    private boolean drainStep() {
        long now = System.nanoTime();
        if (peerEndDeadline != 0) {
            return awaitPeerEnd(now);
        }
        if (drainStarted == 0) {
            drainStarted = now;
        }
        // our output's end: the sends' state is asked (a call into the worker) only where the table reads it
        int w = word;
        int in = 0;
        if (LifecycleTable.finWaitsForSends(w)) {
            try {
                in = connection.sendsComplete() ? SENDS_COMPLETE : 0;
            } catch (IOException | RuntimeException e) {
                // a send failed: the peer is gone
                in = SEND_FAILED;
            }
        }
        // (on the snapshot its inputs were gathered for; this thread alone adds FIN_SENT)
        long r = LifecycleTable.decide(w, Event.TICK_FIN, in, 0, 0, 0);
        long a = LifecycleTable.actions(r);
        if ((a & FIN_WAITS) != 0) {
            if ((a & CHECK_LINGER) != 0 && lingeredOut(now)) {
                giveUpOnPeer();
                // still ticking while it takes the peer's messages in flight (awaitPeerEnd)
                return peerEndDeadline != 0;
            }
            if ((a & MAY_NUDGE) != 0 && !nudged && now - drainStarted > NUDGE_AFTER_NANOS) {
                // the peer may not be reading (and so not progressing): ask it to take our messages
                nudged = true;
                reactor.send(this, ControlRecord.NUDGE, 0);
            }
            return true;
        }
        if ((a & SEND_FIN) != 0) {
            reactor.send(this, ControlRecord.FIN, connection.messagesSent());
            endAnnounced = true;
        }
        synchronized (this) {
            store(r);
        }
        // then its close
        a = LifecycleTable.actions(ask(Event.TICK_CLOSE, 0));
        if ((a & (SEND_CLOSE | ASK_PEER_END | RUN_FINISH)) == 0) {
            // not draining: a half-close, whose FIN is all there is to do
            return false;
        }
        return closeThen(a, now) && awaitPeerEnd(now);
    }

    /**
     * What TICK_CLOSE or ABORT said: our CLOSE or ABORT record, or none; then, where the table
     * says so, the wait for the peer's last messages begins (true), else the end (false).
     */
    private boolean closeThen(long a, long now) {
        int in = (upgrade != null ? UPGRADE : 0) | (connection != null ? HALF : 0);
        if ((a & SEND_CLOSE) != 0) {
            reactor.send(this, ControlRecord.CLOSE, 0);
            in |= AFTER_OUR_END;
        } else if ((a & SEND_ABORT) != 0) {
            reactor.send(this, ControlRecord.ABORT, 0);
            endAnnounced = true;
            try {
                // an ordinary close after it, so that the record is not discarded by a reset
                tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, -1);
            } catch (IOException | RuntimeException e) {
                // closed already
            }
            in |= AFTER_OUR_END;
        }
        if ((a & (SEND_CLOSE | SEND_ABORT | ASK_PEER_END)) != 0
                && awaitPeer(LifecycleTable.actions(ask(Event.PEER_END_WAIT, in)), now)) {
            return true;
        }
        finish();
        return false;
    }

    /**
     * Begins the wait for the peer's last messages ({@link #awaitPeerEnd}) where PEER_END_WAIT
     * said so: true then. Its output is on UCX (its FIN will count them), or may be moving there
     * as we close, and the upgrade session asks how many to take ({@link Upgrade#closing}). Two
     * cases for the session: our output is raw, so no record can follow it to ask; or our input
     * is still raw, and the peer's SWITCH may be on its way over the session as we close. (In the
     * second, a close that let go of its receives at once would then take and acknowledge the
     * SWITCH, and the peer's messages posted after it would never be taken: its sends and memory
     * kept for ever; regression:
     * AbruptCloseMemoryTest#shouldFreeMemoryWhenClosingAsThePeersSwitchIsOnItsWay.) Control thread.
     */
    private boolean awaitPeer(long a, long now) {
        if ((a & (AWAIT_PEER | AWAIT_BY_SESSION)) == 0) {
            return false;
        }
        if ((a & AWAIT_BY_SESSION) != 0) {
            peerEndBySession = true;
            peerEndDeadline = now + PEER_END_NANOS;
            upgrade.closing();
        } else {
            peerEndDeadline = now + PEER_END_NANOS;
        }
        return true;
    }

    /**
     * The peer closes and asks how many DATA messages we posted (its CLOSING over the upgrade
     * session, {@link #awaitPeerBySession}; rendezvous thread). Our output, if it moved to UCX,
     * ends as against a closed TCP peer: writes fail from now on (our raw input still reads to the
     * kernel's end-of-stream), and the count goes back, so that the peer takes them all before its
     * receives go. An output still raw stays raw for good (the kernel's socket tells its end).
     * Returns the count, or -1 for a raw output.
     */
    long peerClosing() {
        if ((step(Event.PEER_CLOSING) & DO_RESET_OUTPUT) == 0) {
            return -1;
        }
        resetOutput("Connection reset by peer (it closed)");
        // writers see the reset under the connection's lock: nothing is posted after this count
        return connection.endOutput();
    }

    /** The wait for the peer's last messages over the session ends: none will come, or its count never will. */
    void stopAwaitingPeer() {
        peerEndLost = true;
    }

    /**
     * True once the peer has taken none of our messages for {@link #closeLingerNanos} since the
     * close or since it last took one. Control thread, while draining, right after
     * {@link Connection#sendsComplete} polled the credits.
     */
    private boolean lingeredOut(long now) {
        long progress = connection.messagesTaken();
        if (lingerFrom == 0 || progress != lingerProgress) {
            lingerFrom = now;
            lingerProgress = progress;
            return false;
        }
        return now - lingerFrom > closeLingerNanos;
    }

    /**
     * The closed connection's last bytes were not taken in time: the connection is reset (an
     * ABORT record, or, where no record may follow our bytes yet, a reset of the socket), so
     * that the peer learns that its stream was cut instead of reading an early end-of-stream.
     */
    private void giveUpOnPeer() {
        LOG.log(System.Logger.Level.WARNING, () -> "hadroNIO: the peer took none of this closed connection's last "
                + "bytes for " + TimeUnit.NANOSECONDS.toMillis(closeLingerNanos) + " ms; resetting it: " + this);
        if ((step(Event.LINGER_OVER) & RUN_ABORT) != 0) {
            abort();
        }
    }

    /**
     * For {@link #awaitPeerEnd}: reads and drops what is left of the peer's raw bytes (the
     * channel is closed: nobody else reads them), so that the records behind them - the FIN
     * the close waits for - can be read. False when the socket ended or failed first.
     */
    private boolean discardRaw() {
        if (tcp.isBlocking()) {
            // (an upgradable connection's socket is non-blocking; the control thread never blocks)
            return false;
        }
        ByteBuffer scratch = ByteBuffer.allocate((int) Math.min(65536, Math.max(1, rawRoom())));
        rawInput.lock();
        try {
            while ((word & IN_UCX) == 0) {
                long room = rawRoom();
                scratch.clear().limit((int) Math.min(scratch.capacity(), room));
                int n = tcp.read(scratch);
                if (n < 0) {
                    return false;
                }
                if (n == 0) {
                    return true;
                }
                consumedRaw(n);
            }
            return true;
        } catch (IOException e) {
            return false;
        } finally {
            rawInput.unlock();
        }
    }

    /**
     * After our CLOSE or ABORT, before our receives go: takes (and drops) the peer's DATA
     * messages until as many arrived as its FIN counts, which it sends when our close reaches
     * it ({@link #endOutputForPeer}) if it had not before. Cancelled earlier, our receives
     * would leave its last messages in UCX: a rendezvous send that never completes, holding
     * the peer's memory for good, and early eager messages holding ours (docs/RELIABILITY.md).
     * Ends early when the connection broke, when the control connection ended before any FIN,
     * or after {@link #PEER_END_NANOS}. True while waiting.
     */
    private boolean awaitPeerEnd(long now) {
        int w = word;
        long fin = peerFinCount();
        boolean late = now - peerEndDeadline > 0;
        boolean bySession = peerEndBySession;
        // (by the session, the kernel socket's end or reset says nothing of the count: the
        // peer answers before it closes)
        boolean over = (w & RESET) != 0 || late
                || fin < 0 && (bySession ? peerEndLost : (w & CONTROL_EOF) != 0);
        if (!over && !bySession && (w & IN_UCX) == 0 && (w & IN_LIMIT) != 0) {
            // the peer's raw bytes before its switch, unread: its records (the FIN) follow them
            over = !discardRaw();
        }
        if (!over && !connection.discardInput(fin)) {
            return true;
        }
        if (!late && (w & (IN_UCX | SWITCHED_SEEN | RESET | CONTROL_EOF)) == IN_UCX) {
            // the peer's SWITCHED record is on its way (it sends it when our ACK of its switch
            // comes, whatever its session said since): a socket closed with it unread sends a
            // reset, which takes the peer's unread input with it (the last answer of a server that
            // closed with its output raw; regression: CloseAfterAnswerAcrossJvmsTest)
            return true;
        }
        if (late) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: the peer's last messages did not come in time: " + this);
        }
        finish();
        return false;
    }

    /** Abortive close ({@code SO_LINGER} 0): the socket closes with a reset, nothing more is sent (control thread). */
    private void abort() {
        long a = LifecycleTable.actions(ask(Event.ABORT, 0));
        if (closeThen(a, System.nanoTime())) {
            // our bytes are dropped, but the peer's in flight are still taken (awaitPeerEnd); or
            // the reset goes out once they are
            reactor.watch(this);
        }
    }

    /** DRAINING → CLOSED: the socket leaves the control thread and closes, the UCX half is freed. */
    private void finish() {
        long a = step(Event.FINISH, (endAnnounced ? ANNOUNCED : 0) | (keepMemory ? KEEP_MEMORY : 0));
        if ((a & FORGET) != 0) {
            reactor.forget(this);
        }
        if ((a & LINGER_ZERO) != 0) {
            try {
                tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
            } catch (IOException | RuntimeException e) {
                // closed already
            }
        }
        if ((a & CLOSE_SOCKET) != 0) {
            // the session first: its end must reach the server before this port can be reused
            Upgrade u = upgrade;
            if (u != null) {
                u.end();
            }
            try {
                closeSocket();
            } catch (IOException e) {
                // nothing to do
            }
        }
        if ((a & RELEASE) != 0) {
            connection.release();
        }
    }

    /**
     * JVM exit (control thread): close in order what the application left open, as the
     * kernel does for its sockets, but leave the memory: application threads may still be
     * inside a read or write.
     */
    public void closeAtExit() {
        long a = step(Event.EXIT, connection != null ? HALF : 0);
        if ((a & MEMORY_STAYS) != 0) {
            keepMemory = true;
        }
        if ((a & WAKE) != 0) {
            wake();
        }
        if ((a & WATCH) != 0) {
            reactor.watch(this);
        }
    }

    /** The upgrade's facts, for {@link #toString()}: which directions moved, and the raw byte counts. */
    private String upgradeState(int w) {
        return " upgrade[" + ((w & UPGRADE_READY) != 0 ? "ready" : "pending") + ((w & UPGRADE_OFF) != 0 ? " off" : "")
                + ((w & OUT_UCX) != 0 ? " out-ucx@" + switchedAt : "") + ((w & OUT_ACKED) != 0 ? " out-acked" : "")
                + ((w & IN_LIMIT) != 0 ? " in-limit@" + rawLimit : "") + ((w & IN_UCX) != 0 ? " in-ucx" : "")
                + ((w & SWITCHED_SEEN) != 0 ? " switched-seen" : "") + " raw-in " + rawConsumed + " raw-out "
                + rawWritten + "]";
    }

    @Override
    public String toString() {
        int w = word;
        return "ConnectionLifecycle[" + switch (w & LADDER) {
            case NEW -> "NEW";
            case CONNECTING -> "CONNECTING";
            case OPEN -> "OPEN";
            case CLOSING -> "CLOSING";
            case DRAINING -> "DRAINING";
            default -> "CLOSED";
        } + ((w & PATH_UCX) != 0 ? " ucx" : (w & PATH_TCP) != 0 ? " tcp" : "")
                + ((w & INPUT_SHUT) != 0 ? " input-shut" : "") + ((w & OUTPUT_SHUT) != 0 ? " output-shut" : "")
                + ((w & FIN_SENT) != 0 ? " fin-sent" : "") + ((w & PEER_FIN) != 0 ? " peer-fin" : "")
                + ((w & PEER_CLOSED) != 0 ? " peer-closed" : "") + ((w & RESET) != 0 ? " reset" : "")
                + ((w & UPGRADABLE) != 0 ? upgradeState(w) : "")
                + (peerEndDeadline != 0 ? " awaiting-peer-end" + (peerEndBySession ? "-by-session" : "")
                        + (peerEndLost ? "-lost" : "") : "") + "]";
    }
}
