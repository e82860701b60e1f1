package io.hadronio.nio;

/** A hadroNIO channel as its selector sees it: readiness computed from UCX and control state. */
interface UcxSelectable {
    /**
     * The operations of {@code interestOps} that are ready now ({@code OP_READ} when a
     * read returns data, -1 or throws; {@code OP_WRITE} when a write takes bytes;
     * {@code OP_CONNECT} when finishConnect completes or throws; {@code OP_ACCEPT} when
     * accept returns a channel). Never blocks; may progress the worker.
     */
    int readyOps(int interestOps);

    /**
     * The fd whose readiness the selector must poll for this channel (a plain TCP
     * connection's socket), or -1 when {@link #readyOps} tells everything.
     */
    default int pollFd() {
        return -1;
    }
}
