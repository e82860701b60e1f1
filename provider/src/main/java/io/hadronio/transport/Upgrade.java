package io.hadronio.transport;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.UpgradeSession;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.InetSocketAddress;
import java.net.ProtocolException;
import java.nio.ByteBuffer;

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
 *  (session closed once both directions are settled alike; kept while one ended raw and the other moved)
 * </pre>
 *
 * <p>The session is also how a side learns that its peer closed while the peer's output is
 * still raw: no control record can follow raw bytes without a switch, so when the peer's
 * session ends before it switched, or after it ended raw, a side whose own output moved to
 * UCX has no one left to take it. Its writes then fail, as writes to a closed TCP peer do,
 * while its raw input still reads to the kernel's end-of-stream ({@link ConnectionLifecycle#resetOutput}).
 * Without the session, such a writer would hold back its bytes for ever (regression:
 * UpgradeTest#shouldFailWritesOverUcxOnceAPeerWhoseOutputEndedRawCloses).
 *
 * Every session event runs on the rendezvous thread; the lifecycle owns the state.
 * Session messages carry nothing the TCP stream depends on until a SWITCH, so a session
 * that fails before one leaves a plain connection that simply stays plain.
 */
public final class Upgrade implements UpgradeSession.Handler {
    private static final Logger LOG = System.getLogger(Upgrade.class.getName());
    static final byte HELLO = 20;
    static final byte PLAIN = 21;
    static final byte SWITCH = 22;
    static final byte ACK = 23;
    static final byte NO_SWITCH = 24;
    static final byte CLOSING = 25;
    static final byte DONE = 26;

    private final UcxRuntime runtime;
    private final ConnectionLifecycle life;
    private final boolean client;
    // rendezvous thread only
    private UpgradeSession session;
    private Connection connection;
    private boolean ready;
    private boolean ended;
    private boolean mineDone;
    private boolean peerDone;
    private boolean switchSent;
    // our output / the peer's output ended raw (NO_SWITCH sent / received)
    private boolean mineRaw;
    private boolean peerRaw;
    // we closed with our output raw and asked the peer how many messages to take (CLOSING sent),
    // and its answer came; the peer did so (CLOSING received)
    private boolean closingSent;
    private boolean doneSeen;
    private boolean closingSeen;
    // the rendezvous thread started this upgrade (client: its delay passed; server: a session
    // attached). Until then a close or the end of the raw output only leaves a note here, and
    // the thread reads it when it starts: a connection that ends early costs no thread switch.
    private volatile boolean touched;
    // client: where to upgrade, and from when (start(), before the connection is used)
    private InetSocketAddress destination;
    private InetSocketAddress bound;
    private long dueAt;
    // client: the upgrade waits for its first read or write after dueAt
    private volatile boolean armed;
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
    private boolean abandoned;

    private Upgrade(UcxRuntime runtime, ConnectionLifecycle life, boolean client) {
        this.runtime = runtime;
        this.life = life;
        this.client = client;
    }

    /** The client's side, for a channel about to connect to a local address (before it opens). */
    static Upgrade client(UcxRuntime runtime, ConnectionLifecycle life) {
        return new Upgrade(runtime, life, true);
    }

    /** The server's side of an accepted local connection. */
    static Upgrade server(UcxRuntime runtime, ConnectionLifecycle life) {
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

    /** Client: {@code hadronio.upgrade.delay} has passed since the connect and the upgrade has not begun. */
    boolean due() {
        return armed && System.nanoTime() - dueAt >= 0;
    }

    /**
     * Client: begins the upgrade once it is due (any thread; once). Called once the channel's
     * socket is non-blocking ({@link ConnectionLifecycle#isUpgradable}).
     */
    void poke() {
        if (armed && System.nanoTime() - dueAt >= 0 && ARMED.compareAndSet(this, true, false)) {
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

    @Override
    public void onStart(UpgradeSession s) {
        started = s;
        if (closeRequested) {
            // the channel closed while the session was being made (pairs with end(): one of the two
            // sees the other); nothing was sent on it yet
            s.shutdownNow();
        }
    }

    @Override
    public void onOpen(UpgradeSession s) {
        touched = true;
        session = s;
        if (closeRequested || life.state() != ConnectionLifecycle.OPEN) {
            s.close();
            return;
        }
        if (client) {
            try {
                connection = runtime.newConnection(life);
                s.send(HELLO, hello(connection));
            } catch (Exception e) {
                abandon("cannot make the UCX half: " + e);
            }
        }
        if (outputEndedEarly) {
            sendNoSwitch();
        }
    }

    private byte[] hello(Connection c) {
        return HandshakeMessages.clientHello(c.localId, c.rxSliceSize, c.rxSliceCount, c.group().address(),
                runtime.endpointProfile());
    }

    @Override
    public void onMessage(UpgradeSession s, byte kind, ByteBuffer body) {
        try {
            switch (kind) {
                case HELLO -> onHello(body);
                case PLAIN -> abandon("the peer keeps the connection plain");
                case SWITCH -> {
                    if (!ready || peerDone) {
                        throw new ProtocolException("SWITCH out of order");
                    }
                    long n = body.getLong();
                    life.peerSwitched(n);
                    peerDone = true;
                    s.send(ACK, longBytes(n));
                    maybeClose();
                }
                case ACK -> {
                    if (!switchSent || mineDone || body.getLong() != life.switchedAt()) {
                        throw new ProtocolException("ACK out of order");
                    }
                    mineDone = true;
                    life.outputAcked();
                    maybeClose();
                }
                case NO_SWITCH -> {
                    if (peerDone) {
                        throw new ProtocolException("NO_SWITCH out of order");
                    }
                    peerDone = true;
                    peerRaw = true;
                    maybeClose();
                }
                case CLOSING -> {
                    if (!ready || closingSeen || body.hasRemaining()) {
                        throw new ProtocolException("CLOSING out of order");
                    }
                    closingSeen = true;
                    long n = life.peerClosing();
                    if (n >= 0 && !switchSent) {
                        // our output moved but its SWITCH is still queued: the count needs it first
                        switchSent = true;
                        s.send(SWITCH, longBytes(life.switchedAt()));
                    }
                    s.send(DONE, longBytes(Math.max(n, 0)));
                }
                case DONE -> {
                    if (!closingSent || doneSeen) {
                        throw new ProtocolException("DONE out of order");
                    }
                    life.onFin(body.getLong());
                    doneSeen = true;
                }
                default -> throw new ProtocolException("unknown upgrade message " + kind);
            }
        } catch (ProtocolException | java.nio.BufferUnderflowException e) {
            // the peer proved the key: a broken upgrade is a broken connection once anything switched
            if (life.upgradeOff()) {
                life.reset("upgrade: " + e.getMessage());
            }
            abandon(e.getMessage());
        }
    }

    private void onHello(ByteBuffer body) throws ProtocolException {
        if (ready || client && connection == null) {
            throw new ProtocolException("HELLO out of order");
        }
        byte[] frame = new byte[body.remaining()];
        body.get(frame);
        HandshakeMessages.Hello hello = HandshakeMessages.decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
        if (!hello.profile().equals(runtime.endpointProfile())) {
            session.send(PLAIN, new byte[0]);
            abandon("the peer's UCX endpoint settings differ (" + hello.profile() + ")");
            return;
        }
        try {
            if (!client) {
                connection = runtime.newConnection(life);
            }
            // only now, with the key proven by the session, does the peer's address reach UCX
            connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
        } catch (Exception e) {
            session.send(PLAIN, new byte[0]);
            abandon("cannot connect to the peer's worker: " + e);
            return;
        }
        if (runtime.config().kernelTcp() && connection.onlyTcp()) {
            session.send(PLAIN, new byte[0]);
            abandon("UCX would carry it over tcp only: the kernel's TCP connection carries the bytes");
            return;
        }
        if (!life.upgradeReady(connection)) {
            abandon("the channel closed during the upgrade");
            return;
        }
        // the lifecycle owns the UCX half now (it frees it when the channel closes). Before the
        // send below: a send that fails ends the session at once, and onEnd frees the UCX half of
        // an upgrade that is not ready, which the lifecycle would free again at its close (a
        // client that closes as our HELLO goes out; regression: CloseAfterAnswerAcrossJvmsTest)
        ready = true;
        if (!client) {
            // only now: a client that has our HELLO may send over UCX at once, and a channel that
            // closed before it was ready would have let go of the receives for those messages
            // (one that closes from here on takes them first, see closing)
            session.send(HELLO, hello(connection));
            if (ended) {
                return; // the upgrade is off (onEnd)
            }
        }
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection " + session + " ready to move to UCX " + connection.transports());
        }
        life.switchIdleOutput();
    }

    /** Gives up on the upgrade: the connection stays plain (or, if a direction switched, goes on as it is). */
    private void abandon(String why) {
        if (abandoned) {
            return;
        }
        abandoned = true;
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection stays on TCP (" + why + ")");
        }
        life.upgradeOff();
        if (!ready && connection != null) {
            connection.release();
        }
        connection = null;
        if (session != null) {
            session.close();
        }
    }

    /**
     * Closes the session once both directions are settled alike. One that ended raw while the
     * other moved keeps it until a channel closes: its end is then the only news of that close
     * for the side whose output is on UCX.
     */
    private void maybeClose() {
        if (mineDone && peerDone && mineRaw == peerRaw && session != null) {
            session.close();
        }
    }

    @Override
    public void onEnd(String why) {
        if (ended) {
            return;
        }
        ended = true;
        if (closingSent && !doneSeen) {
            // we closed and waited for the peer's count: it will not come
            life.stopAwaitingPeer();
        }
        if (!ready) {
            abandon(why);
            return;
        }
        // the peer's output is raw (not moved, or ended raw): its bytes stay on the TCP connection,
        // which tells their end itself, so a reset here is one of our output only
        boolean peerOutputRaw = !peerDone || peerRaw;
        if (switchSent && !mineDone) {
            // we switched and the peer never took it: its channel closed (or it died, or broke the
            // protocol). Our output is gone; its output tells its own end: raw, by the kernel's FIN,
            // moved, by its FIN and CLOSE records, and if it died, by the end of its control
            // connection without them (a reset then)
            life.resetOutput("upgrade session ended before the peer took our switch (" + why + ")");
        } else if (switchSent && peerOutputRaw && !closeRequested) {
            // our output is on UCX, the peer's raw, and its session ended: its channel closed (or its
            // process died), and no record can say so behind its raw bytes
            life.resetOutput("Connection reset by peer (it closed before its output moved to UCX: " + why + ")");
        } else if (!switchSent) {
            life.upgradeOff();
        }
    }

    // ---- from the connection's owner (any thread) --------------------------------------------------

    /** Our output switched after {@code n} raw bytes (a writer, under the channel's write lock). */
    void sendSwitch(long n) {
        runtime.peers().rendezvous().execute(() -> {
            if (switchSent) {
                return; // sent already, before our DONE (a CLOSING came first)
            }
            switchSent = true;
            if (session != null && !ended) {
                session.send(SWITCH, longBytes(n));
            } else {
                life.resetOutput("upgrade session gone before our switch");
            }
        });
    }

    /** Our output ended raw (shutdownOutput or close before it switched). */
    public void outputEndedRaw() {
        outputEndedEarly = true;
        if (!touched) {
            return; // no session yet: onOpen sends NO_SWITCH (pairs with touched = true there)
        }
        runtime.peers().rendezvous().execute(this::sendNoSwitch);
    }

    /** Tells the peer that our output ended raw, once (rendezvous thread). */
    private void sendNoSwitch() {
        if (session != null && !ended && !switchSent && !mineDone) {
            mineDone = true;
            mineRaw = true;
            session.send(NO_SWITCH, new byte[0]);
            maybeClose();
        }
    }

    /**
     * We close while the UCX half is ready and the peer's output is not known to be on UCX
     * (control thread): it may be there, or its SWITCH on its way, with messages in flight that we
     * must take before our receives go (a rendezvous send completes only when its receiver takes
     * it), and no record can ask for its count (our output is raw, or the peer's records would
     * follow raw bytes we have not read). So the session asks; {@link ConnectionLifecycle#onFin}
     * gets the answer, {@link ConnectionLifecycle#stopAwaitingPeer} the news that none will come.
     * A peer whose output is still raw answers 0 and keeps it raw for good.
     */
    void closing() {
        runtime.peers().rendezvous().execute(() -> {
            if (closingSent) {
                return;
            }
            if (session == null || ended || !ready || peerRaw) {
                // no session to ask, or the peer's output ended raw: nothing of it is on UCX
                life.stopAwaitingPeer();
                return;
            }
            closingSent = true;
            session.send(CLOSING, new byte[0]);
        });
    }

    /**
     * The connection is closed: the session ends (any thread). Called before the TCP socket
     * closes: a client's session is shut down here and now, so that its end is in the server's
     * socket before the client's port can carry a new connection to it: a server that met this
     * session with the port's next connection would send the answers over UCX to nobody
     * (regression: CloseAfterAnswerAcrossJvmsTest, client-reusing-ports).
     */
    void end() {
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
