package io.hadronio.worker;

import io.hadronio.platform.CarrierCompensation;

/**
 * The spin of an adaptive waiter ({@code hadronio.polling}) before it sleeps: blocking reads and
 * writes ({@link WorkerGroup}), the selector and a blocking accept all wait this way. The
 * waiter {@linkplain #start starts} a wait, looks, and after each look that found nothing asks
 * for a {@linkplain #turn turn}; when a turn says no, it sleeps. Every wait ends with
 * {@link #stop} (in a {@code finally}).
 *
 * <p>A turn is a CPU pause for the first {@link #SPIN_BEFORE_YIELD_NANOS}, then (with
 * {@code hadronio.polling.yield}) a yield of the core, which hands it to any thread waiting for
 * it. The spin ends when its window is over ({@link Long#MAX_VALUE}: busy polling, never), or,
 * past those first microseconds, while a recent yield lost the core for long ({@link #held}).
 *
 * <p>How crowded the whole machine is does not end a spin. A waiter once stopped spinning
 * whenever more threads were runnable than the machine has cores ({@code /proc/loadavg}); that
 * count includes the waiter itself, the threads it is about to hand work to, and the peer
 * process's own spinning waiters, so on a 2-core machine it said crowded at almost every wait,
 * and every hand-off slept and paid a wake-up, as on the JDK. Unpinned, with that check and
 * without it (docs/benchmarks/patterns.md): a framework's request/response through an I/O thread
 * 1.01x and 2.10x the JDK's round trips, with the server handing requests to an application thread
 * 0.95x and 1.42x, bulk echo 0.68x and 1.43x; gRPC's sequential calls 1.26x and 2.12x, Jetty's
 * 1.03x and 1.97x, JGroups' RPCs 1.01x and 1.34x, with the requests in flight unchanged
 * (docs/benchmarks/apps.md). A yield already gives the core to a thread that wants it.
 *
 * <p>A virtual thread spins too, but its carrier is what the other virtual threads of its
 * scheduler need (a JVM pinned to one core has one). Past its first microseconds its spin is
 * bracketed as a blocking call ({@link CarrierCompensation#beginSpin}), so the scheduler runs
 * the others on a carrier it adds, and it yields the core, not the carrier
 * ({@link CarrierCompensation#yieldCore}). The bracket ends with the turn that ends the spin
 * (the sleep that follows may park, which a thread in the bracket must not). A virtual thread
 * that gets no bracket (one per core spins at a time) stops spinning there. JGroups, whose
 * selector loop and handlers are virtual threads, made 5,400-5,600 sequential RPCs/s spinning
 * on the carrier, 6,800 not spinning (the JDK's 6,600), and 16,000-17,000 bracketed
 * (docs/benchmarks/apps.md).
 *
 * <p>Not thread-safe: each waiter uses its own, wait after wait (a selector's, an accepting
 * channel's, each blocked thread's), and nothing here allocates.
 */
public final class AdaptiveSpin {
    /**
     * How long an adaptive waiter spins with CPU pauses before it starts yielding.
     * Short: a thread that spins on a core its own process needs costs at once - Jetty's server
     * hands the selector to a reserved thread while the previous selecting thread serves the
     * request on the same core, and every microsecond the new selector spins is taken from that
     * request (sequential requests at 0.88x the JDK's with 10 us, 0.94x with 2 us, 1.04x without
     * spinning; docs/benchmarks/apps.md). A blocking ping-pong's answer (~1 us) comes sooner.
     */
    public static final long SPIN_BEFORE_YIELD_NANOS = 2_000;

    /**
     * A yield that took this long gave the core to a thread that computed on it for a whole
     * time slice (the JIT compiler or the GC of a young JVM, another process), not to one that
     * took a request and went back to sleep: nothing wakes a yielded thread when its data comes,
     * so while that thread wants the core, each further yield costs a slice (4 ms here, with
     * 0.1 ms of the waiter's in between: a load client's core made 1 pass of its loop per 4 ms
     * while its JIT compiled). A millisecond, not less: Jetty's server threads, handed requests
     * by a yield, often keep the core for longer than 250 us, and holding the yields off there
     * cost 16 requests in flight 15-20 % of their rate (docs/architecture.md "The wait strategy").
     */
    static final long SLOW_YIELD_NANOS = 1_000_000;
    /** How long a slow yield holds the yields off at first; it doubles up to {@link #MAX_HOLD_NANOS} while they stay slow. */
    static final long MIN_HOLD_NANOS = 8_000_000;
    static final long MAX_HOLD_NANOS = 1_000_000_000;

    /** Refusals to arm in a row that a waiter always looks at again at once ({@link #napAfterRefusal}). */
    static final int REFUSALS_BEFORE_NAP = 2;
    static final long MIN_REFUSAL_NAP_NANOS = 16_000;
    static final long MAX_REFUSAL_NAP_NANOS = 1_000_000;

    // the busy window (Long.MAX_VALUE: busy polling; 0: none, hadronio.polling=event)
    private final long windowNanos;
    // hadronio.polling.yield: yield the core after the first microseconds
    private final boolean yields;
    // this wait's start and the end of its window
    private long start;
    private long until;
    // this wait's spin is in a CarrierCompensation.beginSpin bracket
    private boolean compensated;
    // UCX's refusals to arm in a row with nothing come in, and when the first came (napAfterRefusal)
    private int refusals;
    private long refusedSince;
    // the core is contended until then (a yield lost it for long): waits sleep past their pauses
    private long contendedUntil;
    private boolean contended;
    // how long the next slow yield holds the yields off (doubles while they stay slow)
    private long holdNanos = MIN_HOLD_NANOS;

