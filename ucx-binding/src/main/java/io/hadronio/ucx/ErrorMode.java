package io.hadronio.ucx;

/** {@code ucp_err_handling_mode_t} of an endpoint. */
public enum ErrorMode {
    /**
     * No guarantees on peer failure. Lets UCX use every transport, including shared
     * memory on one host.
     */
    NONE(0),
    /**
     * Requests fail (and the error handler runs) when the peer dies. In UCX 1.13 the
     * shared-memory transports offer this only with {@code MM_ERROR_HANDLING=y} in the
     * context configuration; otherwise UCX falls back to TCP on one host.
     */
    PEER(1);

    final int value;

    ErrorMode(int value) {
        this.value = value;
    }
}
