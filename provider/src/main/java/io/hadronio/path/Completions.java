package io.hadronio.path;

/**
 * How many of one connection's UCX requests the worker has reported completed, failed or
 * cancelled (its completion upcall names the connection's token, {@link Connection#completionSeen}).
 * A request a look found in progress cannot have ended while this count stands still: every
 * request the connection waits on (its slices' and its credit's receives, its data sends) is
 * posted with the token, and one that ends inside the call that posts it is returned as
 * completed. So a waiter's readiness look, which runs once or twice per turn of its spin,
 * skips the status downcall ({@code ucp_tag_recv_request_test}) until the count moved: the spin
 * is then one {@code ucp_worker_progress} per turn, as raw UCX's is.
 *
 * <p>Under the worker group's lock: the upcalls run inside a call into the worker, which holds it.
 */
final class Completions {
    // completions reported so far (a plain count: only moves under the lock)
    private long count;

    /** The worker reported one of the connection's requests ended. Under the lock. */
    void seen() {
        count++;
    }

    /** The count now; a look that found a request in progress notes it ({@link #since}). Under the lock. */
    long count() {
        return count;
    }

    /**
     * Whether any request ended since {@code mark}, a count noted when a look found a request
     * in progress ({@link #NEVER}: no such look, so the request must be asked). Under the lock.
     */
    boolean since(long mark) {
        return mark != count;
    }

    /** A mark that {@link #since} always answers true for: the request was not looked at yet. */
    static final long NEVER = -1;
}
