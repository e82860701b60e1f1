package io.hadronio.ucx;

/**
 * Optional completion callback for send and tag-receive requests, run from
 * {@link UcxWorker#progress()} inside a native upcall. The hot path of the binding
 * polls {@link UcxWorker#status(long)} instead and needs no callback.
 *
 * <p>A request that completes inside the call that posted it returns
 * {@link UcxWorker#COMPLETED} and does not run the callback. The request still
 * belongs to the caller, who releases it with {@link UcxWorker#release(long)}.
 */
@FunctionalInterface
public interface UcxCallback {
    /**
     * @param request the request handle, as returned by the posting call
     * @param status  {@link UcsStatus#OK} or an error such as {@link UcsStatus#ERR_CANCELED}
     * @param tag     for tag receives the sender's tag, else 0
     * @param length  for tag receives the received length, else 0
     */
    void onComplete(long request, int status, long tag, long length);
}
