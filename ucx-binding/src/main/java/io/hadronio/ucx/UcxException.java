package io.hadronio.ucx;

import java.io.IOException;

/**
 * A UCX call failed. Carries the {@code ucs_status_t} and names the call, with UCX's
 * own description of the status ({@code ucs_status_string}).
 */
public class UcxException extends IOException {
    private static final long serialVersionUID = 1L;

    // the ucs_status_t that the call returned
    private final int status;

    public UcxException(String operation, int status) {
        super(operation + ": " + Ucs.statusString(status) + " (" + status + ")");
        this.status = status;
    }

    /** A failure detected by the binding itself, reported with the status UCX would give. */
    public UcxException(String operation, int status, String detail) {
        super(operation + ": " + detail + " (" + status + ")");
        this.status = status;
    }

    public UcxException(String message) {
        super(message);
        this.status = UcsStatus.ERR_INVALID_PARAM;
    }

    /** The {@code ucs_status_t} value (negative). */
    public int status() {
        return status;
    }
}
