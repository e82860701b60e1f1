package io.hadronio.nio;

import io.hadronio.platform.PollSet;
import java.nio.channels.SelectionKey;

/** A hadroNIO channel as its selector sees it: readiness computed from UCX and control state. */
interface UcxSelectable {
    /**
     * The operations of {@code interestOps} that are ready now ({@code OP_READ} when a
     * read returns data, -1 or throws; {@code OP_WRITE} when a write takes bytes;
     * {@code OP_CONNECT} when finishConnect completes or throws; {@code OP_ACCEPT} when
     * accept returns a channel). Never blocks; may progress the worker.
     */
    int readyOps(int interestOps);

    /** The channel's selection keys, which it queues with their selectors when its readiness may have changed. */
    ReadySignal readySignal();

    /**
     * True for a connection, whose readiness comes from a UCX worker: a selector that holds a key
     * of one watches the workers (one without any neither progresses nor watches them).
     */
    default boolean isConnection() {
        return false;
    }

    /**
     * True once every change of {@link #readyOps} from "not ready" to "ready" is signalled
     * through {@link #readySignal()} (and stays so): then a selector asks the channel only
     * when it was signalled, was ready at the last look, or its interest changed. False
     * while the channel has an fd to poll ({@link #pollFd()}) or may get one: a selector
     * asks it on every pass.
     */
    default boolean signalsReadiness() {
        return false;
    }

    /**
     * The fd whose readiness the selector must poll for this channel (a plain TCP
     * connection's socket), or -1 when {@link #readyOps} tells everything.
     */
    default int pollFd() {
        return -1;
    }

    /**
     * False when {@link #pollFd()} need not be polled on every pass of a selection that
     * spins (a listener: a connection that arrives may wait until the selection sleeps).
     */
    default boolean pollWhileSpinning() {
        return true;
    }

    /**
     * The operations of {@code interestOps} that are ready after {@code poll(2)} reported
     * {@code revents} for {@link #pollFd()}. The default reads them off the events, as
     * for any socket; a channel whose fd only says "look" does its own looking.
     */
    default int readyOpsAfterPoll(int interestOps, int revents) {
        return opsFromPoll(interestOps, revents);
    }

    /** What {@code poll(2)}'s {@code revents} mean for a socket's interest ops (any channel's fd). */
    static int opsFromPoll(int interestOps, int revents) {
        int ops = 0;
        if ((revents & (PollSet.POLLERR | PollSet.POLLHUP | PollSet.POLLNVAL)) != 0) {
            ops = interestOps;
        }
        if ((revents & PollSet.POLLIN) != 0) {
            ops |= interestOps & (SelectionKey.OP_READ | SelectionKey.OP_ACCEPT);
        }
        if ((revents & PollSet.POLLOUT) != 0) {
            ops |= interestOps & (SelectionKey.OP_WRITE | SelectionKey.OP_CONNECT);
        }
        return ops;
    }
}
