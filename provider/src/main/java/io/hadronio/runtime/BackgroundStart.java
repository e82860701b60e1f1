package io.hadronio.runtime;

import java.util.concurrent.Callable;

/**
 * Something made once, off the caller's thread: a daemon thread runs the maker and
 * publishes what it made, or that it failed. Readers ask without waiting ({@link #now}) or
 * wait for the outcome ({@link #await}). Why: what the runtime makes at start (the key, the
 * rendezvous, UCX's context and workers) costs a cold JVM hundreds of milliseconds of CPU, and
 * none of it needs to sit in front of the first {@code connect}, which starts on the kernel
 * anyway (docs/architecture.md, "Start").
 *
 * <p>When: at once when something needs it ({@link #request}, {@link #await}); otherwise once
 * the JVM's connects have paused for {@code quietNanos} ({@link #activity} marks each), and at
 * the latest {@code latestNanos} after the start was made. Why not at once: on a loaded machine,
 * or a process pinned to one core, the maker's CPU time is taken from the threads that connect,
 * and a JVM's first connections often come in a burst (a pool filling, a client's first
 * requests) that needs nothing of it; a connection that wants UCX requests it.
 *
 * <p>The outcome is published once, through one volatile field; what the maker built is
 * visible to every thread that sees it. The thread is a daemon (it never holds the JVM from
 * exiting) and ends with the maker.
 *
 * @param <T> what is made
 */
final class BackgroundStart<T> {
    private final Callable<T> maker;
    private final long quietNanos;
    // System.nanoTime() after which the maker runs even while connects go on
    private final long latest;
    // the maker's result; null until it is done (and after it failed)
    private volatile T made;
    // why the maker failed; null until it did
    private volatile Throwable failure;
    // System.nanoTime() of the last connect (activity); the maker waits for a pause after it
    private volatile long lastActivity;
    // guarded by this: something needs the outcome now; the maker ran to its end
    private boolean requested;
    private boolean settled;

    private BackgroundStart(Callable<T> maker, long quietNanos, long latestNanos) {
        this.maker = maker;
        this.quietNanos = quietNanos;
        long now = System.nanoTime();
        this.latest = now + latestNanos;
        this.lastActivity = now;
    }

    /**
     * Starts a daemon thread named {@code threadName} that runs {@code maker} once it is
     * requested, or once connects paused for {@code quietNanos}, at the latest after
     * {@code latestNanos}.
     */
    static <T> BackgroundStart<T> begin(String threadName, long quietNanos, long latestNanos, Callable<T> maker) {
        BackgroundStart<T> s = new BackgroundStart<>(maker, quietNanos, latestNanos);
        Thread t = new Thread(s::runWhenDue, threadName);
        t.setDaemon(true);
        t.start();
        return s;
    }

    /** Runs {@code maker} on the caller's thread (a start that must not be left to the background). */
    static <T> BackgroundStart<T> inline(Callable<T> maker) {
        BackgroundStart<T> s = new BackgroundStart<>(maker, 0, 0);
        s.run();
        return s;
    }

    private void runWhenDue() {
        synchronized (this) {
            while (!requested) {
                long now = System.nanoTime();
                long due = Math.min(lastActivity + quietNanos, latest);
                if (now - due >= 0) {
                    break;
                }
                try {
                    long left = due - now;
                    wait(left / 1_000_000, (int) (left % 1_000_000));
                } catch (InterruptedException e) {
                    // nobody interrupts this thread: run
                    break;
                }
            }
        }
        run();
    }

    private void run() {
        T result = null;
        Throwable why = null;
        try {
            result = maker.call();
            if (result == null) {
                why = new IllegalStateException("nothing was made");
            }
        } catch (Throwable t) {
            why = t;
        }
        if (why != null) {
            failure = why;
        } else {
            made = result;
        }
        synchronized (this) {
            settled = true;
            notifyAll();
        }
    }

    /** A connect: the maker waits for a pause in them (any thread; one volatile write). */
    void activity() {
        lastActivity = System.nanoTime();
    }

    /** Something needs the outcome: the maker runs now if it has not (no wait). */
    void request() {
        if (made != null || failure != null) {
            return;
        }
        synchronized (this) {
            requested = true;
            notifyAll();
        }
    }

    /** What was made, or null while it is being made (or not yet) and when that failed. One volatile read. */
    T now() {
        return made;
    }

    /** True once the maker failed (it made nothing, and never will). */
    boolean failed() {
        return failure != null;
    }

    /** Why the maker failed; null unless it did. */
    Throwable failure() {
        return failure;
    }

    /**
     * What was made, requesting it and waiting for the maker if it still runs; null when it
     * failed. The wait is not interruptible (it is a start, like a lock's): an interrupt stays
     * set for the caller.
     */
    T await() {
        T m = made;
        if (m != null || failure != null) {
            return m;
        }
        boolean interrupted = false;
        synchronized (this) {
            requested = true;
            notifyAll();
            while (!settled) {
                try {
                    wait();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
        return made;
    }
}
