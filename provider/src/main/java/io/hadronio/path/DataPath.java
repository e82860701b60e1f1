package io.hadronio.path;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One direction's way for a connection's bytes: the kernel socket as the JDK drives it
 * ({@link KernelStream}), the kernel socket of a connection that is moving to UCX
 * ({@link UpgradingKernelPath}), or UCX ({@link UcxPath}). The socket channel reads and writes
 * through its {@link Paths}, which calls the path a direction takes now; the channel does not
 * branch on which.
 *
 * <p>Calls come from the channel with its read lock (reads) or write lock (writes) held; the
 * buffers are the application's, checked by the channel (non-null, writable for reads).
 */
public interface DataPath {
    /**
     * What {@link #read} and {@link #write} return when this path ended for that direction
     * before the call did anything: the direction moved on, and {@link Paths} calls the next path.
     */
    long MOVED = Long.MIN_VALUE;

    /**
     * Reads into {@code dsts[offset..offset+length)}: bytes read, 0 (non-blocking, nothing
     * there), -1 at end-of-stream, or {@link #MOVED}.
     *
     * @param timeoutMillis > 0: a blocking read gives up after so long (the socket adaptor's
     *                      {@code SO_TIMEOUT}) with a {@link java.net.SocketTimeoutException}
     */
    long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException;

    /** Writes from {@code srcs[offset..offset+length)}: bytes written, or {@link #MOVED}. */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException;
}
