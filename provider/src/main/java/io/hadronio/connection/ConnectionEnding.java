package io.hadronio.connection;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import io.hadronio.connection.LifecycleTable.Event;
import io.hadronio.platform.LazyLogger;

import static io.hadronio.connection.LifecycleTable.*;

/**
 * A connection's ending as the control thread drives it: FIN once our sends completed, the
 * linger for a peer that takes nothing, the nudge, CLOSE or ABORT, the wait for the peer's last
 * messages, and the end (socket closed, UCX half freed). {@link ConnectionLifecycle} owns the
 * word and tells this when a close begins; {@link LifecycleTable} decides what each step does
 * to the word, {@link EndingVerdicts} what the clocks and counts say; this gathers their
 * inputs and performs their actions.
 *
 * <h2>Threads</h2>
 * The control thread alone runs {@link #tick}, {@link #abort}, {@link #closeAtExit},
 * {@link #endOutputForPeer} and touches {@code drainStarted}, {@code lingerFrom},
 * {@code lingerProgress}, {@code endAnnounced}, {@code peerEndDeadline}, {@code nudged},
 * {@code progressForPeer}, {@code ticking} and {@code keepMemory} (plain fields;
 * {@code toString} reads the deadline for diagnostics only). The rendezvous thread calls
 * {@link #peerClosing} (no field) and {@link #stopAwaitingPeer}, which sets the volatile
 * {@code peerEndLost}; the control thread sets the volatile {@code peerEndBySession} before
 * the session can answer. This class adds no lock: it takes the owner's monitor (a leaf) for
 * a moment to store a decision, and {@link ConnectionUpgrade}' raw-input lock to drop the peer's raw
 * bytes ({@link #discardRaw}), never one under the other.
 */
public final class ConnectionEnding {
    private static final System.Logger LOG = LazyLogger.of(ConnectionEnding.class);

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

    private final ConnectionLifecycle life;
    private final ConnectionControl reactor;

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

    ConnectionEnding(ConnectionLifecycle life, ConnectionControl reactor) {
        this.life = life;
        this.reactor = reactor;
    }

    /**
     * A timer tick on the control thread while this connection has something to finish:
     * progress for a peer that nudged us, FIN once the sends completed, CLOSE and freeing
     * when draining. True while there is more to do.
     */
    boolean tick() {
        boolean more = false;
        if (progressForPeer) {
            progressForPeer = life.connection().progressForPeer();
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
        int w = life.word();
        int s = w & LADDER;
        return s != CLOSED && ((w & (OUTPUT_SHUT | FIN_SENT)) == OUTPUT_SHUT && (w & (PATH_UCX | OUT_UCX)) != 0
                || s == DRAINING);
    }

    /** The peer nudged us (its NUDGE record): true when we already progress for it. Control thread. */
    boolean progressingForPeer() {
        return progressForPeer;
    }

    /** Progress for the peer on every tick until its FIN (the table said so after its NUDGE). Control thread. */
    void progressForPeer() {
        progressForPeer = true;
        reactor.watch(life);
    }

    /** We wait for the peer's last messages after our CLOSE or ABORT (control thread). */
    boolean awaitingPeer() {
        return peerEndDeadline != 0;
    }

    private boolean drainStep() {
        long now = System.nanoTime();
        if (peerEndDeadline != 0) {
            return awaitPeerEnd(now);
        }
        if (drainStarted == 0) {
            drainStarted = now;
        }
        UcxHalf half = life.connection();
        // our output's end: the sends' state is asked (a call into the worker) only where the table reads it
        int w = life.word();
        int in = 0;
        if (LifecycleTable.finWaitsForSends(w)) {
            try {
                in = half.sendsComplete() ? SENDS_COMPLETE : 0;
            } catch (IOException | RuntimeException e) {
                // a send failed: the peer is gone
                in = SEND_FAILED;
            }
        }
        // (on the snapshot its inputs were gathered for; this thread alone adds FIN_SENT)
        long r = LifecycleTable.decide(w, Event.TICK_FIN, in, 0, 0, 0);
        long a = LifecycleTable.actions(r);
        if ((a & FIN_WAITS) != 0) {
            if ((a & CHECK_LINGER) != 0 && lingeredOut(half, now)) {
                giveUpOnPeer();
                // still ticking while it takes the peer's messages in flight (awaitPeerEnd)
                return peerEndDeadline != 0;
            }
            if (EndingVerdicts.nudgeDue(a, nudged, drainStarted, now, NUDGE_AFTER_NANOS)) {
                // the peer may not be reading (and so not progressing): ask it to take our messages
                nudged = true;
                reactor.send(life, ControlRecord.NUDGE, 0);
            }
            return true;
        }
        if ((a & SEND_FIN) != 0) {
            reactor.send(life, ControlRecord.FIN, half.messagesSent());
            endAnnounced = true;
        }
        synchronized (life) {
            life.store(r);
        }
        // then its close
        a = LifecycleTable.actions(life.ask(Event.TICK_CLOSE, 0));
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
        int in = (life.upgrade().session() != null ? UPGRADE : 0) | (life.connection() != null ? HALF : 0);
        if ((a & SEND_CLOSE) != 0) {
            reactor.send(life, ControlRecord.CLOSE, 0);
            in |= AFTER_OUR_END;
        } else if ((a & SEND_ABORT) != 0) {
            reactor.send(life, ControlRecord.ABORT, 0);
            endAnnounced = true;
            try {
                // an ordinary close after it, so that the record is not discarded by a reset
                life.tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, -1);
            } catch (IOException | RuntimeException e) {
                // closed already
            }
            in |= AFTER_OUR_END;
        }
        if ((a & (SEND_CLOSE | SEND_ABORT | ASK_PEER_END)) != 0
                && awaitPeer(LifecycleTable.actions(life.ask(Event.PEER_END_WAIT, in)), now)) {
            return true;
        }
        finish();
        return false;
    }

