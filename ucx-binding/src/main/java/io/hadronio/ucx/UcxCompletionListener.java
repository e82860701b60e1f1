package io.hadronio.ucx;

/**
 * Told, from inside a native upcall, that a request posted with a token
 * ({@link UcxWorker#tagReceive(long, long, long, long, int)},
 * {@link UcxEndpoint#tagSend(long, long, long, int)}) completed, was cancelled or failed.
 * One per worker ({@link UcxWorker#completionListener}); it learns only the token, so
 * that a caller can tell which of its objects had an event without asking all of them.
 *
 * <p>It runs inside whatever downcall completed the request (progress, a receive that
 * found its message already there on UCX before 1.16, a cancel), on that thread, with
 * the worker's serialisation held: it must not call into the worker, block, or throw,
 * and it should allocate nothing. A request that completes inside the call that posted
 * it on UCX 1.16 and later returns {@link UcxWorker#COMPLETED} instead and is not
 * reported. The caller still polls and releases every request.
 */
@FunctionalInterface
public interface UcxCompletionListener {
    /** @param token what the request was posted with */
    void completed(int token);
}