    public AdaptiveSpin(long windowNanos, boolean yields) {
        this.windowNanos = windowNanos;
        this.yields = yields;
    }

    /** False when this waiter never spins ({@code hadronio.polling=event}): it may sleep at once. */
    public boolean spins() {
        return windowNanos != 0;
    }

    /** A wait begins at {@code now} ({@link System#nanoTime()}). */
    public void start(long now) {
        start = now;
        until = windowNanos == Long.MAX_VALUE ? Long.MAX_VALUE : now + windowNanos;
    }

    /**
     * After a look that found nothing, at {@code now}: true when this took one more turn of the
     * spin and the waiter should look again; false when it should sleep (the window is over,
     * the core is held ({@link #held}), or a virtual thread got no bracket). It stays false for the rest
     * of the wait once the window is over.
     */
    public boolean turn(long now) {
        long spun = now - start;
        boolean windowOver = until != Long.MAX_VALUE && now - until >= 0;
        if (!compensated && !windowOver && spun >= SPIN_BEFORE_YIELD_NANOS
                && Thread.currentThread().isVirtual()) {
            compensated = CarrierCompensation.beginSpin();
        }
        if (until != Long.MAX_VALUE && (windowOver || spun >= SPIN_BEFORE_YIELD_NANOS
                && (!compensated && Thread.currentThread().isVirtual() || yields && held(now)))) {
            stop();
            return false;
        }
        pause(spun, now);
        return true;
    }

    /**
     * True while the core is contended: a recent yield lost it for long ({@link #SLOW_YIELD_NANOS}).
     * A waiter then sleeps past its first pauses, as the JDK's selector does: the arrival of its
     * data wakes it, and the kernel gives a woken thread its share of the core, which it does not
     * give back to a thread that yields. When the hold is over the next wait yields again: fast,
     * and the core is free (the hold starts short again); slow, and the hold doubles.
     */
    boolean held(long now) {
        if (contended && now - contendedUntil >= 0) {
            contended = false;
        }
        return contended;
    }

    /**
     * UCX refused to arm the worker at {@code now} although nothing came in
     * ({@link WorkerGroup#REFUSED}); returns how long to nap before looking again, 0 to look
     * again at once. Mostly a refusal is a race (a message or a wake-up signal came just
     * before), which the next look settles; a refusal that goes on is a send of ours that waits
     * in UCX for the peer to make room (shared memory refuses to arm while its pending queue is
     * not empty), and nothing signals when it goes. Looking again at once for as long as that
     * lasts would burn the waiter's core (regression: WaitBehindAFullPeerTest). So the waiter
     * looks again at once for the first {@link #REFUSALS_BEFORE_NAP} refusals in a row and for
     * its window, as it would spin for an event (never napping when busy polling); then it naps
     * half the time refused so far, from {@link #MIN_REFUSAL_NAP_NANOS} to
     * {@link #MAX_REFUSAL_NAP_NANOS}.
     */
    public long napAfterRefusal(long now) {
        if (refusals++ == 0) {
            refusedSince = now;
        }
        long refused = now - refusedSince;
        if (refusals <= REFUSALS_BEFORE_NAP || refused < windowNanos) {
            return 0;
        }
        return Math.min(MAX_REFUSAL_NAP_NANOS, Math.max(MIN_REFUSAL_NAP_NANOS, refused / 2));
    }

    /** UCX armed the worker, or events came in: a run of refusals ends ({@link #napAfterRefusal}). */
    public void clearRefusals() {
        refusals = 0;
    }

    /** Ends the wait's bracket, if it has one: before the waiter returns, however it returns. */
    public void stop() {
        if (compensated) {
            compensated = false;
            CarrierCompensation.endSpin(true);
        }
    }

    /**
     * One turn. For its first {@link #SPIN_BEFORE_YIELD_NANOS} a CPU pause; after that
     * (with {@code hadronio.polling.yield}) a yield, which hands the core to any thread waiting
     * for this very core and returns at once when none is. It sees the core, which is what a
     * process with more busy threads than cores needs: JGroups' receiver handing a request to a pool thread on the same core,
     * or Jetty's selector handing its request over, waited for the spinning thread's whole time
     * slice (milliseconds with EEVDF, which lets a running task finish its slice before a woken
     * one) - sequential JGroups RPCs at 0.48x the JDK's spinning, 0.94x yielding; Jetty's
     * sequential requests 0.74x and 1.58x (docs/benchmarks/apps.md). A yield costs a system call
     * (~0.3 us here) when nobody waits, and a ping-pong's answer usually comes before the first
     * one. A bracketed virtual thread yields the core itself: {@code Thread.yield()} would hand
     * over only its carrier.
     */
    private void pause(long spun, long now) {
        if (yields && spun >= SPIN_BEFORE_YIELD_NANOS) {
            long before = System.nanoTime();
            if (compensated) {
                CarrierCompensation.yieldCore();
            } else {
                Thread.yield();
            }
            yielded(now, System.nanoTime() - before);
        } else {
            Thread.onSpinWait();
        }
    }

    /**
     * A yield at {@code now} took {@code took}: a slow one starts a hold of the yields
     * ({@link #held}); a fast one means the core is free again, and the next hold starts short.
     */
    void yielded(long now, long took) {
        if (took >= SLOW_YIELD_NANOS) {
            contended = true;
            contendedUntil = now + took + holdNanos;
            holdNanos = Math.min(MAX_HOLD_NANOS, 2 * holdNanos);
        } else if (holdNanos != MIN_HOLD_NANOS) {
            holdNanos = MIN_HOLD_NANOS;
        }
    }

    /** How long the next slow yield holds the yields off (tests). */
    long holdNanos() {
        return holdNanos;
    }
}
