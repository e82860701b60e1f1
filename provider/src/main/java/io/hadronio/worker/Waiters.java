package io.hadronio.worker;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.AtomicReferenceArray;

/**
 * The threads that sleep until a worker has done something for them (selectors, and
 * blocking reads or writes), and the rule that keeps every one of them from missing
 * a wake-up.
 *
 * <p>A UCX worker has one event fd, and arming the worker ({@code ucp_worker_arm})
 * drains it: if two threads slept on it, one thread's arm could swallow the signal that
 * the other was sleeping for, and that one would sleep on with its channel ready. So
 * only one waiter at a time, the <em>watcher</em>, arms the worker and polls its event
 * fd; every other waiter sleeps on its own wake-up (a selector's eventfd, a parked
 * thread). The rules:
 * <ol>
 * <li>A waiter {@link #enter enters} before it asks its channels a last time and
 *     {@link #leave leaves} after its sleep.
 * <li>Whoever progresses the worker and handles events while others wait wakes them
 *     ({@link #wakeOthers}): the events may be theirs. So does whoever changes
 *     readiness some other way (control events, accepted connections, local close,
 *     a send that completes a receive on the same worker).
 * <li>A watcher that leaves hands the watch over: it wakes one remaining waiter, which
 *     becomes the watcher on its next sleep; a waiter that leaves while nobody watches
 *     passes the wake-up on to another.
 * <li>A progress that handled events wakes only the waiters that may be ready
 *     ({@link Waiter#wantsWake}); a sleeping watcher is woken by the worker's event fd.
 * <li>A selector that leaves with the watch {@link Waiter#keepsWatch keeps it}: nobody is
 *     woken, and for {@link #RESERVE_NANOS} no other waiter takes it; an event loop is back in
 *     its next selection within microseconds and watches again. Until then its own selections
 *     progress the worker and wake whoever the events are for (rule 2). Should it stay away,
 *     the reservation lapses: the next waiter that looks takes the watch, and a waiter that
 *     sleeps while a selector holds or reserves the watch naps at most
 *     {@link #napNanosWhileNotWatching()}. (Handing the watch over at every leave would cost
 *     two wake-ups per message when two selectors share a worker, as JGroups' two per member
 *     do; regression: SelectorWatchTest#shouldNotWakeAnIdleSelectorForAnotherSelectorsMessages.)
 *     A reserved watch follows the traffic: when the selector that holds the reservation wakes
 *     another selector for its events, the reservation passes to that one.
 * </ol>
 * Enter-then-ask and the hand-over are ordered by volatile accesses on both sides (a
 * waiter adds itself, then reads the watcher; a leaving watcher clears it, then reads
 * the waiters), so no waiter ends up asleep with nobody watching the worker.
 *
 * <p>With one thread per worker (the common case: one event loop per process), it is
 * always the watcher and nothing here costs a system call.
 */
public final class Waiters {
    /** One sleeping thread, as others wake it. */
    public abstract static class Waiter {
        // the thread sleeping, so that it does not wake itself
        volatile Thread thread;

        /** Ends the waiter's sleep, or makes its next one return at once. Any thread; never blocks. */
        protected abstract void wake();

        /**
         * Whether another thread's progress, which handled events, should wake this waiter:
         * true unless the waiter can tell cheaply (without side effects, under the worker's
         * lock) that what it waits for is still not there. Waking every waiter on every
         * event made a herd: with tens of threads blocked on one worker each event woke all
         * of them, and all queued for the worker's lock again.
         */
        protected boolean wantsWake() {
            return true;
        }

        /**
         * Whether the waiter keeps the watch reserved when it leaves (rule 5): true for a
         * selector, which comes back at once; a blocked read or write may not come back.
         */
        protected boolean keepsWatch() {
            return false;
        }

        /** Binds the waiter to the calling thread for its next sleep. */
        public final void bind() {
            thread = Thread.currentThread();
        }
    }

    // the waiters: slots, null when free; replaced by a bigger copy under 'this' when full.
    // Enter and leave lock; wakers only read, and allocate nothing.
    private volatile AtomicReferenceArray<Waiter> slots = new AtomicReferenceArray<>(8);
    private final AtomicInteger count = new AtomicInteger();
    private final AtomicReference<Waiter> watcher = new AtomicReference<>();

    /** How long a watch stays reserved for the selector that left with it (rule 5). */
    static final long RESERVE_NANOS = 1_000_000;
    /** Longest nap of a waiter that sleeps while a selector holds or reserves the watch (rule 5). */
    // (each nap costs an idle waiter a wake-up: 50 ms keeps that near 20 a second, and bounds the
    // wait of its events when the selector that watches stays away outside its selections)
    static final long NAP_NANOS_NEXT_TO_A_SELECTOR = 50_000_000;
    // the selector that left with the watch, and when; set before the watch is cleared, so a
    // waiter that sees no watcher sees the reservation
    private volatile Waiter reservedFor;
    private volatile long reservedAt;