    /**
     * Begins the wait for the peer's last messages ({@link #awaitPeerEnd}) where PEER_END_WAIT
     * said so: true then. Its output is on UCX (its FIN will count them), or may be moving there
     * as we close, and the upgrade session asks how many to take ({@link SwitchSession#closing}). Two
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
            life.upgrade().session().closing();
        } else {
            peerEndDeadline = now + PEER_END_NANOS;
        }
        return true;
    }

    /**
     * The peer closes and asks how many DATA messages we posted (its CLOSING over the upgrade
     * session; rendezvous thread). Our output, if it moved to UCX, ends as against a closed TCP
     * peer: writes fail from now on (our raw input still reads to the kernel's end-of-stream),
     * and the count goes back, so that the peer takes them all before its receives go. An output
     * still raw stays raw for good (the kernel's socket tells its end). Returns the count, or -1
     * for a raw output.
     */
    public long peerClosing() {
        if ((life.step(Event.PEER_CLOSING, 0) & DO_RESET_OUTPUT) == 0) {
            return -1;
        }
        life.resetOutput("Connection reset by peer (it closed)");
        // writers see the reset under the connection's lock: nothing is posted after this count
        return life.connection().endOutput();
    }

    /** The wait for the peer's last messages over the session ends: none will come, or its count never will. */
    public void stopAwaitingPeer() {
        peerEndLost = true;
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
    void endOutputForPeer() {
        UcxHalf half = life.connection();
        // decided before the record goes, stored after it (a FIN_SENT seen early would skip it)
        long r = life.ask(Event.OUTPUT_ENDS_FOR_PEER, half != null ? HALF : 0);
        if ((LifecycleTable.actions(r) & SEND_FIN_ENDING_OUTPUT) == 0) {
            return;
        }
        reactor.send(life, ControlRecord.FIN, half.endOutput());
        endAnnounced = true;
        synchronized (life) {
            life.store(r);
        }
    }

    /**
     * True once the peer has taken none of our messages for {@link #closeLingerNanos} since the
     * close or since it last took one. Control thread, while draining, right after
     * {@link UcxHalf#sendsComplete} polled the credits.
     */
    private boolean lingeredOut(UcxHalf half, long now) {
        long progress = half.messagesTaken();
        int verdict = EndingVerdicts.linger(lingerFrom, lingerProgress, progress, now, closeLingerNanos);
        if (verdict == EndingVerdicts.LINGER_RESTARTS) {
            lingerFrom = now;
            lingerProgress = progress;
        }
        return verdict == EndingVerdicts.LINGER_OVER;
    }

    /**
     * The closed connection's last bytes were not taken in time: the connection is reset (an
     * ABORT record, or, where no record may follow our bytes yet, a reset of the socket), so
     * that the peer learns that its stream was cut instead of reading an early end-of-stream.
     */
    private void giveUpOnPeer() {
        LOG.log(System.Logger.Level.WARNING, () -> "hadroNIO: the peer took none of this closed connection's last "
                + "bytes for " + TimeUnit.NANOSECONDS.toMillis(closeLingerNanos) + " ms; resetting it: " + life);
        if ((life.step(Event.LINGER_OVER, 0) & RUN_ABORT) != 0) {
            abort();
        }
    }

    /**
     * For {@link #awaitPeerEnd}: reads and drops what is left of the peer's raw bytes (the
     * channel is closed: nobody else reads them), so that the records behind them - the FIN
     * the close waits for - can be read. False when the socket ended or failed first.
     */
    private boolean discardRaw() {
        SocketChannel tcp = life.tcp;
        if (tcp.isBlocking()) {
            // (an upgradable connection's socket is non-blocking; the control thread never blocks)
            return false;
        }
        ConnectionUpgrade raw = life.upgrade();
        ByteBuffer scratch = ByteBuffer.allocate((int) Math.min(65536, Math.max(1, raw.room())));
        ReentrantLock rawInput = raw.lock();
        rawInput.lock();
        try {
            while ((life.word() & IN_UCX) == 0) {
                long room = raw.room();
                scratch.clear().limit((int) Math.min(scratch.capacity(), room));
                int n = tcp.read(scratch);
                if (n < 0) {
                    return false;
                }
                if (n == 0) {
                    return true;
                }
                raw.consumed(n);
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
     * or after {@link #PEER_END_NANOS} ({@link EndingVerdicts#peerEnd}). True while waiting.
     */
    private boolean awaitPeerEnd(long now) {
        int w = life.word();
        long fin = life.peerFinCount();
        boolean late = now - peerEndDeadline > 0;
        int verdict = EndingVerdicts.peerEnd(w, fin, late, peerEndBySession, peerEndLost);
        boolean over = verdict == EndingVerdicts.PEER_END_OVER
                || verdict == EndingVerdicts.DISCARD_RAW_FIRST && !discardRaw();
        if (!over && !life.connection().discardInput(fin)) {
            return true;
        }
        if (EndingVerdicts.awaitsSwitchedRecord(w, late)) {
            return true;
        }
        if (late) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: the peer's last messages did not come in time: " + life);
        }
        finish();
        return false;
    }

    /** Abortive close ({@code SO_LINGER} 0): the socket closes with a reset, nothing more is sent (control thread). */
    void abort() {
        long a = LifecycleTable.actions(life.ask(Event.ABORT, 0));
        if (closeThen(a, System.nanoTime())) {
            // our bytes are dropped, but the peer's in flight are still taken (awaitPeerEnd); or
            // the reset goes out once they are
            reactor.watch(life);
        }
    }

    /** DRAINING → CLOSED: the socket leaves the control thread and closes, the UCX half is freed. */
    private void finish() {
        long a = life.step(Event.FINISH, (endAnnounced ? ANNOUNCED : 0) | (keepMemory ? KEEP_MEMORY : 0));
        if ((a & FORGET) != 0) {
            reactor.forget(life);
        }
        if ((a & LINGER_ZERO) != 0) {
            try {
                life.tcp.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
            } catch (IOException | RuntimeException e) {
                // closed already
            }
        }
        if ((a & CLOSE_SOCKET) != 0) {
            // the session first: its end must reach the server before this port can be reused
            SwitchSession u = life.upgrade().session();
            if (u != null) {
                u.end();
            }
            try {
                life.closeSocket();
            } catch (IOException e) {
                // nothing to do
            }
        }
        if ((a & RELEASE) != 0) {
            life.connection().release();
        }
    }

    /**
     * JVM exit (control thread): close in order what the application left open, as the
     * kernel does for its sockets, but leave the memory: application threads may still be
     * inside a read or write.
     */
    void closeAtExit() {
        UcxHalf half = life.connection();
        long a = life.step(Event.EXIT, half != null ? HALF : 0);
        if ((a & MEMORY_STAYS) != 0) {
            keepMemory = true;
        }
        if ((a & WAKE) != 0) {
            life.wake();
        }
        if ((a & WATCH) != 0) {
            reactor.watch(life);
        }
    }

    @Override
    public String toString() {
        return peerEndDeadline != 0 ? " awaiting-peer-end" + (peerEndBySession ? "-by-session" : "")
                + (peerEndLost ? "-lost" : "") : "";
    }
}
