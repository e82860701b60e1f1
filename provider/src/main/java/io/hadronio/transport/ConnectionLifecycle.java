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

/**
 * The one owner of a connection's lifecycle, plain or accelerated: its state ladder, the
 * path its bytes take, its half-closes, what its peer announced, and how it ends. The
 * socket channel, the selector, the UCX data path ({@link Connection}) and the control
 * thread ({@link ControlLoop}) tell it what happened and ask it what holds; none of them
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
 * <pre>
 * ladder      NEW → CONNECTING → OPEN → CLOSING → DRAINING → CLOSED
 *                        └──────────────────────────────────────↗ (plain TCP, or no connection yet)
 * facts       PATH_TCP | PATH_UCX          which path the bytes take, decided once
 *             OUTCOME                      the handshake ended (accelerated, plain or failed)
 *             INPUT_SHUT | OUTPUT_SHUT     local shutdownInput / shutdownOutput
 *             FIN_SENT                     we announced how many messages we sent
 *             PEER_FIN | PEER_CLOSED       the peer announced its end / its close
 *             RESET                        the connection broke (reason in {@link #resetReason})
 *             CONTROL_EOF                  the control connection ended
 *             LATE_WRITE                   the one write after the peer's close that is taken
 *             UPGRADABLE .. SWITCHED_SEEN  a local connection that opened plain moving to UCX (Upgrade)
 *             PEER_ABORTED                 the peer closed abortively (it lives)
 * </pre>
 *
 * <h2>State table</h2>
 * <table>
 * <tr><th>state</th><th>event (sent by)</th><th>action</th><th>next</th></tr>
 * <tr><td>NEW</td><td>connect (application)</td><td>ask {@code Peers}</td><td>CONNECTING</td></tr>
 * <tr><td>CONNECTING</td><td>plain peer; TCP connect done (application)</td><td>PATH_TCP</td><td>OPEN</td></tr>
 * <tr><td>CONNECTING</td><td>handshake ended (control thread)</td><td>OUTCOME; wake the connect</td>
 *     <td>CONNECTING, or DRAINING when closed meanwhile</td></tr>
 * <tr><td>CONNECTING</td><td>finishConnect takes the outcome (application)</td>
 *     <td>PATH_UCX, PATH_TCP, or the failure is thrown</td><td>OPEN</td></tr>
 * <tr><td>CONNECTING</td><td>server handshake ended (control thread)</td><td>PATH_UCX; to the accept queue</td>
 *     <td>OPEN</td></tr>
 * <tr><td>below CLOSING</td><td>close, plain or nothing set up (application)</td><td>close the socket</td>
 *     <td>CLOSED</td></tr>
 * <tr><td>OPEN, CONNECTING with OUTCOME</td><td>close (application)</td><td>wake waiters</td>
 *     <td>CLOSING</td></tr>
 * <tr><td>CLOSING</td><td>last reader and writer left (application)</td>
 *     <td>to the control thread: drain, or abort ({@code SO_LINGER} 0)</td><td>DRAINING</td></tr>
 * <tr><td>OPEN</td><td>shutdownOutput (application)</td><td>OUTPUT_SHUT; to the control thread</td><td>OPEN</td></tr>
 * <tr><td>OPEN .. DRAINING</td><td>tick with OUTPUT_SHUT or DRAINING, sends complete or linger over
 *     (control thread)</td>
 *     <td>send FIN</td><td>FIN_SENT</td></tr>
 * <tr><td>DRAINING</td><td>tick with FIN_SENT, RESET or CONTROL_EOF (control thread)</td>
 *     <td>send CLOSE; input on UCX: take the peer's messages until its FIN count (bounded); then close
 *     the socket, free the UCX half</td><td>CLOSED</td></tr>
 * <tr><td>DRAINING</td><td>abort (control thread)</td><td>close the socket (a reset), free the UCX half</td>
 *     <td>CLOSED</td></tr>
 * <tr><td>OPEN .. CLOSING</td><td>JVM exit (control thread)</td><td>as close; memory stays</td><td>DRAINING</td></tr>
 * <tr><td>any</td><td>FIN n (control record)</td><td>n below what arrived, or unlike an earlier FIN: RESET</td>
 *     <td>PEER_FIN</td></tr>
 * <tr><td>any</td><td>CLOSE (control record)</td><td>without FIN: RESET; FIN not sent yet: output ends, send FIN</td>
 *     <td>PEER_CLOSED, FIN_SENT</td></tr>
 * <tr><td>any</td><td>NUDGE (control record)</td><td>progress for the peer until its FIN</td><td>same</td></tr>
 * <tr><td>any</td><td>record after CLOSE, unknown record (control thread)</td><td>RESET</td><td>same</td></tr>
 * <tr><td>any</td><td>control EOF without CLOSE, or an error, not after our CLOSE or ABORT (control thread)</td>
 *     <td>RESET, CONTROL_EOF; force-close the endpoint</td><td>same</td></tr>
 * <tr><td>any</td><td>control EOF after CLOSE (control thread)</td><td>CONTROL_EOF</td><td>same</td></tr>
 * <tr><td>any</td><td>peer failure (UCX upcall)</td><td>RESET</td><td>same</td></tr>
 * <tr><td>DRAINING</td><td>abort, output on UCX (control thread)</td><td>ABORT record; input on UCX: take
 *     the peer's messages until its FIN count (bounded); ordinary close</td><td>CLOSED</td></tr>
 * <tr><td>any</td><td>ABORT (control record)</td><td>RESET; the shared endpoint stays; FIN not sent yet: output
 *     ends, send FIN</td><td>PEER_ABORTED, FIN_SENT</td></tr>
 * <tr><td>OPEN, offered an upgrade</td><td>the upgrade goes on and no thread is inside the channel
 *     (application, rendezvous thread)</td><td>socket non-blocking, blocking emulated</td><td>UPGRADABLE</td></tr>
 * <tr><td>OPEN, UPGRADABLE</td><td>UCX half connected (rendezvous thread)</td><td>-</td><td>UPGRADE_READY</td></tr>
 * <tr><td>OPEN, UPGRADE_READY</td><td>write (application)</td><td>SWITCH(n) on the session; UCX from now on</td>
 *     <td>OUT_UCX</td></tr>
 * <tr><td>OPEN, UPGRADABLE</td><td>SWITCH(n) (rendezvous thread)</td><td>raw reads stop at n; ACK</td>
 *     <td>IN_LIMIT</td></tr>
 * <tr><td>OUT_UCX</td><td>ACK (rendezvous thread)</td><td>SWITCHED(n) record; records may follow</td>
 *     <td>OUT_ACKED</td></tr>
 * <tr><td>IN_LIMIT</td><td>n raw bytes read (reader)</td><td>control thread reads records</td><td>IN_UCX</td></tr>
 * <tr><td>IN_UCX</td><td>SWITCHED n (control record)</td><td>not first or n unlike SWITCH: RESET</td>
 *     <td>SWITCHED_SEEN</td></tr>
 * <tr><td>OPEN, UPGRADABLE</td><td>session lost or PLAIN before a switch (rendezvous thread)</td>
 *     <td>stays plain</td><td>UPGRADE_OFF</td></tr>
 * </table>
 * Every fact change wakes the threads waiting on the connection's worker, which then ask
 * {@link Connection#isReady} again.
 */
