package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED;

import io.hadronio.ucx.WordCalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * An {@code epoll(7)} instance for a selector's fds (the JDK's channels and hadroNIO's
 * connections still on kernel TCP): registered once, changed when an interest set
 * changes, and asked for the ready ones only, so that a selection costs in proportion to
 * the ready fds, not the registered ones (as the JDK's own {@code EPollSelectorImpl}).
 * Level-triggered, like {@code poll(2)}: an fd that stays ready is reported again. Each
 * registration carries its fd as data. The event bits equal {@link PollSet}'s. Used by
 * one thread at a time (the selecting one), except {@link #close()}.
 */
public final class EPollSet implements AutoCloseable {
    public static final int EPOLLIN = 0x001;
    public static final int EPOLLOUT = 0x004;
    private static final int EPOLL_CTL_ADD = 1;
    private static final int EPOLL_CTL_DEL = 2;
    private static final int EPOLL_CTL_MOD = 3;
    private static final int EPOLL_CLOEXEC = 0x80000;
    private static final int EINTR = 4;
    private static final int ENOENT = 2;
    private static final int EBADF = 9;
    private static final int EEXIST = 17;
    // struct epoll_event is packed on x86-64 (4 + 8 bytes), naturally aligned elsewhere
    private static final boolean PACKED = System.getProperty("os.arch", "").matches("amd64|x86_64");
    private static final long EVENT_SIZE = PACKED ? 12 : 16;
    private static final long DATA_OFFSET = PACKED ? 4 : 8;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
            .byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));
    private static final MethodHandle MH$create = LINKER.downcallHandle(
            LINKER.defaultLookup().find("epoll_create1").orElseThrow(),
            WordCalls.call(1), ERRNO);
    private static final MethodHandle MH$ctl = LINKER.downcallHandle(
            LINKER.defaultLookup().find("epoll_ctl").orElseThrow(),
            WordCalls.call(4), ERRNO);
    private static final MethodHandle MH$wait = LINKER.downcallHandle(
            LINKER.defaultLookup().find("epoll_wait").orElseThrow(),
            WordCalls.call(4), ERRNO);
    // the same without capturing errno: a capture segment costs an allocation per call until C2
    // has compiled the caller (the selection passes' hot path); errno is asked again on failure
    private static final MethodHandle MH$waitFast = LINKER.downcallHandle(
            LINKER.defaultLookup().find("epoll_wait").orElseThrow(),
            WordCalls.call(4));
    private static final MethodHandle MH$close = LINKER.downcallHandle(
            LINKER.defaultLookup().find("close").orElseThrow(),
            WordCalls.call(1));

    // shared: a selector is often made in one thread and selected in another
    private final Arena arena = Arena.ofShared();
    private final MemorySegment errno = arena.allocate(Linker.Option.captureStateLayout());
    private final MemorySegment one = arena.allocate(16, 8);
    private final int epfd;
    private MemorySegment events;
    private int capacity;
    private int registered;
    private boolean closed;

    public EPollSet(int initialCapacity) throws IOException {
        int fd;
        try {
            fd = (int) (long) MH$create.invokeExact(errno, (long) EPOLL_CLOEXEC, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("epoll_create1", t);
        }
        if (fd < 0) {
            arena.close();
            throw new IOException("epoll_create1 failed, errno " + errno.get(JAVA_INT, ERRNO_OFFSET));
        }
        epfd = fd;
        capacity = Math.max(16, initialCapacity);
        events = arena.allocate(EVENT_SIZE * capacity, 8);
    }

    /** The epoll fd itself: readable while a registered fd is ready (for a {@code poll(2)} that sleeps on it too). */
    public int fd() {
        return epfd;
    }

    /** How many fds are registered. */
    public int registered() {
        return registered;
    }

    /** Registers {@code fd} for {@code mask} ({@link #EPOLLIN}, {@link #EPOLLOUT}); false if the fd is closed. */
    public boolean add(int fd, int mask) throws IOException {
        int e = ctl(EPOLL_CTL_ADD, fd, mask);
        if (e == 0) {
            registered++;
            return true;
        }
        if (e == EEXIST) {
            // registered already (counted then): the caller's bookkeeping lost track; take the new events
            return ctl(EPOLL_CTL_MOD, fd, mask) == 0;
        }
        if (e == EBADF) {
            return false;
        }
        throw new IOException("epoll_ctl(ADD, " + fd + ") failed, errno " + e);
    }

    /** Changes the events of a registered fd; false if it is no longer registered (closed meanwhile). */
    public boolean modify(int fd, int mask) throws IOException {
        int e = ctl(EPOLL_CTL_MOD, fd, mask);
        if (e == 0) {
            return true;
        }
        if (e == ENOENT || e == EBADF) {
            return false;
        }
        throw new IOException("epoll_ctl(MOD, " + fd + ") failed, errno " + e);
    }

    /**
     * Removes a registered fd. A closed fd left the set by itself (the kernel drops a file
     * from every epoll set when its last descriptor closes): that is no error.
     */
    public void remove(int fd) throws IOException {
        int e = ctl(EPOLL_CTL_DEL, fd, 0);
        registered--;
        if (e != 0 && e != ENOENT && e != EBADF) {
            throw new IOException("epoll_ctl(DEL, " + fd + ") failed, errno " + e);
        }
    }

    /** A registration that left with its file (the fd was closed): counted no more, no call. */
    public void forget() {
        registered--;
    }

    private int ctl(int op, int fd, int mask) {
        one.set(JAVA_INT, 0, mask);
        one.set(JAVA_LONG_UNALIGNED, DATA_OFFSET, fd);
        int r;
        try {
            r = (int) (long) MH$ctl.invokeExact(errno, (long) epfd, (long) op, (long) fd, one.address());
        } catch (Throwable t) {
            throw new AssertionError("epoll_ctl", t);
        }
        return r == 0 ? 0 : errno.get(JAVA_INT, ERRNO_OFFSET);
    }

    /**
     * Waits until a registered fd is ready or {@code timeoutMillis} passed (0: do not wait).
     *
     * @return how many fds are ready ({@link #readyFd}, {@link #readyEvents}); 0 on timeout or EINTR
     */
    public int poll(int timeoutMillis) throws IOException {
        if (registered == 0 && timeoutMillis == 0) {
            return 0;
        }
        int n = waitOnce(timeoutMillis);
        while (n == capacity && capacity < registered) {
            // more may be ready than fit: a bigger array, and again (level-triggered: the ready
            // ones of the call before are reported again)
            events = arena.allocate(EVENT_SIZE * capacity * 2, 8);
            capacity *= 2;
            n = waitOnce(0);
        }
        return n;
    }

    private int waitOnce(int timeoutMillis) throws IOException {
        if (timeoutMillis != 0 && VirtualThreadParking.applies()) {
            // a virtual thread naps, then parks until the set is readable, then looks without waiting
            Nap.sleepOnSet(epfd, timeoutMillis);
            timeoutMillis = 0;
        }
        int n;
        // a virtual thread that could not park (VirtualThreadParking out of reach) at least asks for a spare carrier
        boolean compensated = timeoutMillis != 0 && CarrierCompensation.begin();
        try {
            n = (int) (long) MH$waitFast.invokeExact((long) epfd, events.address(), (long) capacity, (long) timeoutMillis);
            if (n < 0) {
                // learn why: once more, without waiting, with errno captured
                n = (int) (long) MH$wait.invokeExact(errno, (long) epfd, events.address(), (long) capacity, 0L);
            }
        } catch (Throwable t) {
            throw new AssertionError("epoll_wait", t);
        } finally {
            CarrierCompensation.end(compensated);
        }
        if (n < 0) {
            int e = errno.get(JAVA_INT, ERRNO_OFFSET);
            if (e == EINTR) {
                return 0;
            }
            throw new IOException("epoll_wait failed, errno " + e);
        }
        return n;
    }

    /** The fd of the {@code i}th ready entry of the last {@link #poll}. */
    public int readyFd(int i) {
        return (int) events.get(JAVA_LONG_UNALIGNED, EVENT_SIZE * i + DATA_OFFSET);
    }

    /** The events ({@link PollSet}'s bits) of the {@code i}th ready entry of the last {@link #poll}. */
    public int readyEvents(int i) {
        return events.get(JAVA_INT, EVENT_SIZE * i);
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            long ignored = (long) MH$close.invokeExact((long) epfd, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
        arena.close();
    }
}