    synchronized void enter(Waiter w) {
        AtomicReferenceArray<Waiter> a = slots;
        int n = a.length();
        for (int i = 0; i < n; i++) {
            if (a.get(i) == null) {
                a.set(i, w);
                count.incrementAndGet();
                return;
            }
        }
        AtomicReferenceArray<Waiter> bigger = new AtomicReferenceArray<>(2 * n);
        for (int i = 0; i < n; i++) {
            bigger.set(i, a.get(i));
        }
        bigger.set(n, w);
        slots = bigger;
        count.incrementAndGet();
    }

    /** True when {@code w} is (now) the one that arms the worker and polls its event fd. */
    boolean tryWatch(Waiter w) {
        Waiter current = watcher.get();
        if (current == w) {
            return true;
        }
        if (current != null || reservedForAnother(w) || !watcher.compareAndSet(null, w)) {
            return false;
        }
        if (reservedFor != null) {
            reservedFor = null;
        }
        return true;
    }

    private boolean reservedForAnother(Waiter w) {
        Waiter r = reservedFor;
        return r != null && r != w && System.nanoTime() - reservedAt < RESERVE_NANOS;
    }

    /**
     * The longest sleep for a waiter that is not the watcher: bounded while a selector holds
     * or reserves the watch (it may stay away), unbounded ({@link Long#MAX_VALUE}) otherwise.
     */
    long napNanosWhileNotWatching() {
        Waiter current = watcher.get();
        if (current == null && reservedFor != null) {
            return Math.max(0, RESERVE_NANOS - (System.nanoTime() - reservedAt));
        }
        return current != null && current.keepsWatch() ? NAP_NANOS_NEXT_TO_A_SELECTOR : Long.MAX_VALUE;
    }

    /**
     * A selector that stops watching (closed, or no connection keys left) gives up its
     * reservation: if nobody watches, one waiter is woken to take the watch.
     */
    void release(Waiter w) {
        if (reservedFor == w) {
            reservedFor = null;
            if (watcher.get() == null) {
                wakeOne(w);
            }
        }
    }

    boolean isWatcher(Waiter w) {
        return watcher.get() == w;
    }

    void leave(Waiter w) {
        synchronized (this) {
            AtomicReferenceArray<Waiter> a = slots;
            for (int i = 0; i < a.length(); i++) {
                if (a.get(i) == w) {
                    a.set(i, null);
                    count.decrementAndGet();
                    break;
                }
            }
        }
        if (watcher.get() == w && w.keepsWatch()) {
            reservedAt = System.nanoTime();
            reservedFor = w;
            watcher.compareAndSet(w, null);
            return;
        }
        if (watcher.get() == w && watcher.compareAndSet(w, null) || watcher.get() == null && !reservedForAnother(w)) {
            // hand the watch over: one remaining waiter looks again and takes it when it sleeps
            // again. If it is leaving instead, its own leave (watcher still null) passes it on,
            // so no waiter stays asleep with nobody watching. (It woke all of them once: tens
            // of threads queueing for the worker's lock on every hand-over.)
            wakeOne(w);
        }
    }

    /** Wakes one waiter other than {@code leaving}, if there is one. */
    private void wakeOne(Waiter leaving) {
        AtomicReferenceArray<Waiter> a = slots;
        for (int i = 0; i < a.length(); i++) {
            Waiter other = a.get(i);
            if (other != null && other != leaving) {
                other.wake();
                return;
            }
        }
    }

    boolean isEmpty() {
        return count.get() == 0;
    }

    /** Wakes every waiter (control events, close, interrupts). */
    void wakeAll() {
        AtomicReferenceArray<Waiter> a = slots;
        for (int i = 0; i < a.length(); i++) {
            Waiter w = a.get(i);
            if (w != null) {
                w.wake();
            }
        }
    }

    /**
     * Wakes every waiter but the calling thread's: after progress that handled events only
     * those that {@link Waiter#wantsWake want it} ({@code onlyWanting}), after a change they
     * cannot judge without looking all of them.
     */
    void wakeOthers(boolean onlyWanting) {
        Thread me = Thread.currentThread();
        Waiter selector = null;
        AtomicReferenceArray<Waiter> a = slots;
        for (int i = 0; i < a.length(); i++) {
            Waiter w = a.get(i);
            if (w != null && w.thread != me && (!onlyWanting || w.wantsWake())) {
                w.wake();
                if (selector == null && w.keepsWatch()) {
                    selector = w;
                }
            }
        }
        Waiter r = reservedFor;
        if (onlyWanting && selector != null && r != null && r.thread == me && watcher.get() == null) {
            // the events were for another selector: the watch follows them (rule 5), or the
            // selector that holds it would wake first and then wake the other for every message
            reservedAt = System.nanoTime();
            reservedFor = selector;
        }
    }
}