public final class ConnectionLifecycle {
    private static final System.Logger LOG = System.getLogger(ConnectionLifecycle.class.getName());
    public static final int NEW = 0;
    public static final int CONNECTING = 1;
    public static final int OPEN = 2;
    public static final int CLOSING = 3;
    public static final int DRAINING = 4;
    public static final int CLOSED = 5;
    private static final int LADDER = 0x7;

    static final int PATH_TCP = 1 << 3;
    static final int PATH_UCX = 1 << 4;
    static final int OUTCOME = 1 << 5;
    static final int INPUT_SHUT = 1 << 6;
    static final int OUTPUT_SHUT = 1 << 7;
    static final int FIN_SENT = 1 << 8;
    static final int PEER_FIN = 1 << 9;
    static final int PEER_CLOSED = 1 << 10;
    static final int RESET = 1 << 11;
    static final int CONTROL_EOF = 1 << 12;
    static final int LATE_WRITE = 1 << 13;
    // ---- a local connection that starts on raw TCP and moves to UCX (Upgrade; docs/architecture.md, "Upgrade mode") ----
    // converted for its upgrade (offered one before, plain until then): its socket is non-blocking
    // and the channel emulates blocking, so that no thread sleeps inside it
    static final int UPGRADABLE = 1 << 14;
    // the UCX half exists and is connected: the output may switch at the next write
    static final int UPGRADE_READY = 1 << 15;
    // no direction will switch any more (no listener, plain peer, session lost before a switch)
    static final int UPGRADE_OFF = 1 << 16;
    // our output moved to UCX after rawWritten bytes (SWITCH sent); OUT_ACKED: the peer took it, records may follow
    static final int OUT_UCX = 1 << 17;
    static final int OUT_ACKED = 1 << 18;
    // the peer's SWITCH(rawLimit) arrived; IN_UCX: rawLimit raw bytes consumed, input from UCX, records from TCP
    static final int IN_LIMIT = 1 << 19;
    static final int IN_UCX = 1 << 20;
    // the in-band SWITCHED record, the first record after the peer's raw bytes, arrived
    static final int SWITCHED_SEEN = 1 << 21;
    // the peer closed abortively (ABORT record): a reset, but the peer lives
    static final int PEER_ABORTED = 1 << 22;

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

