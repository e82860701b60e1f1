package io.hadronio.connection;

import java.net.ProtocolException;
import java.util.concurrent.locks.ReentrantLock;
import io.hadronio.connection.LifecycleTable.Event;

import static io.hadronio.connection.LifecycleTable.*;

/**
 * A local connection's move from the kernel socket to UCX while in use, as its owner
 * ({@link ConnectionLifecycle}) sees it: the upgrade session it was offered
 * ({@link SwitchSession}; {@link PathSwitch} is the session's own table), the channel's hooks
 * that convert it and move an idle output, and the raw-byte accounting: how many bytes went each
 * way on the kernel socket, where each direction's raw stream ends (its switch point), and the
 * lock that keeps a raw read from passing the peer's. The facts of the move (UPGRADABLE, OUT_UCX,
 * IN_LIMIT, IN_UCX, ...) are the owner's word; each switch is decided by {@link LifecycleTable}
 * under the owner's monitor, and the count it freezes is stored here in the same moment.
 *
 * <h2>Threads and locks</h2>
 * <ul>
 * <li>{@code session}, {@code converter}, {@code idleOutputSwitch}, {@code rawReaderWake}: set once, before the channel
 *     is shared (volatile); read by any thread.</li>
 * <li>{@code rawConsumed}: readers under {@link #lock} (and, while the connection is still a
 *     candidate, under the channel's read lock: no switch can come before it converts); the
 *     rendezvous thread reads it under {@link #lock} (the peer's SWITCH); the control thread under
 *     {@link #lock} when a close drops the peer's raw bytes.</li>
 * <li>{@code rawLimit}: written once by the rendezvous thread under {@link #lock} and the owner's
 *     monitor, before IN_LIMIT is set; volatile.</li>
 * <li>{@code rawWritten}: writers only, under the channel's write lock; frozen by our switch.</li>
 * <li>{@code switchedAt}: written once, by a writer under the owner's monitor with OUT_UCX;
 *     volatile, read by the rendezvous thread (ACK) and the control thread (SWITCHED).</li>
 * </ul>
 * Lock order: the channel's read or write lock, then {@link #lock}, then the owner's monitor
 * (a leaf). {@code toString} reads the counts without a lock (diagnostics).
 */
public final class ConnectionUpgrade {
    // raw bytes, read or written, that make a connection worth upgrading whatever the number of
    // writes that carried them (a stream)
    private static final long UPGRADE_AFTER_BYTES = 64 * 1024;

    private final ConnectionLifecycle life;
    private final ConnectionControl reactor;
    // the upgrade session that moves the connection (see UPGRADABLE), or null: never offered one
    private volatile SwitchSession session;
    // the channel's "convert, then run this" (any thread; see convertThen), or null
    private volatile java.util.function.Consumer<Runnable> converter;
    // a raw read and the peer's SWITCH never overlap: a read bounded by what it knew could
    // otherwise take bytes past the switch point
    private final ReentrantLock rawInput = new ReentrantLock();
    // raw bytes the peer sent before its switch (valid with IN_LIMIT) and we consumed (under rawInput)
    private volatile long rawLimit = -1;
    private long rawConsumed;
    // raw bytes we wrote, and the writes that carried them (writers only, under the channel's write
    // lock); frozen by the switch
    private long rawWritten;
    private long rawWrites;
    private volatile long switchedAt = -1;
    // the channel's "move an idle output now" (it needs the channel's write lock), or null
    private volatile Runnable idleOutputSwitch;
    // ends a blocking read's wait on the kernel socket (path/UpgradingKernelPath), or null
    private volatile Runnable rawReaderWake;

    ConnectionUpgrade(ConnectionLifecycle life, ConnectionControl reactor) {
        this.life = life;
        this.reactor = reactor;
    }

    /**
     * A local connection that may move to UCX once it carries traffic, set before the channel
     * is shared. Until its channel {@linkplain #converted converts} it, it is a plain
     * connection in every respect: its socket in the application's blocking mode, a blocking
     * read asleep in the kernel as with the JDK. A short connection ends that way.
     */
    public void offer(SwitchSession s) {
        session = s;
    }

    /** The upgrade session of this connection, or null. */
    public SwitchSession session() {
        return session;
    }

    /** Offered an upgrade that has not converted the connection yet, nor been given up. */
    public boolean isCandidate() {
        return session != null && (life.word() & (UPGRADABLE | UPGRADE_OFF)) == 0;
    }

