package io.hadronio.path;

import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxWorker;

/** UCX request handles as a connection keeps them in its slots. Every call is under the worker group's lock. */
final class Requests {
    // no request in a slot (0 is UcxWorker.COMPLETED, a valid "done" handle)
    static final long NONE = -1;

    private Requests() {
    }

    /** Whether {@code request} (a send, or {@link #NONE}) has completed. Only looks: no release. */
    static boolean done(UcxWorker worker, long request) {
        return request == NONE || worker.status(request) != UcsStatus.INPROGRESS;
    }

    /** Whether a send among {@code requests} has not completed. Only looks. */
    static boolean anyInFlight(UcxWorker worker, long[] requests) {
        for (long request : requests) {
            if (!done(worker, request)) {
                return true;
            }
        }
        return false;
    }
}