    private final ControlLoop reactor;
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

    private ConnectionLifecycle(ControlLoop reactor, SocketChannel tcp, int word) {
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
    public static ConnectionLifecycle unconnected(ControlLoop reactor, SocketChannel tcp) {
        return new ConnectionLifecycle(reactor, tcp, NEW);
    }

    /** A plain TCP connection a server channel accepted. */
    public static ConnectionLifecycle acceptedPlain(ControlLoop reactor, SocketChannel tcp) {
        return new ConnectionLifecycle(reactor, tcp, OPEN | PATH_TCP);
    }

    /** The server's side of a connection whose handshake runs (control thread). */
    static ConnectionLifecycle accepting(ControlLoop reactor, SocketChannel tcp) {
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
    synchronized boolean takeLateWrite() {
        if ((word & (LATE_WRITE | RESET)) != 0) {
            return false;
        }
        update(0, LATE_WRITE);
        return true;
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

    /** For connect: throws unless nothing is connected or connecting (bind has its own exceptions). */
    private void ensureUnconnected() {
        int s = word & LADDER;
        if (s == CONNECTING) {
            throw new ConnectionPendingException();
        }
        if (s == OPEN) {
            throw new AlreadyConnectedException();
        }
    }

    /** connect(): NEW → CONNECTING, or what the JDK throws. */
    public synchronized void beginConnect() throws ClosedChannelException {
        int s = word & LADDER;
        if (s >= CLOSING) {
            throw new ClosedChannelException();
        }
        ensureUnconnected();
        update(CONNECTING, 0);
    }

    /** The peer is plain: the bytes take the kernel socket, from the connect on. */
    public synchronized void choosePlain() {
        update(0, PATH_TCP);
    }

    /** A plain connect completed: CONNECTING → OPEN. */
    public synchronized void connectedPlain() throws ClosedChannelException {
        if ((word & LADDER) != CONNECTING) {
            throw new ClosedChannelException();
        }
        update(OPEN, PATH_TCP);
    }

    /** The control thread's handshake ended accelerated. False when the channel closed first (the caller frees it). */
    boolean handshakeAccelerated(Connection c) {
        boolean drain;
        synchronized (this) {
            int s = word & LADDER;
            if (s == CLOSED) {
                return false;
            }
            connection = c;
            // closed while the handshake ran, with the socket still open: nobody will take it over
            drain = s >= CLOSING;
            update(drain ? DRAINING : 0, OUTCOME);
            notifyAll();
        }
        if (drain) {
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
            update(0, OUTCOME);
            notifyAll();
        }
        reactor.wakeSelectors();
    }

    /** The control thread's handshake failed (refused, reset, timed out). */
    void handshakeFailed(IOException cause) {
        synchronized (this) {
            if ((word & LADDER) == CONNECTING) {
                failure = cause;
                update(0, OUTCOME);
            }
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
        int w = word;
        if ((w & LADDER) != CONNECTING || (w & OUTCOME) == 0) {
            throw new ClosedChannelException();
        }
        if (failure != null) {
            return failure;
        }
        update(OPEN, connection != null ? PATH_UCX : PATH_TCP);
        return null;
    }

    /** The server's handshake ended accelerated: the connection is open (control thread). */
    synchronized void acceptedAccelerated(Connection c) {
        connection = c;
        update(OPEN, PATH_UCX);
    }

    // ---- local half-closes and close (application) -------------------------------------------

    /** shutdownInput: readers waiting for data wake and see end-of-stream. */
    public void shutdownInput() {
        synchronized (this) {
            update(0, INPUT_SHUT);
        }
        wake();
    }

    /** shutdownOutput: no more writes; on PATH_UCX, FIN goes out once the sends posted so far completed. */
    public void shutdownOutput() {
        int before;
        synchronized (this) {
            before = update(0, OUTPUT_SHUT);
        }
        if ((before & OUTPUT_SHUT) == 0 && (before & (PATH_UCX | OUT_UCX)) != 0) {
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
        boolean closeSocket;
        synchronized (this) {
            int w = word;
            int s = w & LADDER;
            if (s >= CLOSING) {
                return false;
            }
            // plain, or an upgrade without a UCX half yet: the kernel socket is the whole connection
            closeSocket = connection == null;
            update(closeSocket ? CLOSED : CLOSING, 0);
            notifyAll();
        }
        if (closeSocket) {
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
        synchronized (this) {
            if ((word & LADDER) != CLOSING) {
                return;
            }
            update(DRAINING, 0);
        }
        if (abortive) {
            reactor.execute(this::abort);
        } else {
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
            int w = word;
            if ((w & (PEER_CLOSED | PEER_ABORTED)) != 0) {
                throw new ProtocolException("control record of type " + type + " after CLOSE or ABORT");
            }
            switch (type) {
                case ControlRecord.FIN -> onFin(value);
                case ControlRecord.CLOSE -> {
                    if ((w & PEER_FIN) == 0 || value != 0) {
                        throw new ProtocolException("CLOSE without FIN");
                    }
                    synchronized (this) {
                        update(0, PEER_CLOSED);
                    }
                    wake();
                    endOutputForPeer();
                }
                case ControlRecord.ABORT -> {
                    if (value != 0) {
                        throw new ProtocolException("ABORT " + value);
                    }
                    synchronized (this) {
                        update(0, PEER_ABORTED);
                    }
                    reset("Connection reset by peer");
                    endOutputForPeer();
                }
                case ControlRecord.SWITCHED -> {
                    if ((w & IN_UCX) == 0 || (w & SWITCHED_SEEN) != 0 || value != rawLimit) {
                        throw new ProtocolException("SWITCHED " + value + " where " + rawLimit + " raw bytes were announced");
                    }
                    synchronized (this) {
                        update(0, SWITCHED_SEEN);
                    }
                }
                case ControlRecord.NUDGE -> {
                    if (!progressForPeer) {
                        progressForPeer = true;
                        reactor.watch(this);
                    }
                }
                default -> throw new ProtocolException("unknown control record type " + type);
            }
            return true;
        } catch (ProtocolException e) {
            onControlEof(e.getMessage());
            return false;
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
        int w = word;
        if ((w & FIN_SENT) != 0 || (w & LADDER) == CLOSED || !outputOnUcx(w) || !recordsAllowed(w)
                || connection == null) {
            return;
        }
        reactor.send(this, ControlRecord.FIN, connection.endOutput());
        endAnnounced = true;
        synchronized (this) {
            update(0, FIN_SENT);
        }
    }

    /**
     * The peer posted {@code messages} DATA messages in all: its FIN record (control thread), or
     * its DONE answer to our CLOSING over the upgrade session (rendezvous thread).
     */
    void onFin(long messages) throws ProtocolException {
        long earlier = peerFinCount();
        if (messages < 0 || earlier >= 0 && earlier != messages) {
            throw new ProtocolException("FIN of " + messages + " messages (earlier: " + earlier + ")");
        }
        long consumed = connection.messagesConsumed();
        if (messages < consumed) {
            throw new ProtocolException("peer announced the end after " + messages + " messages, but "
                    + consumed + " arrived");
        }
        synchronized (this) {
            peerFinCount = messages;
            update(0, PEER_FIN);
        }
        wake();
    }

    /**
     * The control connection ended: after CLOSE that is the orderly end; otherwise the
     * peer died or reset, and its endpoint is closed by force at once, so that sends UCX
     * never reported (it misses a peer that dies before its first rendezvous completed)
     * complete now and nothing waits for them.
     */
    void onControlEof(String error) {
        boolean orderly;
        synchronized (this) {
            orderly = (word & PEER_CLOSED) != 0 && error == null;
            update(0, CONTROL_EOF);
        }
        if (peerEndDeadline != 0) {
            // we closed and wait only for the peer's last messages (awaitPeerEnd), which this ends.
            // The peer ends as it likes now (after our ABORT, reset by it, without a CLOSE): taken for
            // its death, it would close the UCX endpoint that our other connections to it share, and
            // fail their sends (regression: AbruptCloseAcrossJvmsTest)
            return;
        }
        if (!orderly) {
            reset(error != null ? error : "peer closed the control connection without closing");
            Connection c = connection;
            if (c != null && (word & PEER_ABORTED) == 0) {
                // no close and no abort: the peer may have died
                c.abortEndpoint();
            }
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
        resetOutputOnly = true;
        markReset(reason);
        wake();
    }

    // set by resetOutput: the reset leaves the input readable (see inputOutlivesReset)
    private volatile boolean resetOutputOnly;
    // set by every reset but resetOutput's: the input broke too
    private volatile boolean inputReset;

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
        return resetOutputOnly && (!rawLimitKnown() || !inputReset);
    }

    /** The connection broke: readers and writers see an IOException from now on. */
    void reset(String reason) {
        inputReset = true;
        markReset(reason);
        wake();
    }

    /** Sets RESET with its first reason; the caller wakes the waiters when it may. */
    private synchronized void markReset(String reason) {
        if (resetReason == null) {
            resetReason = reason;
        }
        update(0, RESET);
    }

    /**
     * UCX's report that the peer failed, from inside a progress of the worker (an upcall,
     * under the group's lock: no call into the worker here); the group wakes its waiters
     * after that progress returns.
     */
    void onPeerFailure(String reason) {
        inputReset = true;
        markReset(reason);
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
    public synchronized void converted() {
        update(0, UPGRADABLE);
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
        int w = word;
        if ((w & LADDER) != OPEN || (w & UPGRADE_OFF) != 0) {
            return false;
        }
        connection = c;
        update(0, UPGRADE_READY);
        return true;
    }

    /** No direction will switch any more, if none did; true when one already did (the upgrade must go on). */
    synchronized boolean upgradeOff() {
        int w = update(0, UPGRADE_OFF);
        return (w & (OUT_UCX | IN_LIMIT)) != 0;
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
            int w = word;
            if ((w & (UPGRADE_READY | UPGRADE_OFF | OUT_UCX | OUTPUT_SHUT)) != UPGRADE_READY
                    || (w & LADDER) != OPEN || (w & RESET) != 0) {
                return -1;
            }
            n = rawWritten;
            switchedAt = n;
            update(0, OUT_UCX);
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
            int before;
            synchronized (this) {
                before = update(0, OUT_ACKED);
            }
            if ((before & OUTPUT_SHUT) != 0 || (before & LADDER) >= DRAINING) {
                reactor.watch(this);
            }
            if ((before & (PEER_CLOSED | PEER_ABORTED)) != 0) {
                // the peer's close came before its acknowledgement: it still waits for our FIN
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
            if ((word & IN_LIMIT) != 0 || n < rawConsumed) {
                throw new ProtocolException("SWITCH at " + n + " after " + rawConsumed + " raw bytes were read");
            }
            rawLimit = n;
            synchronized (this) {
                update(0, IN_LIMIT);
            }
            if (rawConsumed == n) {
                inputSwitched();
            }
        } finally {
            rawInput.unlock();
        }
    }

    /** All raw bytes of the peer are read: input from UCX, control records from the kernel socket. */
    private void inputSwitched() {
        synchronized (this) {
            update(0, IN_UCX);
        }
        reactor.readRecords(this);
        wake();
    }

    // ---- the control thread's part: closing in order -----------------------------------------

    /**
     * A timer tick on the control thread while this connection has something to finish:
     * progress for a peer that nudged us, FIN once the sends completed, CLOSE and freeing
     * when draining. True while there is more to do.
     */
    boolean tick() {
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
    boolean owesPeer() {
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
        int w = word;
        boolean broken = (w & (RESET | CONTROL_EOF)) != 0;
        // an output that never switched ends with the kernel's FIN when the socket closes: no records
        // (a handshake that ended accelerated counts before finishConnect took it: PATH_UCX comes then)
        boolean outputOnUcx = outputOnUcx(w);
        // records may follow our switched output only once the peer took the switch point
        boolean recordsAllowed = recordsAllowed(w);
        if ((w & FIN_SENT) == 0 && !outputOnUcx) {
            synchronized (this) {
                update(0, FIN_SENT);
            }
        } else if ((w & FIN_SENT) == 0) {
            // FIN counts every message we posted: it goes only once nothing is held back for a
            // credit and every send completed: sent earlier, it would not count bytes still held
            // back, and a slow peer would read a clean end-of-stream short of what our writes took
            // (regression: SlowReaderCloseTest).
            boolean complete;
            try {
                complete = broken || connection.sendsComplete() && recordsAllowed;
            } catch (IOException | RuntimeException e) {
                // a send failed: the peer is gone
                complete = true;
                broken = true;
            }
            if (!complete) {
                if ((w & LADDER) == DRAINING && lingeredOut(now)) {
                    giveUpOnPeer();
                    // still ticking while it takes the peer's messages in flight (awaitPeerEnd)
                    return peerEndDeadline != 0;
                }
                if (!nudged && recordsAllowed && now - drainStarted > NUDGE_AFTER_NANOS) {
                    // (before the peer took our switch point a record would land among its raw bytes)
                    // the peer may not be reading (and so not progressing): ask it to take our messages
                    nudged = true;
                    reactor.send(this, ControlRecord.NUDGE, 0);
                }
                return true;
            }
            if (!broken && recordsAllowed) {
                reactor.send(this, ControlRecord.FIN, connection.messagesSent());
                endAnnounced = true;
            }
            synchronized (this) {
                update(0, FIN_SENT);
            }
        }
        if ((word & LADDER) != DRAINING) {
            return false;
        }
        if ((word & (RESET | CONTROL_EOF)) == 0 && outputOnUcx && recordsAllowed) {
            reactor.send(this, ControlRecord.CLOSE, 0);
            if (awaitPeerAfterOurEnd(now)) {
                return awaitPeerEnd(now);
            }
        } else if (!outputOnUcx && awaitPeerBySession(now)) {
            return awaitPeerEnd(now);
        }
        finish();
        return false;
    }

    /**
     * After our CLOSE or ABORT record: true when the wait for the peer's last messages
     * ({@link #awaitPeerEnd}) begins. Its output is on UCX (its FIN will count them), or may be
     * moving there as we close (its SWITCH not here yet: the session asks).
     */
    private boolean awaitPeerAfterOurEnd(long now) {
        if (inputOnUcx()) {
            peerEndDeadline = now + PEER_END_NANOS;
            return true;
        }
        return awaitPeerBySession(now);
    }

    /**
     * We close while the peer's output is not known to be on UCX: if the UCX half is ready, it may
     * be there with messages in flight, and the upgrade session asks how many to take
     * ({@link Upgrade#closing}). Two cases: our output is raw, so no record can follow it to ask;
     * or our input is still raw, and the peer's SWITCH may be on its way over the session as we
     * close. (In the second, a close that let go of its receives at once would then take and
     * acknowledge the SWITCH, and the peer's messages posted after it would never be taken: its
     * sends and memory kept for ever; regression:
     * AbruptCloseMemoryTest#shouldFreeMemoryWhenClosingAsThePeersSwitchIsOnItsWay.) True when the
     * wait ({@link #awaitPeerEnd}) begins. Control thread.
     */
    private boolean awaitPeerBySession(long now) {
        Upgrade u = upgrade;
        if (u == null || connection == null || (word & (UPGRADE_READY | RESET)) != UPGRADE_READY) {
            return false;
        }
        peerEndBySession = true;
        peerEndDeadline = now + PEER_END_NANOS;
        u.closing();
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
        synchronized (this) {
            if ((word & OUT_UCX) == 0) {
                // (trySwitchOutput checks this under the same monitor: no switch after this)
                update(0, UPGRADE_OFF);
                return -1;
            }
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
        synchronized (this) {
            update(0, FIN_SENT);
        }
        abort();
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

    /** Our bytes go over UCX: we did not start plain, or our output switched (an unswitched one ends with the kernel's FIN). */
    private static boolean outputOnUcx(int w) {
        return (w & PATH_TCP) == 0 || (w & OUT_UCX) != 0;
    }

    /** Records may follow our output on the socket: we did not start plain, or the peer took our switch point. */
    private static boolean recordsAllowed(int w) {
        return (w & PATH_TCP) == 0 || (w & OUT_ACKED) != 0;
    }

    /** The peer's bytes come over UCX: it did not start plain, or its output switched to UCX. */
    private boolean inputOnUcx() {
        int w = word;
        return (w & PATH_TCP) == 0 || (w & IN_LIMIT) != 0;
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
        int w = word;
        if (recordsAllowed(w) && (w & (RESET | CONTROL_EOF)) == 0) {
            // the peer must tell this from our death (which would end the UCX endpoint it shares
            // with its other connections to us): an ABORT record, then an ordinary close so that
            // the record is not discarded by a reset
            reactor.send(this, ControlRecord.ABORT, 0);
            endAnnounced = true;
            try {
                tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, -1);
            } catch (IOException | RuntimeException e) {
                // closed already
            }
            if (awaitPeerAfterOurEnd(System.nanoTime())) {
                // our bytes are dropped, but the peer's in flight are still taken (awaitPeerEnd)
                reactor.watch(this);
                return;
            }
        } else if (!outputOnUcx(w) && awaitPeerBySession(System.nanoTime())) {
            // the reset goes out once the peer's messages in flight are taken
            reactor.watch(this);
            return;
        }
        finish();
    }

    /** DRAINING → CLOSED: the socket leaves the control thread and closes, the UCX half is freed. */
    private void finish() {
        synchronized (this) {
            update(CLOSED, 0);
        }
        reactor.forget(this);
        try {
            if (outputOnUcx(word) && !endAnnounced) {
                // no record told the peer where our stream ends (the connection broke, or our bytes
                // were not taken in time): a reset, since the kernel's FIN would read as that end
                tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
            }
        } catch (IOException | RuntimeException e) {
            // closed already
        }
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
        if (!keepMemory) {
            connection.release();
        }
    }

    /**
     * JVM exit (control thread): close in order what the application left open, as the
     * kernel does for its sockets, but leave the memory: application threads may still be
     * inside a read or write.
     */
    void closeAtExit() {
        synchronized (this) {
            int s = word & LADDER;
            if (s >= DRAINING || connection == null) {
                return;
            }
            update(DRAINING, 0);
        }
        keepMemory = true;
        wake();
        reactor.watch(this);
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