    /**
     * The channel made the socket non-blocking with no thread inside it (under its read and
     * write locks): from now on it emulates blocking, and the upgrade may go on.
     */
    public void converted() {
        life.step(Event.CONVERTED, 0);
    }

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
    public void convertThen(Runnable then) {
        java.util.function.Consumer<Runnable> c = converter;
        if (c != null) {
            c.accept(then);
        }
    }

    /** A candidate that cannot convert (closed, input shut down): it stays plain. */
    public void stayPlain() {
        life.upgradeOff();
    }

    /** Client: the converted connection's upgrade begins (once). */
    public void begin() {
        used();
    }

    /** shutdownOutput or close before the output switched: the kernel's FIN ends it; the peer stops waiting for a switch. */
    public void outputEndedRaw() {
        SwitchSession s = session;
        if (s != null) {
            s.outputEndedRaw();
        }
    }

    // ---- our input ---------------------------------------------------------------------------

    /** The lock a raw read holds (with {@link #room}, {@link #consumed}) so that the peer's switch point never overtakes it. */
    public ReentrantLock lock() {
        return rawInput;
    }

    /** How many raw bytes may still be read (under {@link #lock}): unbounded until the peer's switch point is known. */
    public long room() {
        return (life.word() & IN_LIMIT) != 0 ? rawLimit - rawConsumed : Long.MAX_VALUE;
    }

    /** True when the peer announced a switch point: a raw end-of-stream before it is a reset. */
    public boolean limitKnown() {
        return (life.word() & IN_LIMIT) != 0;
    }

    /** The peer's switch point (raw bytes it sent before its SWITCH), or -1 while not known. */
    long limit() {
        return rawLimit;
    }

    /** A candidate's plain read took {@code n} bytes (under the channel's read lock; no switch can come before it converts). */
    public void consumedPlain(long n) {
        rawConsumed += n;
    }

    /** A raw read took {@code n} bytes (under {@link #lock}). */
    public void consumed(long n) {
        rawConsumed += n;
        if (rawConsumed >= UPGRADE_AFTER_BYTES) {
            // a client that only reads upgrades once a stream came; one that reads a single
            // answer (and is about to close) does not
            used();
        }
        if ((life.word() & IN_LIMIT) != 0 && rawConsumed == rawLimit) {
            inputSwitched();
        }
    }

