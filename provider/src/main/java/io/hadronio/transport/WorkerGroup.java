package io.hadronio.transport;

import io.hadronio.ucx.UcxContext;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import io.hadronio.ucx.ThreadMode;
import java.io.IOException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One UCX worker shared by many connections, the lock that serialises every call into
 * it, and the wait strategy of threads that need it to make progress.
 *
 * <p>Workers are expensive (about ten fds and 4 MB each) and endpoints cheap, so
 * connections share a group and are told apart by the tag id each one gets here.
 * UCX runs the worker in SERIALIZED mode; {@link #lock} is that serialisation. Any
 * thread that waits progresses the worker for everyone: after progress that did
 * something, sleepers are signalled so that none of them misses a completion that
 * another thread's progress produced.
 *
 * <p>Lock order: a channel's read or write lock, then its state lock, then this lock.
 * Nothing blocks while holding it.
 */
public final class WorkerGroup implements AutoCloseable {
    // the worker; every call into it holds 'lock'
    private final UcxWorker worker;
    // serialises all worker calls (UCX SERIALIZED mode)
    final ReentrantLock lock = new ReentrantLock();
    // source of per-connection receive tag ids
    private final AtomicInteger nextId = new AtomicInteger(1);
    // threads currently sleeping on the event fd
    private final AtomicInteger sleepers = new AtomicInteger();
    // how long a waiter busy-polls before sleeping (Long.MAX_VALUE: never sleeps)
    private final long spinNanos;
    // longest single sleep; bounds the cost of any missed wake-up
    private static final int MAX_SLEEP_MILLIS = 50;

    // this worker's UCX address, sent in every handshake
    private final byte[] address;

    WorkerGroup(UcxContext context, String name, long spinNanos) throws UcxException {
        this.worker = context.newWorker(ThreadMode.SERIALIZED, name);
        this.spinNanos = spinNanos;
        this.address = worker.address();
    }

    byte[] address() {
        return address;
    }

    UcxWorker worker() {
        return worker;
    }

    /** A fresh receive tag id (32 bits), unique on this worker. */
    int newConnectionId() {
        int id;
        do {
            id = nextId.getAndIncrement();
        } while (id == 0);
        return id;
    }

    /** Progresses once unless another thread is progressing right now. Returns events handled. */
    public int progressOnce() {
        final ReentrantLock l = lock;
        if (!l.tryLock()) {
            return 0;
        }
        int events;
        try {
            events = worker.progress();
        } finally {
            l.unlock();
        }
        if (events > 0 && sleepers.get() > 0) {
            wakeSleepers();
        }
        return events;
    }

    /** Wakes every thread sleeping on this worker (close, control events, interrupts). */
    public void wakeSleepers() {
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
    boolean await(Readiness waiter, int op, long deadline) throws IOException {
        long start = System.nanoTime();
        long spinUntil = spinNanos == Long.MAX_VALUE ? Long.MAX_VALUE : start + spinNanos;
        while (true) {
            if (progressAndCheck(waiter, op)) {
                return true;
            }
            long now = System.nanoTime();
            if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                return false;
            }
            if (spinUntil == Long.MAX_VALUE || now - spinUntil < 0) {
                Thread.onSpinWait();
                continue;
            }
            if (sleep(waiter, op, deadline, now)) {
                return true;
            }
        }
    }

    private boolean progressAndCheck(Readiness waiter, int op) throws IOException {
        final ReentrantLock l = lock;
        if (!l.tryLock()) {
            return false;
        }
        int events;
        boolean ready;
        try {
            if (!worker.isOpen()) {
                throw new IOException("UCX worker closed");
            }
            ready = waiter.isReady(op);
            if (ready) {
                return true;
            }
            events = worker.progress();
            ready = waiter.isReady(op);
        } finally {
            l.unlock();
        }
        if (events > 0 && sleepers.get() > 0) {
            wakeSleepers();
        }
        return ready;
    }

    private boolean sleep(Readiness waiter, int op, long deadline, long now) throws IOException {
        // count ourselves as a sleeper before arming, so that any progress made by another
        // thread from now on signals the event fd instead of leaving us to time out
        sleepers.incrementAndGet();
        try {
            boolean armed;
            lock.lock();
            try {
                if (!worker.isOpen()) {
                    throw new IOException("UCX worker closed");
                }
                while (worker.progress() > 0) {
                    // drain everything pending: arm() refuses while events are queued
                }
                if (waiter.isReady(op)) {
                    return true;
                }
                armed = worker.arm();
            } finally {
                lock.unlock();
            }
            if (!armed) {
                return false;
            }
            long napMillis = deadline == Long.MAX_VALUE ? MAX_SLEEP_MILLIS
                    : Math.max(1, Math.min(MAX_SLEEP_MILLIS, (deadline - now) / 1_000_000));
            worker.waitForEvents((int) napMillis);
            return false;
        } finally {
            sleepers.decrementAndGet();
        }
    }

    // ---- for selectors, which sleep on several workers' event fds at once ----

    /** Counts the caller as a sleeper: progress by other threads will signal the event fd. */
    public void beginSleep() {
        sleepers.incrementAndGet();
    }

    public void endSleep() {
        sleepers.decrementAndGet();
    }

    /**
     * Arms the event fd unless there is something to look at first. False when progress
     * handled events (they may have made a key ready that the caller already asked: a
     * message that arrived before arming signals nothing, so sleeping now would miss it)
     * or when events are queued; the caller looks again instead of sleeping.
     */
    public boolean arm() throws IOException {
        lock.lock();
        try {
            if (!worker.isOpen()) {
                throw new IOException("UCX worker closed");
            }
            if (worker.progress() > 0) {
                return false;
            }
            return worker.arm();
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

    /** What a waiting thread waits for. */
    interface Readiness {
        boolean isReady(int op);
    }
}
