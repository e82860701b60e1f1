package io.hadronio.path;

import io.hadronio.platform.PollSet;
import io.hadronio.path.Connection;
import io.hadronio.connection.ConnectionLifecycle;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A direction of a connection that is moving to UCX and has not switched yet: the kernel
 * socket, now non-blocking, with blocking emulated in {@code poll(2)} so that no thread
 * sleeps inside the socket across the switch. Reads never take a byte past the peer's switch
 * point (the lifecycle's raw-input lock keeps the point from arriving in the middle of a read);
 * a write first offers the output's switch to the lifecycle.
 */
public final class UpgradingKernelPath implements DataPath {
    // how long an emulated blocking wait sleeps in poll(2) before it looks at the channel again
    // (a close from another thread cannot wake a poll on the socket)
    private static final int WAIT_SLICE_MILLIS = 20;

    private final KernelStream kernel;
    private final ConnectionLifecycle life;
    private final ChannelIo io;
    // the last blocking read had to wait for its bytes; under the channel's read lock. A
    // connection's first read usually waits (a server for its request, a client for its answer)
    private boolean readWaited = true;

    public UpgradingKernelPath(KernelStream kernel, ConnectionLifecycle life, ChannelIo io) {
        this.kernel = kernel;
        this.life = life;
        this.io = io;
    }

    /** The kernel socket's bytes, never past the peer's switch point; {@link #MOVED} once the input switched. */
    @Override
    public long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        boolean blocking = io.isBlocking();
        long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
        long n = 0;
        try {
            boolean waited = false;
            if (blocking) {
                io.begin();
                if (readWaited && io.isOpen()) {
                    // the last blocking read found nothing either (request and response): wait
                    // first, which spares a failed read(2); a wait that slept says the next
                    // read should wait first too, one that found the bytes there does not
                    long start = System.nanoTime();
                    await(PollSet.POLLIN, deadline);
                    waited = System.nanoTime() - start > PollSet.SLEPT_NANOS;
                }
            }
            while (true) {
                ReentrantLock raw = life.upgrade().lock();
                raw.lock();
                try {
                    if (!life.inputRaw()) {
                        return MOVED;
                    }
                    if (life.isReset() && !life.inputOutlivesReset()) {
                        // the upgrade broke (the peer never took our switch): the connection is gone
                        // both ways, whatever the kernel socket still holds - unless only our output
                        // broke and the peer's raw stream is whole (ConnectionLifecycle.resetOutput)
                        throw life.resetException();
                    }
                    if (life.isInputShut()) {
                        return n = -1;
                    }
                    long room = life.upgrade().room();
                    n = room == Long.MAX_VALUE ? kernel.socket().read(dsts, offset, length)
                            : readBounded(dsts, offset, length, room);
                    if (n > 0) {
                        life.upgrade().consumed(n);
                        if (blocking) {
                            readWaited = waited;
                        }
                        return n;
                    }
                    if (n < 0) {
                        if (life.upgrade().limitKnown()) {
                            throw new SocketException("Connection reset (the peer's raw bytes ended before "
                                    + "the switch point it announced)");
                        }
                        return -1;
                    }
                } finally {
                    raw.unlock();
                }
                if (!blocking || !Connection.hasRemaining(dsts, offset, length) || !io.isOpen()) {
                    return 0;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new SocketTimeoutException("Read timed out");
                }
                waited = true;
                await(PollSet.POLLIN, deadline);
            }
        } finally {
            if (blocking) {
                io.end(n != 0);
            }
        }
    }

    /** The first write after the UCX half is ready moves the output there ({@link #MOVED}); until then the socket's. */
    @Override
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (life.upgrade().trySwitchOutput() >= 0) {
            return MOVED;
        }
        life.upgrade().wroteBefore();
        boolean blocking = io.isBlocking();
        long total = 0;
        boolean completed = false;
        try {
            if (blocking) {
                io.begin();
            }
            while (true) {
                if (life.isReset()) {
                    throw life.resetException();
                }
                long n = kernel.socket().write(srcs, offset, length);
                if (n > 0) {
                    life.upgrade().wrote(n);
                    total += n;
                }
                if (!blocking || !Connection.hasRemaining(srcs, offset, length)) {
                    completed = true;
                    return total;
                }
                if (!io.isOpen()) {
                    return total;
                }
                await(PollSet.POLLOUT, Long.MAX_VALUE);
            }
        } finally {
            if (blocking) {
                io.end(completed);
            }
        }
    }

    /**
     * One slice of an emulated blocking wait on the socket: until {@code events}, the
     * {@link System#nanoTime()} deadline or {@link #WAIT_SLICE_MILLIS}, whichever comes first.
     */
    private void await(short events, long deadline) throws IOException {
        int millis = deadline == Long.MAX_VALUE ? WAIT_SLICE_MILLIS
                : (int) Math.min(WAIT_SLICE_MILLIS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
        PollSet.pollOne(kernel.fd(), events, millis);
    }

    /** A read of at most {@code room} bytes into the buffers (their limits are restored). */
    private long readBounded(ByteBuffer[] dsts, int offset, int length, long room) throws IOException {
        if (room <= 0) {
            return 0;
        }
        int end = offset;
        long total = 0;
        while (end < offset + length && total < room) {
            total += dsts[end++].remaining();
        }
        ByteBuffer last = dsts[end - 1];
        int savedLimit = last.limit();
        if (total > room) {
            last.limit(last.limit() - (int) (total - room));
        }
        try {
            return kernel.socket().read(dsts, offset, end - offset);
        } finally {
            last.limit(savedLimit);
        }
    }
}
