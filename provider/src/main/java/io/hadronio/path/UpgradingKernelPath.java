package io.hadronio.path;

import io.hadronio.platform.EventFd;
import io.hadronio.platform.PollSet;
import io.hadronio.path.Connection;
import io.hadronio.connection.ConnectionLifecycle;
import java.io.IOException;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A direction of a connection that is moving to UCX and has not switched yet: the kernel
 * socket, now non-blocking, with blocking emulated in {@code poll(2)} so that no thread
 * sleeps inside the socket across the switch. Reads never take a byte past the peer's switch
 * point (the lifecycle's raw-input lock keeps the point from arriving in the middle of a read);
 * a write first offers the output's switch to the lifecycle.
 *
 * <p>A blocking read's wait on the socket ends when its bytes come, and when the connection changes
 * under it ({@link #wakeReader}, from the lifecycle's wake): the input switched to UCX, a reset, a
 * close. The socket alone cannot say so: the peer's SWITCHED record, which follows its raw bytes,
 * wakes the poll, but once the input switched the control thread reads the socket's records, and
 * a poll that finds the record already taken sleeps on (a 20-ms stall in a moving connection's
 * request and response, regression: UpgradeTest#shouldWakeABlockingReaderWhenTheInputSwitches).
 */
public final class UpgradingKernelPath implements DataPath {
    // how long an emulated blocking wait sleeps in poll(2) before it looks at the channel again:
    // nothing but the socket wakes a write's wait (or a read's that has no event fd), and the
    // read's wake-up is best kept with a net under it
    private static final int WAIT_SLICE_MILLIS = 20;
    // blocking reads' waits that ended with their slice, nothing ready and nobody waking them
    // (a diagnostic: a reader whose peer answers at once never waits a slice out)
    private static final java.util.concurrent.atomic.AtomicLong SLICES_OUT = new java.util.concurrent.atomic.AtomicLong();

    private final KernelStream kernel;
    private final ConnectionLifecycle life;
    private final ChannelIo io;
    // the last blocking read had to wait for its bytes; under the channel's read lock. A
    // connection's first read usually waits (a server for its request, a client for its answer)
    private boolean readWaited = true;
    // the thread in a blocking read's wait on the socket, or null: what wakeReader wakes
    private volatile Thread reader;
    // what that wait polls beside the socket, signalled by wakeReader; made at the first wait and
    // closed by release (both under the channel's read lock), signalled from any thread
    // (EventFd: no signal after its close); null when none could be made (the wait then ends at
    // its slice)
    private volatile EventFd readerWake;
    // release() ran: no event fd is made any more (under the channel's read lock)
    private boolean released;

    public UpgradingKernelPath(KernelStream kernel, ConnectionLifecycle life, ChannelIo io) {
        this.kernel = kernel;
        this.life = life;
        this.io = io;
        life.upgrade().rawReaderWake(this::wakeReader);
    }

    /**
     * Ends a blocking read's wait on the socket (any thread; nothing when no reader waits): the
     * connection changed, and the reader must look. Called after the change: the reader makes
     * itself known before it looks a last time.
     */
    private void wakeReader() {
        Thread t = reader;
        if (t == null) {
            return;
        }
        EventFd wake = readerWake;
        if (wake != null) {
            wake.signal();
        }
        if (t.isVirtual()) {
            LockSupport.unpark(t);
        }
    }

    /** The channel closed, or its input left this path: the wait's event fd goes (under the channel's read lock). */
    public void release() {
        released = true;
        EventFd wake = readerWake;
        if (wake != null) {
            readerWake = null;
            wake.close();
        }
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
                    awaitInput(deadline);
                    waited = System.nanoTime() - start > PollSet.SLEPT_NANOS;
                }
            }
            while (true) {
                ReentrantLock raw = life.upgrade().lock();
                raw.lock();
                try {
                    if (!life.inputRaw()) {
                        // the input reads from UCX from now on: no more waits here
                        release();
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
                awaitInput(deadline);
            }
        } finally {
            if (blocking) {
                // (as the JDK's: a call that moved bytes completed, whatever came after them)
                io.end(n > 0);
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
                    return total;
                }
                if (!io.isOpen()) {
                    return total;
                }
                await(PollSet.POLLOUT, Long.MAX_VALUE);
                if (!io.isOpen()) {
                    // a close woke us: the socket may be gone already
                    return total;
                }
            }
        } catch (ClosedChannelException e) {
            if (total > 0) {
                // the close came between our check and the socket's write
                return total;
            }
            throw e;
        } finally {
            if (blocking) {
                // a close that overtook a write which moved bytes returns their count, as the JDK's does
                io.end(total > 0);
            }
        }
    }

    /**
     * One slice of an emulated blocking wait on the socket: until {@code events}, the
     * {@link System#nanoTime()} deadline or {@link #WAIT_SLICE_MILLIS}, whichever comes first.
     */
    private void await(short events, long deadline) throws IOException {
        PollSet.pollOne(kernel.fd(), events, sliceMillis(deadline));
    }

    /**
     * A blocking read's wait for input: as {@link #await}, and until {@link #wakeReader}. The
     * reader is known before it looks at the connection a last time, and a waker changes the
     * connection before it looks for the reader (both volatile), so no change goes unseen.
     */
    private void awaitInput(long deadline) throws IOException {
        EventFd wake = readerWake;
        if (wake == null && !released) {
            try {
                readerWake = wake = new EventFd();
            } catch (IOException e) {
                // no fd to spare: the wait ends at its slice, as it did before
            }
        }
        if (wake == null) {
            await(PollSet.POLLIN, deadline);
            return;
        }
        reader = Thread.currentThread();
        try {
            if (!life.inputRaw() || life.isReset() || life.isInputShut() || !io.isOpen()) {
                return;
            }
            if (PollSet.pollOne(kernel.fd(), PollSet.POLLIN, wake, sliceMillis(deadline)) == 0) {
                SLICES_OUT.incrementAndGet();
            }
        } finally {
            reader = null;
        }
    }

    /** Blocking reads' waits on a moving connection's socket that ended with their slice, JVM-wide (a diagnostic). */
    public static long waitSlicesOut() {
        return SLICES_OUT.get();
    }

    private static int sliceMillis(long deadline) {
        return deadline == Long.MAX_VALUE ? WAIT_SLICE_MILLIS
                : (int) Math.min(WAIT_SLICE_MILLIS, Math.max(1, (deadline - System.nanoTime()) / 1_000_000));
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
