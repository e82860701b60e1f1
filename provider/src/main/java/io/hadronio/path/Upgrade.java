package io.hadronio.path;

import io.hadronio.observe.Counters;
import io.hadronio.observe.Fallback;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.ConnectionServices;
import io.hadronio.connection.SwitchSession;
import io.hadronio.connection.UcxHalf;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.UpgradeSession;
import io.hadronio.platform.LazyLogger;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;

import static io.hadronio.path.PathSwitch.*;

/**
 * Moves one local TCP connection between two hadroNIO processes to UCX while the
 * application already uses it (docs/architecture.md, "Upgrade mode"). The connection opened as plain
 * TCP, raw, exactly as the JDK opens it; this runs beside it, on the authenticated
 * {@link UpgradeSession}, and never delays it.
 *
 * <pre>
 *  client                                       server
 *  (TCP connected; session opened and authenticated by the rendezvous)
 *  HELLO (id, slices, profile, worker address) ->    UCX half, endpoint to the client
 *                          <- HELLO (or PLAIN: UCX would use tcp only, profiles differ)
 *  endpoint to the server
 *  -- either side, independently, at its next write: --
 *  SWITCH n (raw bytes written so far)          ->    reader stops at n raw bytes
 *                                               <-    ACK n
 *  SWITCHED n on TCP (the first control record), then FIN/CLOSE/NUDGE as on any accelerated connection
 *  NO_SWITCH: the output ended raw (shutdownOutput or close before it switched)
 *  CLOSING: a side closes whose output or input is raw; the peer's output may be on UCX  ->
 *                                <- DONE n (DATA messages it posted over UCX; after its SWITCH, if any)
 *  (session closed once both directions are settled alike and its end is news to no one: kept while one
 *   ended raw and the other moved, or while a side's records follow raw bytes; see PathSwitch)
 * </pre>
 *
 * <p>The session is also how a side learns that its peer closed where no record of the peer
 * can tell it: no control record can follow raw bytes without a switch, and the records that
 * follow a switch come after the peer's raw bytes, which our application may never read. So
 * when the peer's session ends before it switched, after it ended raw, or while our input has
 * not reached the peer's switch point, a side whose own output moved to UCX has no one left to
 * take it. Its writes then fail, as writes to a closed TCP peer do, while its raw input still
 * reads to the kernel's end-of-stream ({@link ConnectionLifecycle#resetOutput}). Without the
 * session, such a writer would hold back its bytes for ever (regressions:
 * UpgradeTest#shouldFailWritesOverUcxOnceAPeerWhoseOutputEndedRawCloses and
 * #shouldFailWritesOverUcxOnceAPeerWhoseOutputMovedAfterRawBytesCloses).
 *
 * Every session event runs on the rendezvous thread; the lifecycle owns the state.
 * Session messages carry nothing the TCP stream depends on until a SWITCH, so a session
 * that fails before one leaves a plain connection that simply stays plain.
 */
public final class Upgrade implements UpgradeSession.Handler, SwitchSession {
    private static final Logger LOG = LazyLogger.of(Upgrade.class);
    static final byte HELLO = 20;
    static final byte PLAIN = 21;
    static final byte SWITCH = 22;
    static final byte ACK = 23;
    static final byte NO_SWITCH = 24;
    static final byte CLOSING = 25;
    static final byte DONE = 26;

    private final ConnectionServices runtime;
    private final ConnectionLifecycle life;
    private final boolean client;
    // rendezvous thread only
    private UpgradeSession session;
    private UcxHalf connection;
    // which session messages went and came (PathSwitch's word; its table decides what follows)
    private int sw;
    // the rendezvous thread started this upgrade (client: its delay passed; server: a session
    // attached). Until then a close or the end of the raw output only leaves a note here, and
    // the thread reads it when it starts: a connection that ends early costs no thread switch.
    private volatile boolean touched;
    // client: where to upgrade, and from when (start(), before the connection is used)
    private InetSocketAddress destination;
    private InetSocketAddress bound;
    private long dueAt;
    // client: when a try to open the session first found the server's rendezvous busy, and the
    // pause before the next try (onListenerBusy; rendezvous thread)
    private boolean busy;
    private long busySince;
    private long retryPauseNanos;
    // client: the upgrade waits for its first read or write after dueAt
    private volatile boolean armed;
    // client: the runtime's start had finished when due() last asked (set once; a plain field:
    // a thread that has not seen it yet asks the runtime again)
    private boolean runtimeStarted;
    private static final java.lang.invoke.VarHandle ARMED;

