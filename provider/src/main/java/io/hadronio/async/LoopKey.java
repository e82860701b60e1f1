package io.hadronio.async;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;

/**
 * An asynchronous channel's place in its group: the loop it belongs to for its life, and its
 * non-blocking NIO channel's key in that loop's selector. Interest is lazy: an op is added when
 * an operation must wait for it, and taken away only when the loop found it ready with nothing
 * waiting, so that a channel whose operations usually complete at once changes nothing.
 */
final class LoopKey {
    /** The loop that finishes the channel's operations and runs its handlers. */
    final EventLoop loop;
    private final SelectionKey key;

    private LoopKey(EventLoop loop, SelectionKey key) {
        this.loop = loop;
        this.key = key;
    }

    /**
     * Counts {@code owner} among {@code group}'s open channels and registers {@code channel},
     * non-blocking from now on, with the group's next loop, {@code member} its attachment. If any
     * step fails, {@code channel} is closed and the count undone.
     */
    static LoopKey register(HadronioAsynchronousChannelGroup group, SelectableChannel channel, EventLoop.Member member,
            Closeable owner) throws IOException {
        try {
            group.opened(owner);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        try {
            channel.configureBlocking(false);
            EventLoop loop = group.nextLoop();
            return new LoopKey(loop, channel.register(loop.selector(), 0, member));
        } catch (IOException | RuntimeException e) {
            channel.close();
            group.closed(owner);
            throw e;
        }
    }

    /** Adds {@code op} to the interest set unless it is there (lazy interest: usually it is). */
    void arm(int op) {
        try {
            if ((key.interestOps() & op) == 0) {
                key.interestOpsOr(op);
            }
        } catch (CancelledKeyException e) {
            // closed meanwhile: the close fails the operation
        }
    }

    /** Takes {@code op} out of the interest set if it is there. */
    void disarm(int op) {
        try {
            if ((key.interestOps() & op) != 0) {
                key.interestOpsAnd(~op);
            }
        } catch (CancelledKeyException e) {
            // closed
        }
    }
}