    /** The peer's SWITCH(n): its raw bytes end at n (rendezvous thread). */
    public void peerSwitched(long n) throws ProtocolException {
        rawInput.lock();
        try {
            long a;
            synchronized (life) {
                long r = life.ask(Event.PEER_SWITCH, 0, n, rawConsumed, 0);
                if ((LifecycleTable.actions(r) & PROTOCOL_ERROR) != 0) {
                    throw new ProtocolException("SWITCH at " + n + " after " + rawConsumed + " raw bytes were read");
                }
                rawLimit = n;
                a = life.store(r);
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
        long a = life.step(Event.INPUT_SWITCHED, 0);
        if ((a & READ_RECORDS) != 0) {
            reactor.readRecords(life);
        }
        if ((a & WAKE) != 0) {
            life.wake();
        }
    }

    // ---- our output --------------------------------------------------------------------------

    /**
     * A write on the raw connection (under the channel's write lock): a client's upgrade
     * begins at a write once it is due, but not at the connection's first write. A connection
     * that writes once (a request) and reads its answer is over before an upgrade could pay
     * for itself, however long its connect took; one that writes again carries traffic, and
     * moves a round trip later.
     */
    public void wroteBefore() {
        if (rawWritten > 0) {
            used();
        }
    }

    /** Raw bytes a writer handed to the kernel (under the channel's write lock). */
    public void wrote(long n) {
        if (n > 0) {
            rawWritten += n;
            rawWrites++;
        }
    }

    /**
     * A writer (under the channel's write lock) moves our output to UCX when it can: the UCX
     * half is ready, the output is open and still raw. Returns the switch point (raw bytes
     * written), or -1 when the output stays raw for now.
     */
    public long trySwitchOutput() {
        long n;
        synchronized (life) {
            long r = life.ask(Event.OUTPUT_SWITCH, 0);
            if ((LifecycleTable.actions(r) & SEND_SWITCH) == 0) {
                return -1;
            }
            n = rawWritten;
            switchedAt = n;
            life.store(r);
        }
        reactor.track(life);
        session.sendSwitch(n);
        return n;
    }

    /** Our switch point (raw bytes written before it), or -1 while our output is raw. */
    public long switchedAt() {
        return switchedAt;
    }

    /**
     * The peer took our switch point: records may follow on the kernel socket (rendezvous
     * thread). SWITCHED must be the first record after our raw bytes, and every other record
     * is written by the control thread once OUT_ACKED is set; so the control thread writes
     * SWITCHED and only then sets OUT_ACKED (the other way round, a close's FIN or CLOSE could
     * go out first and the peer would read it as data or as a broken protocol).
     */
    public void outputAcked() {
        reactor.execute(() -> {
            if (life.tcp.isOpen()) {
                reactor.send(life, ControlRecord.SWITCHED, switchedAt);
            }
            long a = life.step(Event.OUTPUT_ACKED, 0);
            if ((a & WATCH) != 0) {
                reactor.watch(life);
            }
            if ((a & END_OUTPUT_FOR_PEER) != 0) {
                life.ending().endOutputForPeer();
            }
        });
    }

    /**
     * What moves this connection's output to UCX when the UCX half is ready and no writer is
     * inside the channel: without it, the output of a side that only reads (a stream's
     * receiver) would stay on the kernel socket for the connection's life.
     */
    public void idleOutputSwitch(Runnable r) {
        idleOutputSwitch = r;
    }

    /** What ends a blocking read's wait on the kernel socket when the connection changes (set once, at set-up). */
    public void rawReaderWake(Runnable r) {
        rawReaderWake = r;
    }

    /** The connection changed: a blocking read waiting on the kernel socket looks again. */
    void wakeRawReader() {
        Runnable r = rawReaderWake;
        if (r != null) {
            r.run();
        }
    }

    /** The UCX half is ready (rendezvous thread): an idle output moves now, a busy one at its next write. */
    public void switchIdleOutput() {
        Runnable r = idleOutputSwitch;
        if (r != null) {
            r.run();
        }
    }

    // ---- when a client's upgrade begins ------------------------------------------------------

    /**
     * Client, candidate: a write after {@link SwitchSession#writesBeforeMove} others (or after 64 KiB
     * written), with the upgrade's delay past. A move costs about what a hundred small round trips
     * gain on UCX: a connection of a hundred requests is over before the move pays for itself, and
     * on its local stream it answers more of them a second than moving (docs/benchmarks/patterns.md).
     */
    public boolean dueAtWrite() {
        SwitchSession u = session;
        // writesBeforeMove() is at least 1: never the connection's first write
        return u != null && (rawWrites >= u.writesBeforeMove() || rawWritten >= UPGRADE_AFTER_BYTES)
                && (life.word() & (UPGRADABLE | UPGRADE_OFF)) == 0 && u.due();
    }

    /** Client, candidate: 64 KiB read, with the upgrade's delay past. */
    public boolean dueAtRead() {
        SwitchSession u = session;
        return u != null && rawConsumed >= UPGRADE_AFTER_BYTES && (life.word() & (UPGRADABLE | UPGRADE_OFF)) == 0
                && u.due();
    }

    /** The connection carries traffic: a converted client's upgrade begins once it is due. */
    void used() {
        SwitchSession u = session;
        // a candidate's channel converts first (dueAtWrite/AtRead), then begins
        if (u != null && (life.word() & UPGRADABLE) != 0) {
            u.poke();
        }
    }

    /** The move's facts in {@code w}, the counts and switch points, for the owner's {@code toString}. */
    String describe(int w) {
        return " upgrade[" + ((w & UPGRADE_READY) != 0 ? "ready" : "pending") + ((w & UPGRADE_OFF) != 0 ? " off" : "")
                + ((w & OUT_UCX) != 0 ? " out-ucx@" + switchedAt : "") + ((w & OUT_ACKED) != 0 ? " out-acked" : "")
                + ((w & IN_LIMIT) != 0 ? " in-limit@" + rawLimit : "") + ((w & IN_UCX) != 0 ? " in-ucx" : "")
                + ((w & SWITCHED_SEEN) != 0 ? " switched-seen" : "") + " raw-in " + rawConsumed + " raw-out "
                + rawWritten + "]";
    }
}
