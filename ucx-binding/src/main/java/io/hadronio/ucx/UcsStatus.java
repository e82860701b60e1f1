package io.hadronio.ucx;

import java.lang.foreign.ValueLayout;

/**
 * Values of UCX's {@code ucs_status_t} (a one-byte enum in C, an {@code int} here) and of the status pointers
 * ({@code ucs_status_ptr_t}) that the non-blocking {@code *_nbx} calls return.
 *
 * <p>A status pointer is one of three things: {@code NULL} (completed at once),
 * an error code cast to a pointer (the values -1 .. -100, i.e. unsigned values
 * at or above {@code (uintptr_t) UCS_ERR_LAST}), or a request handle.
 */
public final class UcsStatus {
    /**
     * {@code ucs_status_t} in function signatures: a packed enum of one byte
     * ({@code sizeof} 1, checked by UcpStructsLayoutTest). Only the low byte of a return
     * register holding one is defined, so it must not be read as an {@code int}:
     * {@code ucp_request_check_status} returns {@code UCS_ERR_CANCELED} (-16) as 240 that
     * way. The binding's downcalls and upcalls carry it in a 64-bit word ({@link WordCalls}) and
     * keep its low byte, widened with its sign.
     */
    static final ValueLayout.OfByte LAYOUT = ValueLayout.JAVA_BYTE;

    public static final int OK = 0;
    public static final int INPROGRESS = 1;
    public static final int ERR_NO_MESSAGE = -1;
    public static final int ERR_NO_RESOURCE = -2;
    public static final int ERR_IO_ERROR = -3;
    public static final int ERR_NO_MEMORY = -4;
    public static final int ERR_INVALID_PARAM = -5;
    public static final int ERR_UNREACHABLE = -6;
    public static final int ERR_INVALID_ADDR = -7;
    public static final int ERR_NOT_IMPLEMENTED = -8;
    public static final int ERR_MESSAGE_TRUNCATED = -9;
    public static final int ERR_NO_PROGRESS = -10;
    public static final int ERR_BUFFER_TOO_SMALL = -11;
    public static final int ERR_NO_ELEM = -12;
    public static final int ERR_SOME_CONNECTS_FAILED = -13;
    public static final int ERR_NO_DEVICE = -14;
    public static final int ERR_BUSY = -15;
    public static final int ERR_CANCELED = -16;
    public static final int ERR_SHMEM_SEGMENT = -17;
    public static final int ERR_ALREADY_EXISTS = -18;
    public static final int ERR_OUT_OF_RANGE = -19;
    public static final int ERR_TIMED_OUT = -20;
    public static final int ERR_EXCEEDS_LIMIT = -21;
    public static final int ERR_UNSUPPORTED = -22;
    public static final int ERR_REJECTED = -23;
    public static final int ERR_NOT_CONNECTED = -24;
    public static final int ERR_CONNECTION_RESET = -25;
    public static final int ERR_ENDPOINT_TIMEOUT = -80;
    /** {@code UCS_ERR_LAST}: status pointers at or above this (unsigned) are errors. */
    public static final int ERR_LAST = -100;

    private UcsStatus() {
    }

    /** {@code UCS_PTR_IS_ERR}: an unsigned comparison against {@code (uintptr_t) UCS_ERR_LAST}. */
    public static boolean isErrorPointer(long statusPtr) {
        return Long.compareUnsigned(statusPtr, ERR_LAST) >= 0;
    }

    /** {@code UCS_PTR_IS_PTR}: neither NULL nor an error code, so a request handle. */
    public static boolean isRequestPointer(long statusPtr) {
        return statusPtr != 0 && !isErrorPointer(statusPtr);
    }

    /** True for every negative status (an error), false for OK and INPROGRESS. */
    public static boolean isError(int status) {
        return status < 0;
    }

    /** UCX's own text for a status, from {@code ucs_status_string}. */
    public static String describe(int status) {
        return Ucs.statusString(status);
    }
}
