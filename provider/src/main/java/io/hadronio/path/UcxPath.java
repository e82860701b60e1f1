package io.hadronio.path;

import io.hadronio.path.Connection;
import io.hadronio.connection.ConnectionLifecycle;
import java.io.IOException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;

/**
 * A direction on UCX: the connection's {@link Connection} (receive slices, send slots,
 * credits) in the channel's blocking mode. A blocking call waits on the connection's worker
 * ({@link Connection#await}) inside the channel's {@code begin}/{@code end} brackets, so that an
 * interrupt or a close from another thread ends it. A call that a close overtook returns the
 * bytes it moved, if any, and throws {@link AsynchronousCloseException} if none, as the JDK's
 * socket channel does (its {@code end(n > 0)}): a blocking write closed half-way returns what it
 * wrote, and the buffer's position says the same.
 */
public final class UcxPath implements DataPath {
    private final ConnectionLifecycle life;
    private final ChannelIo io;

    public UcxPath(ConnectionLifecycle life, ChannelIo io) {
        this.life = life;
        this.io = io;
    }

    /**
     * A blocking call that completes at once (bytes or the end there, all bytes taken) runs
     * without the {@code begin}/{@code end} brackets: they register the thread with the channel
     * for an interrupt (a monitor enter in each, and the interrupt status read again), and a
     * call that does not wait needs none. An interrupt that comes during it then finds the call
     * over, as one that comes right after it would; a thread interrupted before it takes the
     * bracketed way, whose {@code begin} closes the channel. A call that must wait starts the
     * bracketed way, and only the wait and what follows it are inside.
     */
    @Override
    public long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        Connection c = (Connection) life.connection();
        if (life.isInputShut()) {
            return -1;
        }
        if (!io.isBlocking()) {
            long n = 0;
            try {
                return n = c.read(dsts, offset, length);
            } finally {
                if (n <= 0 && !io.isOpen()) {
                    throw new AsynchronousCloseException();
                }
            }
        }
        if (!Thread.currentThread().isInterrupted()) {
            long n = c.read(dsts, offset, length);
            if (n != 0) {
                return n;
            }
        }
        return readWaiting(c, dsts, offset, length, timeoutMillis);
    }

    /** A blocking read that found nothing (or whose thread was interrupted): it waits inside the brackets. */
    private long readWaiting(Connection c, ByteBuffer[] dsts, int offset, int length, int timeoutMillis)
            throws IOException {
        long n = 0;
        try {
            io.begin();
            n = c.read(dsts, offset, length);
            if (n == 0) {
                long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
                while (n == 0 && io.isOpen() && !life.isInputShut() && Connection.hasRemaining(dsts, offset, length)) {
                    if (!c.await(Connection.OP_READ, deadline)) {
                        throw new SocketTimeoutException("Read timed out");
                    }
                    if (!io.isOpen()) {
                        break;
                    }
                    n = c.read(dsts, offset, length);
                }
                if (n == 0 && life.isInputShut()) {
                    n = -1;
                }
            }
            return n;
        } finally {
            io.end(n > 0);
        }
    }

    /** See {@link #read}: a blocking write that took every byte at once ran without the brackets. */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Connection c = (Connection) life.connection();
        if (life.isOutputShut()) {
            throw new ClosedChannelException();
        }
        if (!io.isBlocking()) {
            long n = 0;
            try {
                return n = c.write(srcs, offset, length, true);
            } finally {
                if (n <= 0 && !io.isOpen()) {
                    throw new AsynchronousCloseException();
                }
            }
        }
        if (Thread.currentThread().isInterrupted()) {
            return writeWaiting(c, srcs, offset, length, 0, true);
        }
        long total = c.write(srcs, offset, length, false);
        if (!Connection.hasRemaining(srcs, offset, length)) {
            return total;
        }
        return writeWaiting(c, srcs, offset, length, total, false);
    }

    /**
     * A blocking write that could not take every byte at once (or whose thread was interrupted:
     * {@code first}, nothing written yet): it waits for credits inside the brackets.
     */
    private long writeWaiting(Connection c, ByteBuffer[] srcs, int offset, int length, long taken, boolean first)
            throws IOException {
        long total = taken;
        try {
            io.begin();
            if (first) {
                total += c.write(srcs, offset, length, false);
            }
            while (io.isOpen() && Connection.hasRemaining(srcs, offset, length)) {
                c.await(Connection.OP_WRITE, Long.MAX_VALUE);
                if (!io.isOpen()) {
                    break;
                }
                total += c.write(srcs, offset, length, false);
            }
            return total;
        } finally {
            io.end(total > 0);
        }
    }
}
