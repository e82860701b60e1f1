package io.hadronio.worker;

/**
 * What a thread that waits on a {@link WorkerGroup} waits for ({@link WorkerGroup#await}): asked
 * under the group's lock, by the waiting thread and by the threads that may wake it.
 */
public interface Readiness {
    /** {@code op}: bytes to read, end-of-stream or a reset. */
    int OP_READ = 1;
    /** {@code op}: room to write, the peer's close or a reset. */
    int OP_WRITE = 4;

    /** Whether {@code op} is ready; may post, poll and release requests. */
    boolean isReady(int op);

    /**
     * False only when {@code op} is surely not ready: a cheap look without side effects,
     * by another thread that holds the group's lock (see {@link Waiters.Waiter#wantsWake}).
     */
    default boolean mayBeReady(int op) {
        return true;
    }
}
