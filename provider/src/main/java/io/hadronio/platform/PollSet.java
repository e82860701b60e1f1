package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.hadronio.ucx.WordCalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A growable {@code struct pollfd} array and {@code poll(2)} over it, for a selector
 * that sleeps on UCX event fds and on the fds of the JDK's channels at once. Used by
 * one thread at a time (the selecting one); the array is reused between calls.
 */
public final class PollSet implements AutoCloseable {
    public static final short POLLIN = Nap.POLLIN;
    public static final short POLLOUT = 0x004;
    public static final short POLLERR = 0x008;
    public static final short POLLHUP = 0x010;
    public static final short POLLNVAL = 0x020;
    /**
     * A poll(2) or epoll_wait(2) that took longer slept until its event came (one that finds the
     * event there returns within a few µs): a waiter that slept waits first next time.
     */
    public static final long SLEPT_NANOS = 10_000;

    /** {@snippet lang=c : int poll(struct pollfd *fds, nfds_t nfds, int timeout); } */
    private static final MethodHandle MH$poll = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("poll").orElseThrow(),
            WordCalls.call(3),
            Linker.Option.captureCallState("errno"));

    // shared: a selector is often made in one thread and selected in another
    private final Arena arena = Arena.ofShared();
    private final MemorySegment errno = arena.allocate(Linker.Option.captureStateLayout());
    // struct timespec for a virtual thread's nap
    private final MemorySegment timespec = Nap.napTimespec(arena);
    // struct timespec for pollNanos, rewritten at each call
    private final MemorySegment shortWait = arena.allocate(16, 8);
    private MemorySegment fds;
    private int capacity;
    private int size;

    public PollSet(int initialCapacity) {
        capacity = Math.max(4, initialCapacity);
        fds = arena.allocate(8L * capacity, 8);
    }

    public void clear() {
        size = 0;
    }

    public int size() {
        return size;
    }

    /** Adds an fd with the events to wait for; returns its index. */
    public int add(int fd, short events) {
        if (size == capacity) {
            MemorySegment bigger = arena.allocate(16L * capacity, 8);
            bigger.copyFrom(fds);
            fds = bigger;
            capacity *= 2;
        }
        long at = 8L * size;
        fds.set(JAVA_INT, at, fd);
        fds.set(JAVA_SHORT, at + 4, events);
        fds.set(JAVA_SHORT, at + 6, (short) 0);
        return size++;
    }

    public short revents(int index) {
        return fds.get(JAVA_SHORT, 8L * index + 6);
    }

    /**
     * Waits until an fd is ready or {@code timeoutMillis} passed (-1: no limit).
     *
     * @return the number of ready fds, 0 on timeout or EINTR
     */
    public int poll(int timeoutMillis) throws IOException {
        if (timeoutMillis != 0 && VirtualThreadParking.applies()) {
            int ready = Nap.nap(errno, fds.address(), size, timespec);
            if (ready > 0) {
                return ready;
            }
            parkUntilReady(timeoutMillis);
            timeoutMillis = 0;
        }
        int n;
        // a virtual thread that could not park (VirtualThreadParking out of reach) at least asks for a spare carrier
        boolean compensated = timeoutMillis != 0 && CarrierCompensation.begin();
        try {
            n = (int) (long) MH$poll.invokeExact(errno, fds.address(), (long) size, (long) timeoutMillis, 0L);
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        } finally {
            CarrierCompensation.end(compensated);
        }
        return Nap.readyOrEintr(n, errno, "poll");
    }

    /**
     * Waits until an fd is ready or {@code nanos} (less than a second) passed: a short wait,
     * finer than {@link #poll}'s milliseconds. A virtual thread keeps its carrier meanwhile, in
     * a {@link CarrierCompensation} bracket, as in its nap.
     *
     * @return the number of ready fds, 0 on timeout or EINTR
     */
    public int pollNanos(long nanos) throws IOException {
        shortWait.set(JAVA_LONG, 0, 0L);
        shortWait.set(JAVA_LONG, 8, nanos);
        return Nap.nap(errno, fds.address(), size, shortWait);
    }

    /**
     * A virtual thread sleeps here without holding its carrier ({@link VirtualThreadParking}):
     * the set's fds go into an epoll set of their own for the sleep, the thread parks until
     * that is readable, and the fds leave it again, so that no fd stays registered that the
     * set's owner may close meanwhile (two {@code epoll_ctl} calls per fd and sleep).
     */
    private void parkUntilReady(int timeoutMillis) throws IOException {
        EPollSet p = parking;
        if (p == null) {
            parking = p = new EPollSet(size);
        }
        if (added.length < size) {
            added = new boolean[capacity];
        }
        for (int i = 0; i < size; i++) {
            // POLLIN and POLLOUT have the values of EPOLLIN and EPOLLOUT
            added[i] = p.add(fds.get(JAVA_INT, 8L * i), fds.get(JAVA_SHORT, 8L * i + 4) & (POLLIN | POLLOUT));
        }
        try {
            VirtualThreadParking.parkUntilReadable(p.fd(), timeoutMillis);
        } finally {
            for (int i = 0; i < size; i++) {
                if (added[i]) {
                    p.remove(fds.get(JAVA_INT, 8L * i));
                }
            }
        }
    }

    // the epoll set a virtual thread parks on (made at its first sleep), and which fds went into it
    private EPollSet parking;
    private boolean[] added = new boolean[0];

    @Override
    public void close() {
        EPollSet p = parking;
        if (p != null) {
            p.close();
        }
        arena.close();
    }

    /**
     * True when {@code fd}, a stream socket, is hung up ({@code POLLHUP}, asked without waiting:
     * its peer closed, or both directions are shut down), or cannot be asked.
     */
    public static boolean hungUp(int fd) {
        try {
            return fd < 0 || (pollOne(fd, POLLIN, 0) & POLLHUP) != 0;
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * Waits until {@code fd} is ready for {@code events} or {@code timeoutMillis} passed,
     * with no set to manage: for a thread that emulates a blocking read or write on a
     * non-blocking socket. Allocates nothing after a thread's first call.
     *
     * @return the revents, 0 on timeout or EINTR
     */
    public static short pollOne(int fd, short events, int timeoutMillis) throws IOException {
        MemorySegment[] one = Nap.perThread();
        MemorySegment m = one[0];
        m.set(JAVA_INT, 0, fd);
        m.set(JAVA_SHORT, 4, events);
        m.set(JAVA_SHORT, 6, (short) 0);
        if (timeoutMillis != 0 && VirtualThreadParking.applies()) {
            if (Nap.nap(one[1], m.address(), 1L, one[2]) > 0) {
                return m.get(JAVA_SHORT, 6);
            }
            VirtualThreadParking.parkUntilReady(fd, (events & POLLOUT) != 0, timeoutMillis);
            timeoutMillis = 0;
        }
        return pollPerThread(one, 1, timeoutMillis) == 0 ? 0 : m.get(JAVA_SHORT, 6);
    }

    /** In what {@link #pollOne(int, short, EventFd, int)} returns: the wait was ended by its wake-up. Not a poll(2) event. */
    public static final short WOKEN = 0x4000;

    /**
     * As {@link #pollOne(int, short, int)}, and until {@code wake} is signalled, which ends the
     * wait early (and is drained here): a wait that another thread must be able to end, where
     * nothing it does reaches {@code fd}. A virtual thread's wait also ends when it is unparked.
     *
     * @return {@code fd}'s revents, with {@link #WOKEN} when the wake-up ended the wait; 0 when
     *         the time ran out (or a signal interrupted the wait)
     */
    public static short pollOne(int fd, short events, EventFd wake, int timeoutMillis) throws IOException {
        MemorySegment[] one = Nap.perThread();
        MemorySegment m = one[0];
        m.set(JAVA_INT, 0, fd);
        m.set(JAVA_SHORT, 4, events);
        m.set(JAVA_SHORT, 6, (short) 0);
        m.set(JAVA_INT, 8, wake.fd());
        m.set(JAVA_SHORT, 12, POLLIN);
        m.set(JAVA_SHORT, 14, (short) 0);
        if (timeoutMillis != 0 && VirtualThreadParking.applies()) {
            if (Nap.nap(one[1], m.address(), 2L, one[2]) == 0) {
                VirtualThreadParking.parkUntilReady(fd, (events & POLLOUT) != 0, timeoutMillis);
                wake.drain();
                // parked: which of the fd, the unpark or the time ended it is not known; not a time-out
                return (short) (pollOne(fd, events, 0) | WOKEN);
            }
        } else {
            if (pollPerThread(one, 2, timeoutMillis) == 0) {
                return 0;
            }
        }
        short revents = m.get(JAVA_SHORT, 6);
        if (m.get(JAVA_SHORT, 14) != 0) {
            wake.drain();
            revents |= WOKEN;
        }
        return revents;
    }

    /**
     * {@code poll(2)} over the first {@code n} pollfds of the thread's segments ({@link Nap#perThread}),
     * in a {@link CarrierCompensation} bracket when it may block; the number ready, 0 on timeout or EINTR.
     */
    private static int pollPerThread(MemorySegment[] one, long n, int timeoutMillis) throws IOException {
        int r;
        boolean compensated = timeoutMillis != 0 && CarrierCompensation.begin();
        try {
            r = (int) (long) MH$poll.invokeExact(one[1], one[0].address(), n, (long) timeoutMillis, 0L);
        } catch (Throwable t) {
            throw new AssertionError("poll", t);
        } finally {
            CarrierCompensation.end(compensated);
        }
        return Nap.readyOrEintr(r, one[1], "poll");
    }
}
