package io.hadronio.worker;

import io.hadronio.platform.CarrierCompensation;
import io.hadronio.platform.Nap;
import io.hadronio.platform.VirtualThreadParking;
import io.hadronio.ucx.UcxContext;
import io.hadronio.ucx.UcxEndpoint;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import io.hadronio.ucx.ThreadMode;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One UCX worker shared by many connections, the lock that serialises every call into
 * it, and the wait strategy of threads that need it to make progress.
 *
 * <p>Workers are expensive (about ten fds and 4 MB each) and endpoints cheap, so
 * connections share a group and are told apart by the tag id each one gets here.
 * UCX runs the worker in SERIALIZED mode; {@link #lock} is that serialisation. Any
 * thread that waits progresses the worker for everyone: after progress that did
 * something, the other waiters are woken so that none of them misses a completion that
 * another thread's progress produced. How threads sleep without stealing each other's
 * wake-ups is {@link Waiters}' part.
 *
 * <p>It knows the connections that use it only as a {@link WorkerUser} (its token's completions,
 * its peer's failure) and as the {@link Readiness} a blocked thread waits for.
 *
 * <p>Lock order (docs/architecture.md, "Lock order"): a channel's read or write lock, then the
 * raw-input lock (ConnectionUpgrade), then this lock, then a ConnectionLifecycle's monitor, a leaf:
 * it may be taken while this lock is held, never this lock while the monitor is. Nothing blocks
 * while holding it.
 */
public final class WorkerGroup implements AutoCloseable {
    // the worker; every call into it holds 'lock'
    private final UcxWorker worker;
    // serialises all worker calls (UCX SERIALIZED mode)
    public final ReentrantLock lock = new ReentrantLock();
    // source of per-connection receive tag ids
    private final AtomicInteger nextId = new AtomicInteger(1);
    // threads sleeping until the worker does something for them; one of them watches the event fd
    private final Waiters waiters = new Waiters();
    // how long a waiter busy-polls before sleeping (Long.MAX_VALUE: never sleeps)
    private final long spinNanos;
    // adaptive waiters yield the core after their first pauses (hadronio.polling.yield)
    private final boolean spinYields;
    // longest single sleep; bounds the cost of any missed wake-up
    private static final int MAX_SLEEP_MILLIS = 50;

    // this worker's UCX address, sent in every handshake
    private final byte[] address;
    // one endpoint per peer worker, shared by every connection to it; under 'lock'
    private final java.util.Map<java.nio.ByteBuffer, PeerEndpoint> peers = new java.util.HashMap<>();

    /**
     * The one endpoint of this worker to one peer worker, shared by all connections
     * between the two (tags tell them apart). UCX pairs the endpoints two workers make to
     * each other by the order in which each side made them (its wire-up's connection
     * sequence numbers); with an endpoint per connection, connections set up concurrently
     * pair crosswise, and closing one cancels another's rendezvous receive ("Request
     * canceled"; regression: SoakTest with UCX's default settings). So an endpoint to a peer
     * is made once and kept while the peer lives: closing and remaking it on one side only
     * would break the pairing again. It goes when UCX reports the peer failed, or when every
     * connection to it saw its control connection end without a close (the peer died).
     */
    public static final class PeerEndpoint {
        public final UcxEndpoint endpoint;
        final java.nio.ByteBuffer key;
        // connections that use it; under the group's lock
        final java.util.Set<WorkerUser> users = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
        boolean failed;

        PeerEndpoint(UcxEndpoint endpoint, java.nio.ByteBuffer key) {
            this.endpoint = endpoint;
            this.key = key;
        }
    }

    /** The endpoint to the worker at {@code peerAddress}, made on first use; {@code user} is told of its failure. Under lock. */
    public PeerEndpoint endpointTo(byte[] peerAddress, WorkerUser user) throws UcxException {
        assert lock.isHeldByCurrentThread();
        // looked up in place; copied only for a new entry, whose key must not change under the map
        PeerEndpoint p = peers.get(java.nio.ByteBuffer.wrap(peerAddress));
        if (p == null || p.failed || !p.endpoint.isOpen()) {
            java.nio.ByteBuffer key = java.nio.ByteBuffer.wrap(peerAddress.clone());
            PeerEndpoint[] made = new PeerEndpoint[1];
            UcxEndpoint ep = worker.connect(peerAddress, io.hadronio.ucx.ErrorMode.PEER,
                    (failed, status) -> peerFailed(made[0], status));
            p = new PeerEndpoint(ep, key);
            made[0] = p;
            peers.put(key, p);
        }
        p.users.add(user);
        return p;
    }

    /** UCX reports the peer failed (an upcall inside progress, under lock): every connection to it is reset. */
    private void peerFailed(PeerEndpoint p, int status) {
        if (p == null) {
            return;
        }
        p.failed = true;
        peers.remove(p.key, p);
        for (WorkerUser u : p.users.toArray(new WorkerUser[0])) {
            u.onPeerFailure(status);
        }
        // a failed endpoint stays UCX's until it is closed, which an upcall may not do: after the progress
        failedEndpoints.add(p.endpoint);
        wakeAfterProgress = true;
    }

    // endpoints UCX reported failed inside a progress, closed once it returned (under lock). Left
    // open, each would stay in the worker for good, one per abortive close of a peer (its forced
    // close of its end reads as a failure here; regression: AbruptCloseAcrossJvmsTest)
    private final java.util.ArrayList<UcxEndpoint> failedEndpoints = new java.util.ArrayList<>();

    /** Closes the endpoints that failed inside the progress that just returned. Under lock, not in an upcall. */
    private void closeFailedEndpoints() {
        for (UcxEndpoint ep : failedEndpoints) {
            if (ep.isOpen()) {
                try {
                    long close = ep.closeNonBlocking(true);
                    if (close != UcxWorker.COMPLETED) {
                        worker.release(close);
                    }
                } catch (UcxException | RuntimeException e) {
                    // gone either way
                }
            }
        }
        failedEndpoints.clear();
    }

    /** A connection no longer uses {@code p}; the endpoint stays for the next connection to that peer. Under lock. */
    public void leave(PeerEndpoint p, WorkerUser user) {
        p.users.remove(user);
    }

    /**
     * A connection's control connection ended without a close: if no connection to that
     * peer is left in good standing, the peer died, and its endpoint is closed by force, so
     * that sends UCX never reported (it misses a peer that dies while our first rendezvous
     * sends wait) end now. Under lock.
     */
    public void peerMayBeDead(PeerEndpoint p) {
        for (WorkerUser u : p.users) {
            if (!u.controlLost()) {
                return;
            }
        }
        p.failed = true;
        peers.remove(p.key, p);
        if (worker.isOpen()) {
            // it may have died in the middle of a write into our worker's shared-memory receive FIFO;
            // the forced close below reports it too, but not when it fails or the endpoint is closed already
            worker.reportDeadPeer();
        }
        if (p.endpoint.isOpen() && worker.isOpen()) {
            try {
                long close = p.endpoint.closeNonBlocking(true);
                if (close != UcxWorker.COMPLETED) {
                  progressLocked();
                    worker.release(close);
                }
            } catch (UcxException | RuntimeException e) {
                // gone either way
            }
        }
    }

    public WorkerGroup(UcxContext context, String name, long spinNanos, boolean spinYields) throws UcxException {
        this.worker = context.newWorker(ThreadMode.SERIALIZED, name);
        this.spinNanos = spinNanos;
        this.spinYields = spinYields;
        this.address = worker.address();
        worker.completionListener(this::completed);
    }

    // ---- which connection a completion belongs to ----

    // connections by token: their requests carry it, so that a completion names the connection it
    // changed and a selector looks at that one only. Under lock; tokens are reused, so a request
    // that completes after its connection was released may name another one (a harmless extra look)
    private WorkerUser[] byToken = new WorkerUser[64];
    // tokens given back, and the next never-used one
    private int[] freeTokens = new int[64];
    private int freeTokenCount;
    private int nextToken;

    /** A token for {@code c}'s requests. Under lock. */
    public int attach(WorkerUser c) {
        assert lock.isHeldByCurrentThread();
        int token = freeTokenCount > 0 ? freeTokens[--freeTokenCount] : nextToken++;
        if (token == byToken.length) {
            byToken = java.util.Arrays.copyOf(byToken, token * 2);
        }
        byToken[token] = c;
        return token;
    }

    /** {@code c} posts nothing more with its token. Under lock. */
    public void detach(int token, WorkerUser c) {
        assert lock.isHeldByCurrentThread();
        if (byToken[token] == c) {
            byToken[token] = null;
            if (freeTokenCount == freeTokens.length) {
                freeTokens = java.util.Arrays.copyOf(freeTokens, freeTokenCount * 2);
            }
            freeTokens[freeTokenCount++] = token;
        }
    }

    /** A request posted with {@code token} completed (an upcall, under lock): its connection's readiness may have changed. */
    private void completed(int token) {
        final WorkerUser[] t = byToken;
        if (token < t.length) {
            WorkerUser c = t[token];
            if (c != null) {
                c.completionSeen();
            }
        }
    }

    public byte[] address() {
        return address;
    }

    public UcxWorker worker() {
        return worker;
    }

    /** A fresh receive tag id (32 bits), unique on this worker. */
    public int newConnectionId() {
        int id;
        do {
            id = nextId.getAndIncrement();
        } while (id == 0);
        return id;
    }

    // tryLock attempts before a data-path caller queues for the lock (see acquire)
    private static final int ACQUIRE_SPINS = 256;

    /**
     * Takes {@code lock} for a read, a write or a selector's look. Holders keep it for one
     * progress or one copy (well under a microsecond to a few), while a contended
     * {@code lock()} queues the thread with a node it allocates: with both ends of a
     * connection on one worker that was some 30 bytes per round trip on each side, and an
     * occasional node wherever the control thread or a selector meets a reader. So it tries
     * a bounded number of times first (~10 us of {@code onSpinWait}), then queues.
     */
    public static void acquire(ReentrantLock lock) {
        if (lock.tryLock()) {
            return;
        }
        for (int i = 0; i < ACQUIRE_SPINS; i++) {
            Thread.onSpinWait();
            if (lock.tryLock()) {
                return;
            }
        }
        lock.lock();
    }

    /** Progresses once unless another thread is progressing right now. Returns events handled. */
    public int progressOnce() {
        final ReentrantLock l = lock;
        if (!l.tryLock()) {
            return 0;
        }
        try {
            return progressLocked();
        } finally {
            l.unlock();
        }
    }

    /**
     * Progresses once; the caller holds the lock. Every progress goes through here: when
     * it handled events and others wait, they are woken (the events may be theirs).
     */
    public int progressLocked() {
        assert lock.isHeldByCurrentThread();
        int events = worker.progress();
        if (wakeAfterProgress) {
            // an endpoint failed inside that progress: everyone must look
            wakeAfterProgress = false;
            if (!failedEndpoints.isEmpty()) {
                closeFailedEndpoints();
            }
            waiters.wakeAll();
        } else if (events > 0 && !waiters.isEmpty()) {
            waiters.wakeOthers(true);
        }
        return events;
    }

    /**
     * How recent a progress of the control thread's serves its next flush: one pass of its
     * flush watch, every millisecond, progresses once for all the connections of this group it
     * flushes ({@link #progressForControl}), not once per connection.
     */
    static final long CONTROL_PROGRESS_NANOS = 100_000;
    // when the control thread's flushes last progressed this group; the control thread's, under the lock
    private long controlProgressedAt = System.nanoTime() - CONTROL_PROGRESS_NANOS;

    /**
     * For the control thread's flush of one connection: progresses unless it did so for another
     * connection of this group within {@link #CONTROL_PROGRESS_NANOS}, so a pass over the watched
     * connections progresses the worker once. A progress handles the events of every endpoint of
     * the worker; the flushes after it in the same pass see what it handled. (A server answering
     * 1,000 connections at 1,000 requests/s had most of them watched at any time, and progressed
     * its worker once per watched connection per millisecond.) The caller holds the lock.
     */
    public int progressForControl() {
        long now = System.nanoTime();
        if (now - controlProgressedAt < CONTROL_PROGRESS_NANOS) {
            return 0;
        }
        controlProgressedAt = now;
        return progressLocked();
    }

    // set by an upcall inside progress (an endpoint failed); read after progress returns
    private boolean wakeAfterProgress;

    /** From an upcall inside {@link #progressLocked()}: wake every waiter once the progress returned. */
    public void wakeAfterProgress() {
        wakeAfterProgress = true;
    }

    /**
     * Something other than this thread's progress may have made a waiter ready (a send
     * that completed a receive on this same worker): wake the others.
     */
    public void wakeOthers() {
        if (!waiters.isEmpty()) {
            waiters.wakeOthers(false);
        }
    }

    /** Wakes every thread sleeping on this worker (close, control events, interrupts). */
    public void wakeSleepers() {
        if (!waiters.isEmpty()) {
            waiters.wakeAll();
        }
    }

    /** Signals the event fd: wakes the watcher if it polls it, or makes its next arm refuse. */
    private void signalWorker() {
        try {
            if (worker.isOpen()) {
                worker.signal();
            }
        } catch (UcxException | IllegalStateException e) {
            // closed concurrently: nobody left to wake
        }
    }

    /**
     * Waits until {@code waiter.isReady(op)} (always asked under the lock), progressing
     * the worker: busy for the configured window, then sleeping on the event fd in
     * bounded naps.
     *
     * @param deadline {@link System#nanoTime()} value to give up at, or {@link Long#MAX_VALUE}
     * @return true when ready, false when the deadline passed
     */
    public boolean await(Readiness waiter, int op, long deadline) throws IOException {
        BlockedThread me = blockedThreads.get();
        AdaptiveSpin spin = me.spin;
        spin.clearRefusals();
        spin.start(System.nanoTime());
        try {
            while (true) {
                if (progressAndCheck(waiter, op)) {
                    return true;
                }
                long now = System.nanoTime();
                if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                    return false;
                }
                if (spin.turn(now)) {
                    continue;
                }
                if (sleep(me, waiter, op, deadline, now)) {
                    return true;
                }
            }
        } finally {
            spin.stop();
        }
    }

    private boolean progressAndCheck(Readiness waiter, int op) throws IOException {
        final ReentrantLock l = lock;
        if (!l.tryLock()) {
            return false;
        }
        boolean ready;
        try {
            if (!worker.isOpen()) {
                throw new IOException("UCX worker closed");
            }
            ready = waiter.isReady(op);
            if (ready) {
                return true;
            }
          progressLocked();
            ready = waiter.isReady(op);
        } finally {
            l.unlock();
        }
        return ready;
    }

    /** A thread blocked in a read or write, as {@link Waiters} wakes it. */
    private final class BlockedThread extends Waiters.Waiter {
        // the thread's spin before it sleeps, reused wait after wait
        final AdaptiveSpin spin = new AdaptiveSpin(spinNanos, spinYields);
        // what the thread waits for (set by it before it enters the waiters)
        Readiness readiness;
        int op;

        @Override
        protected boolean wantsWake() {
            Readiness r = readiness;
            boolean wants = r == null || r.mayBeReady(op);
            if (wants && op == Readiness.OP_WRITE) {
                writerWakes.increment();
            }
            return wants;
        }

        @Override
        protected void wake() {
            LockSupport.unpark(thread);
            if (waiters.isWatcher(this)) {
                signalWorker();
            }
        }
    }

    // threads blocked in a write on this group that another thread's progress woke because it handled
    // events (for tests: a writer is woken for its own connection's credits and completions, not for
    // every event of the worker; the watch's hand-over and wakeAll are not counted). Per group, so
    // that a test counts its own worker's wakes, not those of whatever else runs in the JVM
    public final java.util.concurrent.atomic.LongAdder writerWakes = new java.util.concurrent.atomic.LongAdder();

    // each blocked thread's entry among the waiters, made once (the wait path allocates nothing)
    private final ThreadLocal<BlockedThread> blockedThreads = ThreadLocal.withInitial(BlockedThread::new);

    private boolean sleep(BlockedThread me, Readiness waiter, int op, long deadline, long now) throws IOException {
        me.bind();
        me.readiness = waiter;
        me.op = op;
        waiters.enter(me);
        try {
            boolean watching;
            boolean armed = false;
          acquire(lock);
            try {
                if (!worker.isOpen()) {
                    throw new IOException("UCX worker closed");
                }
                while (progressLocked() > 0) {
                    // drain everything pending: arm() refuses while events are queued
                }
                // claim the watch before the last look, so that whoever makes us ready after
                // that look sees us as the watcher and signals the event fd (see Waiters)
                watching = waiters.tryWatch(me);
                if (waiter.isReady(op)) {
                    return true;
                }
                if (watching) {
                    armed = worker.arm();
                }
            } finally {
                lock.unlock();
            }
            long napMillis = deadline == Long.MAX_VALUE ? MAX_SLEEP_MILLIS
                    : Math.max(1, Math.min(MAX_SLEEP_MILLIS, (deadline - now) / 1_000_000));
            if (watching) {
                if (armed) {
                    me.spin.clearRefusals();
                } else {
                    long nap = me.spin.napAfterRefusal(System.nanoTime());
                    if (nap > 0) {
                        // a send waits in UCX for the peer: look again after a nap, or when woken
                        LockSupport.parkNanos(this, Math.min(napMillis * 1_000_000L, nap));
                    }
                }
                if (armed && VirtualThreadParking.applies()) {
                    // a virtual thread naps, then parks: its carrier runs the others meanwhile
                    Nap.sleepOnSet(worker.eventFd(), (int) napMillis);
                } else if (armed) {
                    // a platform thread, or a virtual thread that cannot park (it asks for a spare carrier)
                    boolean compensated = CarrierCompensation.begin();
                    try {
                        worker.waitForEvents((int) napMillis);
                    } finally {
                        CarrierCompensation.end(compensated);
                    }
                }
            } else {
                // bounded while a selector holds or reserves the watch (Waiters, rule 5)
                LockSupport.parkNanos(this, Math.max(1, Math.min(napMillis * 1_000_000L,
                        waiters.napNanosWhileNotWatching())));
            }
            return false;
        } finally {
            waiters.leave(me);
        }
    }

    // ---- for selectors, which sleep on several workers' event fds at once ----

    /** {@link #watch}: the caller armed the worker; poll its event fd. */
    public static final int WATCHING = 1;
    /** {@link #watch}: another waiter watches the worker; sleep on your own fd only. */
    public static final int NOT_WATCHING = 0;
    /** {@link #watch}: events came in; look again instead of sleeping. */
    public static final int LOOK_AGAIN = -1;
    /**
     * {@link #watch}: UCX refused to arm the worker although nothing came in; look again, not at
     * once when that goes on ({@link AdaptiveSpin#napAfterRefusal}).
     */
    public static final int REFUSED = -2;

    /** Counts a selector among the waiters: from now on, others wake it when they handle events. */
    public void enter(Waiters.Waiter w) {
        waiters.enter(w);
    }

    public void leave(Waiters.Waiter w) {
        waiters.leave(w);
    }

    /** A selector stops watching this worker: its reservation of the watch ends ({@link Waiters#release}). */
    public void release(Waiters.Waiter w) {
        waiters.release(w);
    }

    /** The longest sleep of a selector that does not watch this worker ({@link Waiters#napNanosWhileNotWatching}). */
    public long napNanosWhileNotWatching() {
        return waiters.napNanosWhileNotWatching();
    }

    /**
     * For a selector that entered and found nothing ready: becomes the watcher if nobody
     * is, and then arms the worker.
     *
     * @return {@link #WATCHING}, {@link #NOT_WATCHING} or {@link #LOOK_AGAIN}
     */
    public int watch(Waiters.Waiter w) throws IOException {
        if (!waiters.tryWatch(w)) {
            return NOT_WATCHING;
        }
        return arm();
    }

    /**
     * Arms the event fd unless there is something to look at first. False when progress
     * handled events (they may have made a key ready that the caller already asked: a
     * message that arrived before arming signals nothing, so sleeping now would miss it)
     * or when events are queued; the caller looks again instead of sleeping.
     *
     * @return {@link #WATCHING}, {@link #LOOK_AGAIN} (progress handled events) or
     *         {@link #REFUSED} (UCX refused with nothing come in)
     */
    private int arm() throws IOException {
      acquire(lock);
        try {
            if (!worker.isOpen()) {
                throw new IOException("UCX worker closed");
            }
            if (progressLocked() > 0) {
                return LOOK_AGAIN;
            }
            return worker.arm() ? WATCHING : REFUSED;
        } finally {
            lock.unlock();
        }
    }

    /** The worker's event fd, for poll(2). */
    public int eventFd() throws IOException {
        lock.lock();
        try {
            return worker.eventFd();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public void close() {
        lock.lock();
        try {
            worker.close();
        } finally {
            lock.unlock();
        }
    }
}
