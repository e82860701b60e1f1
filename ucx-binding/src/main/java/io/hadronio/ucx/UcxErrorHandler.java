package io.hadronio.ucx;

/**
 * Called from {@link UcxWorker#progress()} when an endpoint created in
 * {@link ErrorMode#PEER} fails. Runs on the progressing thread, inside a native
 * upcall: it must not throw (exceptions are caught and logged) and must not call
 * into the same worker.
 */
@FunctionalInterface
public interface UcxErrorHandler {
    void onError(UcxEndpoint endpoint, int status);
}
