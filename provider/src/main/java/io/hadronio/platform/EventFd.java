package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.hadronio.ucx.WordCalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * A Linux {@code eventfd(2)} in non-blocking mode: a selector's own wake-up fd, which
 * it polls next to the fds of UCX workers and JDK channels, and what ends a blocking read's wait
 * on a moving connection's socket ({@link PollSet#pollOne(int, short, EventFd, int)}). {@link #signal()} may be
 * called from any thread; {@link #drain()} and {@link #close()} by the owner only.
 */
public final class EventFd implements AutoCloseable {
    private static final int EFD_CLOEXEC = 0x80000;
    private static final int EFD_NONBLOCK = 0x800;
    private static final Linker LINKER = Linker.nativeLinker();

    /** {@snippet lang=c : int eventfd(unsigned int initval, int flags); } */
    private static final MethodHandle MH$eventfd = LINKER.downcallHandle(
            LINKER.defaultLookup().find("eventfd").orElseThrow(),
            WordCalls.call(2));
    /** {@snippet lang=c : ssize_t write(int fd, const void *buf, size_t count); } */
    private static final MethodHandle MH$write = LINKER.downcallHandle(
            LINKER.defaultLookup().find("write").orElseThrow(),
            WordCalls.call(3));
    /** {@snippet lang=c : ssize_t read(int fd, void *buf, size_t count); } */
    private static final MethodHandle MH$read = LINKER.downcallHandle(
            LINKER.defaultLookup().find("read").orElseThrow(),
            WordCalls.call(3));
    /** {@snippet lang=c : int close(int fd); } */
    private static final MethodHandle MH$close = LINKER.downcallHandle(
            LINKER.defaultLookup().find("close").orElseThrow(),
            WordCalls.call(1));

    // the value every signal adds (1), written once; and where drain() reads the counter to, a
    // value nobody looks at. Shared by all event fds: an arena of its own made every event fd's
    // close a handshake with all the JVM's threads (a shared arena's close), and a connection
    // that moves makes one
    private static final MemorySegment ONE = Arena.global().allocate(8, 8);
    private static final MemorySegment SINK = Arena.global().allocate(8, 8);

    static {
        ONE.set(JAVA_LONG, 0, 1L);
    }

    private final int fd;
    // guarded by this: no signal may reach an fd number that close() released (it may be reused)
    private boolean closed;

    public EventFd() throws IOException {
        int f;
        try {
            f = (int) (long) MH$eventfd.invokeExact(0L, (long) (EFD_NONBLOCK | EFD_CLOEXEC), 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("eventfd", t);
        }
        if (f < 0) {
            throw new IOException("eventfd failed");
        }
        this.fd = f;
    }

    public int fd() {
        return fd;
    }

    /** Makes the fd readable (until {@link #drain()}); from any thread, a no-op once closed. */
    public synchronized void signal() {
        if (closed) {
            return;
        }
        try {
            long n = (long) MH$write.invokeExact((long) fd, ONE.address(), 8L, 0L);
            // n < 0 only with EAGAIN (the counter is near 2^64): it is readable anyway
        } catch (Throwable t) {
            throw new AssertionError("write(eventfd)", t);
        }
    }

    /** Makes the fd unreadable again (non-blocking: nothing to read is fine). */
    public void drain() {
        try {
            long n = (long) MH$read.invokeExact((long) fd, SINK.address(), 8L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("read(eventfd)", t);
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            int r = (int) (long) MH$close.invokeExact((long) fd, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("close(eventfd)", t);
        }
    }
}
