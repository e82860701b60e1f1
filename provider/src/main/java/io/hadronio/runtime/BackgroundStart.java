package io.hadronio.runtime;

import java.util.concurrent.Callable;

/**
 * Something made once, off the caller's thread: a daemon thread runs the maker and
 * publishes what it made, or that it failed. Readers ask without waiting ({@link #now}) or
 * wait for the outcome ({@link #await}). Why: what the runtime makes at start (the key, the
 * rendezvous, UCX's context and workers) costs a cold JVM hundreds of milliseconds, and none
 * of it needs to sit in front of the first {@code connect}, which starts on the kernel
 * anyway (docs/architecture.md, "Start").
 *
 * <p>The outcome is published once, through one volatile field; what the maker built is
 * visible to every thread that sees it. The thread is a daemon (it never holds the JVM from
 * exiting) and ends with the maker.
 *
 * @param <T> what is made
 */
final class BackgroundStart<T> {
    // the maker's result; null until it is done (and after it failed)
    private volatile T made;
    // why the maker failed; null until it did
    private volatile Throwable failure;
    // the maker ran to its end (made or failure is set); guarded by this for the waiters
    private boolean settled;

    private BackgroundStart() {
    }

    /** Starts {@code maker} on a new daemon thread named {@code threadName}. */
    static <T> BackgroundStart<T> begin(String threadName, Callable<T> maker) {
        BackgroundStart<T> s = new BackgroundStart<>();
        Thread t = new Thread(() -> s.run(maker), threadName);
        t.setDaemon(true);
        t.start();
        return s;
    }

    /** Runs {@code maker} on the caller's thread (a start that must not be left to the background). */
    static <T> BackgroundStart<T> inline(Callable<T> maker) {
        BackgroundStart<T> s = new BackgroundStart<>();
        s.run(maker);
        return s;
    }

    private void run(Callable<T> maker) {
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
        // the failure first: a reader that sees neither result nor failure is still waiting
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

    /** What was made, or null while it is being made and when that failed. One volatile read. */
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
     * What was made, waiting for the maker if it still runs; null when it failed. The wait is
     * not interruptible (it is a start, like a lock's): an interrupt stays set for the caller.
     */
    T await() {
        T m = made;
        if (m != null || failure != null) {
            return m;
        }
        boolean interrupted = false;
        synchronized (this) {
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