    static {
        try {
            ARMED = java.lang.invoke.MethodHandles.lookup().findVarHandle(Upgrade.class, "armed", boolean.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }
    private volatile boolean closeRequested;
    // client: the session as soon as its socket exists (onStart), for end() from any thread
    private volatile UpgradeSession started;
    private volatile boolean outputEndedEarly;
    // client: why the listener declined the session (onDeclined), or null; rendezvous thread only
    private Fallback declined;

    private Upgrade(ConnectionServices runtime, ConnectionLifecycle life, boolean client) {
        this.runtime = runtime;
        this.life = life;
        this.client = client;
    }

    /** Asks PathSwitch what {@code event} does now (rendezvous thread); stores nothing. */
    private long ask(PathSwitch.Event event, int in) {
        return PathSwitch.decide(sw, event, in | (session != null ? SESSION : 0));
    }

    /** Stores PathSwitch's answer (unless it says not to); returns its actions. */
    private int store(long result) {
        int a = PathSwitch.actions(result);
        if ((a & (UNCHANGED | PROTOCOL_ERROR)) == 0) {
            sw = PathSwitch.next(result);
        }
        return a;
    }

    /** Asks and stores; returns the actions. */
    private int step(PathSwitch.Event event, int in) {
        return store(ask(event, in));
    }

    /** A session message out of order: thrown, so that the upgrade breaks as a broken session does. */
    private static void inOrder(int actions, String message) throws ProtocolException {
        if ((actions & PROTOCOL_ERROR) != 0) {
            throw new ProtocolException(message);
        }
    }

    /** The client's side, for a channel about to connect to a local address (before it opens). */
    static Upgrade client(ConnectionServices runtime, ConnectionLifecycle life) {
        return new Upgrade(runtime, life, true);
    }

    /** The server's side of an accepted local connection. */
    static Upgrade server(ConnectionServices runtime, ConnectionLifecycle life) {
        return new Upgrade(runtime, life, false);
    }

    /**
     * Client: the TCP connect completed. The upgrade begins at a write that is not the
     * connection's first once {@code hadronio.upgrade.delay} has passed, or once it has read
     * 64 KiB by then ({@link #poke}), not by a timer: a connection closed sooner, or one that
     * sends one request and waits for its only answer (however long a loaded machine or a
     * crowd of concurrent connects keeps it open), never costs either side anything for an
     * upgrade, and one that carries traffic moves at its next operation.
     */
    void start(InetSocketAddress destination, InetSocketAddress bound) {
        this.destination = destination;
        this.bound = bound;
        dueAt = System.nanoTime() + runtime.config().upgradeDelayNanos();
        armed = true;
    }

    /**
     * Client: {@code hadronio.upgrade.delay} has passed since the connect, the runtime has
     * started, and the upgrade has not begun. A connection made while the runtime still starts
     * (a JVM's first ones) carries its bytes on the kernel meanwhile and moves at its first
     * operation after the start; if the start failed it never moves (disarmed here, so that its
     * later operations ask nothing).
     */
    @Override
    public int writesBeforeMove() {
        return runtime.config().upgradeWrites();
    }

    @Override
    public boolean due() {
        return armed && System.nanoTime() - dueAt >= 0 && runtimeStarted();
    }

    /** Whether the runtime's start finished; disarms the upgrade when it failed. */
    private boolean runtimeStarted() {
        if (runtimeStarted) {
            return true;
        }
        if (runtime.started()) {
            runtimeStarted = true;
            return true;
        }
        if (runtime.startFailed()) {
            armed = false;
        } else {
            // this connection wants UCX: the start need not wait for a pause in connects
            runtime.requestStart();
        }
        return false;
    }

    /**
     * Client: begins the upgrade once it is due (any thread; once). Called once the channel's
     * socket is non-blocking ({@link ConnectionLifecycle#isUpgradable}).
     */
    @Override
    public void poke() {
        if (due() && ARMED.compareAndSet(this, true, false)) {
            begin();
        }
    }

    private void begin() {
        runtime.peers().rendezvous().execute(() -> {
            touched = true;
            if (!closeRequested && life.state() == ConnectionLifecycle.OPEN) {
                runtime.peers().rendezvous().upgrade(destination, bound, this);
            } else {
                onEnd("closed before its upgrade began");
            }
        });
    }

    // ---- session events (rendezvous thread) ------------------------------------------------------

    /**
     * Client: the server's rendezvous had no room for our session (a wave of upgrades filled its
     * backlog). Not a refusal: the upgrade is due again after a pause that doubles from 1 ms up
     * to 64 ms, and begins at the connection's next operation then, as it did at first. A
     * rendezvous busy for a whole handshake timeout is given up on, and the connection stays
     * plain, as the server's side does by then (it waits that long for the session). Regression:
     * UpgradeWaveTest (most of 1,000 connections that started their upgrades at once stayed plain).
     */
    @Override
    public void onListenerBusy() {
        long now = System.nanoTime();
        if (!busy) {
            busy = true;
            busySince = now;
        }
        if (closeRequested || life.state() != ConnectionLifecycle.OPEN
                || now - busySince > runtime.config().handshakeMillis() * 1_000_000L) {
            onEnd("the server's rendezvous stayed busy");
            return;
        }
        retryPauseNanos = Math.min(Math.max(2 * retryPauseNanos, 1_000_000L), 64_000_000L);
        dueAt = now + retryPauseNanos;
        // (the volatile write publishes dueAt to the thread that pokes)
        armed = true;
    }

    @Override
    public void onStart(UpgradeSession s) {
        started = s;
        if (closeRequested) {
            // the channel closed while the session was being made (pairs with end(): one of the two
            // sees the other); nothing was sent on it yet
            s.shutdownNow();
        }
    }

    /** Client: why the listener declined the session, for the fallback that {@code onEnd} records. */
    @Override
    public void onDeclined(Fallback reason) {
        declined = reason;
    }

    @Override
    public void onOpen(UpgradeSession s) {
        touched = true;
        session = s;
        Counters.jvm().upgradeStarted();
        if (closeRequested || life.state() != ConnectionLifecycle.OPEN) {
            s.close();
            return;
        }
        if (client) {
            try {
                connection = runtime.newHalf(life);
                s.send(HELLO, hello(connection));
            } catch (Exception e) {
                abandon(Fallback.UPGRADE_FAILED, "cannot make the UCX half: " + e);
            }
        }
        if (outputEndedEarly) {
            sendNoSwitch();
        }
    }

    private byte[] hello(UcxHalf c) {
        return HandshakeMessages.clientHello(c.localId(), c.rxSliceSize(), c.rxSliceCount(), c.group().address(),
                runtime.endpointProfile());
    }

    @Override
    public void onMessage(UpgradeSession s, byte kind, ByteBuffer body) {
        try {
            switch (kind) {
                case HELLO -> onHello(body);
                case PLAIN -> abandon(Fallback.PEER_DECLINED, "the peer keeps the connection plain");
                case SWITCH -> {
                    inOrder(PathSwitch.actions(ask(PathSwitch.Event.SWITCH, 0)), "SWITCH out of order");
                    long n = body.getLong();
                    long r = ask(PathSwitch.Event.SWITCH, n > 0 ? RAW_BEFORE : 0);
                    // (the peer's direction is settled only once the lifecycle took the switch point)
                    life.upgrade().peerSwitched(n);
                    int a = store(r);
                    s.send(ACK, longBytes(n));
                    closeIf(a);
                }
                case ACK -> {
                    // (the body is read only when an ACK is due at all, as before)
                    int in = PathSwitch.ackInOrder(sw) && body.getLong() == life.upgrade().switchedAt() ? MATCH : 0;
                    int a = step(PathSwitch.Event.ACK, in);
                    inOrder(a, "ACK out of order");
                    life.upgrade().outputAcked();
                    closeIf(a);
                }
                case NO_SWITCH -> {
                    int a = step(PathSwitch.Event.NO_SWITCH, 0);
                    inOrder(a, "NO_SWITCH out of order");
                    closeIf(a);
                }
                case CLOSING -> {
                    inOrder(step(PathSwitch.Event.CLOSING, body.hasRemaining() ? BODY : 0), "CLOSING out of order");
                    long n = life.ending().peerClosing();
                    int a = step(PathSwitch.Event.CLOSING_ANSWERED,
                            (n >= 0 ? COUNTED : 0) | (life.upgrade().switchedAt() > 0 ? RAW_BEFORE : 0));
                    if ((a & SEND_SWITCH) != 0) {
                        s.send(SWITCH, longBytes(life.upgrade().switchedAt()));
                    }
                    if ((a & SEND_DONE) != 0) {
                        s.send(DONE, longBytes(Math.max(n, 0)));
                    }
                }
                case DONE -> {
                    long r = ask(PathSwitch.Event.DONE, 0);
                    inOrder(PathSwitch.actions(r), "DONE out of order");
                    // (the answer counts as seen only once the lifecycle took it)
                    life.onFin(body.getLong());
                    store(r);
                }
                default -> throw new ProtocolException("unknown upgrade message " + kind);
            }
        } catch (ProtocolException | java.nio.BufferUnderflowException e) {
            // the peer proved the key: a broken upgrade is a broken connection once anything switched
            if (life.upgradeOff()) {
                life.reset("upgrade: " + e.getMessage());
            }
            abandon(Fallback.UPGRADE_FAILED, e.getMessage());
        }
    }

    private void onHello(ByteBuffer body) throws ProtocolException {
        inOrder(step(PathSwitch.Event.HELLO, client && connection == null ? NO_HALF : 0), "HELLO out of order");
        byte[] frame = new byte[body.remaining()];
        body.get(frame);
        HandshakeMessages.Hello hello = HandshakeMessages.decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
        if (!hello.profile().equals(runtime.endpointProfile())) {
            session.send(PLAIN, new byte[0]);
            abandon(Fallback.PROFILE_DIFFERS, "the peer's UCX endpoint settings differ (" + hello.profile() + ")");
            return;
        }
        try {
            if (!client) {
                connection = runtime.newHalf(life);
            }
            // only now, with the key proven by the session, does the peer's address reach UCX
            connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
        } catch (Exception e) {
            session.send(PLAIN, new byte[0]);
            abandon(Fallback.UPGRADE_FAILED, "cannot connect to the peer's worker: " + e);
            return;
        }
        if (runtime.config().kernelTcp() && connection.onlyTcp()) {
            session.send(PLAIN, new byte[0]);
            abandon(Fallback.UCX_TCP_ONLY, "UCX would carry it over tcp only: the kernel's TCP connection carries the bytes");
            return;
        }
        if (!life.upgradeReady(connection)) {
            abandon(Fallback.UPGRADE_FAILED, "the channel closed during the upgrade");
            return;
        }
        // the lifecycle owns the UCX half now (it frees it when the channel closes). Before the
        // send below: a send that fails ends the session at once, and onEnd frees the UCX half of
        // an upgrade that is not ready, which the lifecycle would free again at its close (a
        // client that closes as our HELLO goes out; regression: CloseAfterAnswerAcrossJvmsTest)
        step(PathSwitch.Event.READIED, 0);
        if (!client) {
            // only now: a client that has our HELLO may send over UCX at once, and a channel that
            // closed before it was ready would have let go of the receives for those messages
            // (one that closes from here on takes them first, see closing)
            session.send(HELLO, hello(connection));
            if ((sw & ENDED) != 0) {
                return; // the upgrade is off (onEnd)
            }
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection " + session + " ready to move to UCX " + connection.transports());
        }
        life.upgrade().switchIdleOutput();
    }

    /**
     * Gives up on the upgrade: the connection stays plain for {@code reason} (or, if a direction
     * switched, goes on as it is).
     */
    private void abandon(Fallback reason, String why) {
        int a = step(PathSwitch.Event.ABANDON, connection != null ? HALF : 0);
        if ((a & UNCHANGED) != 0) {
            return;
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection stays on TCP (" + why + ")");
        }
        if (session != null) {
            // (one whose session never opened did not start: its reason says why)
            Counters.jvm().upgradeAbandoned();
        }
        if ((a & UPGRADE_OFF) != 0 && !life.upgradeOff()) {
            life.fellBack(reason, why);
        }
        if ((a & RELEASE) != 0) {
            connection.release();
        }
        connection = null;
        if ((a & CLOSE_SESSION) != 0) {
            session.close();
        }
    }

    /**
     * Closes the session where PathSwitch says both directions are settled alike and its end is
     * news to no one. One that ended raw while the other moved, or a switch after raw bytes,
     * keeps it until a channel closes: its end is then the only news of that close for a side
     * whose output is on UCX and which has not read the peer's raw bytes.
     */
    private void closeIf(int actions) {
        if ((actions & CLOSE_SESSION) != 0) {
            session.close();
        }
    }

    @Override
    public void onEnd(String why) {
        // (a reader that reaches the peer's switch point meanwhile would have read its records:
        // a reset then answers a close that they would have told, as TCP's reset does)
        int a = step(PathSwitch.Event.SESSION_END,
                (closeRequested ? CLOSE_REQUESTED : 0) | (life.inputRaw() ? INPUT_RAW : 0));
        if ((a & STOP_AWAITING) != 0) {
            life.ending().stopAwaitingPeer();
        }
        if ((a & GIVE_UP) != 0) {
            abandon(declined != null ? declined : Fallback.UPGRADE_FAILED, why);
        }
        if ((a & RESET_UNTAKEN) != 0) {
            // we switched and the peer never took it: its channel closed (or it died, or broke the
            // protocol). Our output is gone; its output tells its own end: raw, by the kernel's FIN,
            // moved, by its FIN and CLOSE records, and if it died, by the end of its control
            // connection without them (a reset then)
            life.resetOutput("upgrade session ended before the peer took our switch (" + why + ")");
        }
        if ((a & RESET_PEER_CLOSED) != 0) {
            // our output is on UCX, and the peer's session ended: its channel closed (or its process
            // died), and no record can say so: its output is raw, or its records wait behind raw
            // bytes of it that our application has not read
            life.resetOutput("Connection reset by peer (it closed where no record of it could reach us: " + why + ")");
        }
        if ((a & UPGRADE_OFF) != 0) {
            Counters.jvm().upgradeAbandoned();
            if (!life.upgradeOff()) {
                life.fellBack(Fallback.UPGRADE_FAILED, "the upgrade session ended before a switch: " + why);
            }
        }
    }

    // ---- from the connection's owner (any thread) --------------------------------------------------

    /** Our output switched after {@code n} raw bytes (a writer, under the channel's write lock). */
    @Override
    public void sendSwitch(long n) {
        runtime.peers().rendezvous().execute(() -> {
            int a = step(PathSwitch.Event.OUTPUT_SWITCHED, n > 0 ? RAW_BEFORE : 0);
            if ((a & SEND_SWITCH) != 0) {
                session.send(SWITCH, longBytes(n));
            } else if ((a & RESET_OUTPUT) != 0) {
                life.resetOutput("upgrade session gone before our switch");
            }
        });
    }

    /** Our output ended raw (shutdownOutput or close before it switched). */
    @Override
    public void outputEndedRaw() {
        outputEndedEarly = true;
        if (!touched) {
            return; // no session yet: onOpen sends NO_SWITCH (pairs with touched = true there)
        }
        runtime.peers().rendezvous().execute(this::sendNoSwitch);
    }

    /** Tells the peer that our output ended raw, once (rendezvous thread). */
    private void sendNoSwitch() {
        int a = step(PathSwitch.Event.OUTPUT_ENDED_RAW, 0);
        if ((a & SEND_NO_SWITCH) != 0) {
            session.send(NO_SWITCH, new byte[0]);
            closeIf(a);
        }
    }

    /**
     * We close while the UCX half is ready and the peer's output is not known to be on UCX
     * (control thread): it may be there, or its SWITCH on its way, with messages in flight that we
     * must take before our receives go (a rendezvous send completes only when its receiver takes
     * it), and no record can ask for its count (our output is raw, or the peer's records would
     * follow raw bytes we have not read). So the session asks; {@link ConnectionLifecycle#onFin}
     * gets the answer, {@link ConnectionEnding#stopAwaitingPeer} the news that none will come.
     * A peer whose output is still raw answers 0 and keeps it raw for good.
     */
    @Override
    public void closing() {
        runtime.peers().rendezvous().execute(() -> {
            int a = step(PathSwitch.Event.CLOSE_ASKS, 0);
            if ((a & STOP_AWAITING) != 0) {
                life.ending().stopAwaitingPeer();
            }
            if ((a & SEND_CLOSING) != 0) {
                session.send(CLOSING, new byte[0]);
            }
        });
    }

    /**
     * The connection is closed: the session ends (any thread). Called before the TCP socket
     * closes: a client's session is shut down here and now, so that its end is in the server's
     * socket before the client's port can carry a new connection to it: a server that met this
     * session with the port's next connection would send the answers over UCX to nobody
     * (regression: CloseAfterAnswerAcrossJvmsTest, client-reusing-ports).
     */
    @Override
    public void end() {
        closeRequested = true;
        UpgradeSession s = started;
        if (s != null) {
            s.shutdownNow();
        }
        if (!touched) {
            return; // the thread reads closeRequested when it starts (pairs with touched = true there)
        }
        runtime.peers().rendezvous().execute(() -> {
            closeRequested = true;
            if (session != null) {
                session.close();
            }
        });
    }

    private static byte[] longBytes(long n) {
        return ByteBuffer.allocate(8).putLong(n).array();
    }
}
