package io.hadronio.worker;

/**
 * What a {@link WorkerGroup} tells and asks a connection that uses its worker: the completions
 * of the requests it posts with its token ({@link WorkerGroup#attach}), and, as a user of a
 * shared endpoint to a peer worker ({@link WorkerGroup#endpointTo}), that peer's failure and
 * whether its control connection ended. Every call is under the group's lock; the first two are
 * upcalls from inside a progress, which may not call into the worker.
 */
public interface WorkerUser {
    /** One of its receives or data sends completed, failed or was cancelled. */
    void completionSeen();

    /** UCX reports that the peer failed ({@code status}: a ucs_status_t). */
    void onPeerFailure(int status);

    /** True once its control connection ended without a close (see {@link WorkerGroup#peerMayBeDead}). */
    boolean controlLost();
}
