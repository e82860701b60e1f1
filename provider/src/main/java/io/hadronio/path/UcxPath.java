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
 * interrupt or a close from another thread ends it; a non-blocking one that a close overtook
 * throws {@link AsynchronousCloseException}, as the JDK's channels do.
 */
public final class UcxPath implements DataPath {
    private final ConnectionLifecycle life;
    private final ChannelIo io;

    public UcxPath(ConnectionLifecycle life, ChannelIo io) {
        this.life = life;
        this.io = io;
    }

    @Override
    public long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        Connection c = (Connection) life.connection();
        if (life.isInputShut()) {
            return -1;
        }
        boolean blocking = io.isBlocking();
        long n = 0;
        try {
            if (blocking) {
                io.begin();
            }
            n = c.read(dsts, offset, length);
            if (n == 0 && blocking) {
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
            if (blocking) {
                io.end(n != 0);
            } else if (!io.isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }

    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        Connection c = (Connection) life.connection();
        if (life.isOutputShut()) {
            throw new ClosedChannelException();
        }
        boolean blocking = io.isBlocking();
        long total = 0;
        boolean completed = false;
        try {
            if (blocking) {
                io.begin();
            }
            total = c.write(srcs, offset, length, !blocking);
            if (blocking) {
                while (io.isOpen() && Connection.hasRemaining(srcs, offset, length)) {
                    c.await(Connection.OP_WRITE, Long.MAX_VALUE);
                    if (!io.isOpen()) {
                        break;
                    }
                    total += c.write(srcs, offset, length, false);
                }
            }
            completed = !Connection.hasRemaining(srcs, offset, length) || !blocking;
            return total;
        } finally {
            if (blocking) {
                io.end(completed);
            } else if (!io.isOpen()) {
                throw new AsynchronousCloseException();
            }
        }
    }
}
