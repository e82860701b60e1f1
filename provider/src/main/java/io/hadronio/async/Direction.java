package io.hadronio.async;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ReadPendingException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.WritePendingException;

/**
 * One direction of a {@link HadronioAsynchronousSocketChannel}, reads or writes: the operation
 * that is pending in it, if one is, and what the direction still allows (the JDK's
 * {@code reading}, {@code readKilled}, {@code readShutdown} and the operation's fields, once
 * per direction). Its monitor is the direction's lock (the JDK's {@code readLock} or
 * {@code writeLock}): the fields are guarded by it, and the non-blocking transfer is tried
 * under it, so the thread that starts an operation and the loop that finishes it never
 * transfer for one operation at the same time.
 */
final class Direction {
    // reads (true) or writes
    final boolean reads;
    // the interest op that says the direction may transfer
    final int interestOp;
    private final SocketChannel channel;

    // ---- guarded by this ----
    // an operation is pending
    boolean pending;
    // a timeout or a cancel: the bytes may have moved unseen, so no further operation may start
    boolean killed;
    // shutdownInput / shutdownOutput
    boolean shutdown;
    // the pending operation: one buffer, or length buffers from offset (scattering/gathering)
    private ByteBuffer buffer;
    private ByteBuffer[] buffers;
    private int offset;
    private int length;
    @SuppressWarnings("rawtypes")
    CompletionHandler handler;
    Object attachment;
    // null when the operation has a handler
    OperationFuture<Number> future;
    // System.nanoTime() of its timeout, 0: none
    long deadline;

    Direction(SocketChannel channel, boolean reads) {
        this.channel = channel;
        this.reads = reads;
        this.interestOp = reads ? SelectionKey.OP_READ : SelectionKey.OP_WRITE;
    }

    /** The exception for an operation started while another is pending. */
    RuntimeException pendingException() {
        return reads ? new ReadPendingException() : new WritePendingException();
    }

    /** The exception for an operation started after a timeout or a cancel (the JDK's words). */
    IllegalStateException killedException() {
        return new IllegalStateException((reads ? "Reading" : "Writing") + " not allowed due to timeout or cancellation");
    }

    /** One non-blocking transfer of {@code b}, or of {@code len} of {@code bs} from {@code off}. */
    long transfer(ByteBuffer b, ByteBuffer[] bs, int off, int len) throws IOException {
        assert Thread.holdsLock(this);
        if (reads) {
            return bs != null ? channel.read(bs, off, len) : channel.read(b);
        }
        return bs != null ? channel.write(bs, off, len) : channel.write(b);
    }

    /** One non-blocking transfer for the pending operation. */
    long transferPending() throws IOException {
        return transfer(buffer, buffers, offset, length);
    }

    /** True when the pending operation is a scattering read or a gathering write (its result is a {@code Long}). */
    boolean vectored() {
        return buffers != null;
    }

    /** Makes the operation pending, for the loop to finish. */
    @SuppressWarnings("rawtypes")
    void park(ByteBuffer b, ByteBuffer[] bs, int off, int len, CompletionHandler h, Object a, OperationFuture<Number> f,
            long deadlineNanos) {
        assert Thread.holdsLock(this) && !pending;
        pending = true;
        buffer = b;
        buffers = bs;
        offset = off;
        length = len;
        handler = h;
        attachment = a;
        future = f;
        deadline = deadlineNanos;
    }

    /** Forgets the pending operation (the caller took what it needs). */
    void clear() {
        assert Thread.holdsLock(this);
        pending = false;
        buffer = null;
        buffers = null;
        handler = null;
        attachment = null;
        future = null;
        deadline = 0;
    }

    /** The result of a transfer of {@code n} bytes, boxed as the API has it. */
    static Number result(long n, boolean vectored) {
        return vectored ? (Number) Long.valueOf(n) : (Number) Integer.valueOf((int) n);
    }

    static boolean hasRemaining(ByteBuffer[] buffers, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (buffers[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }
}
