package io.hadronio.ucx;

/** {@code ucs_thread_mode_t}: which threads may call into a worker. */
public enum ThreadMode {
    /** Only the creating thread calls the worker. */
    SINGLE(0),
    /** Several threads, one at a time (the caller serialises, e.g. with a lock). */
    SERIALIZED(1),
    /** Several threads concurrently; UCX takes its own locks. */
    MULTI(2);

    final int value;

    ThreadMode(int value) {
        this.value = value;
    }
}
