package io.hadronio.ucx;

/** {@code ucp_err_handling_mode_t} of an endpoint. */
public enum ErrorMode {
    /**
     * No guarantees on peer failure. Lets UCX use every transport, including shared
     * memory on one host.
     */
    NONE(0),
    /**
     * Requests fail (and the error handler runs) when the peer dies, instead of UCX
     * aborting the process (what a {@code cma} transfer from a dead peer does in NONE).
     * In UCX 1.13 the shared-memory transports offer this only with
     * {@code MM_ERROR_HANDLING=y}, and {@code cma} only with
     * {@code UCX_CMA_MEMORY_INVALIDATE=y}; otherwise UCX falls back to TCP on one host.
     * {@link UcxContext.Builder#peerFailureDetection} sets both. Both ends must use the same
     * mode and settings ({@link UcxContext#endpointProfile}).
     */
    PEER(1);

    final int value;

    ErrorMode(int value) {
        this.value = value;
    }
}
