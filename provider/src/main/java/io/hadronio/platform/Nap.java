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
 * A short {@code ppoll(2)} that keeps the thread's carrier, in a {@link CarrierCompensation}
 * bracket: a virtual thread's nap before it parks ({@link VirtualThreadParking#NAP_NANOS}), and
 * a wait finer than {@code poll(2)}'s milliseconds ({@link PollSet#pollNanos}). With the parking
 * that follows the nap it makes {@link #sleepOnSet}, a virtual thread's sleep on one fd that
 * stands for a set ({@link EPollSet}'s, a UCX worker's event fd). Below {@link PollSet} and
 * {@link EPollSet}, which both sleep through it.
 */
public final class Nap {
    // poll(2)'s POLLIN (PollSet's, which takes it from here)
    static final short POLLIN = 0x001;
    private static final int EINTR = 4;

    /** {@snippet lang=c : int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *tmo, const sigset_t *mask); } */
    private static final MethodHandle MH$ppoll = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("ppoll").orElseThrow(),
            WordCalls.call(4),
            Linker.Option.captureCallState("errno"));
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
            .byteOffset(java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    // two pollfds, errno and nap timespec per thread for PollSet.pollOne and sleepOnSet, freed by
    // the GC with its thread
    private static final ThreadLocal<MemorySegment[]> ONE = ThreadLocal.withInitial(() -> {
        Arena a = Arena.ofAuto();
        return new MemorySegment[] {a.allocate(16, 8), a.allocate(Linker.Option.captureStateLayout()), napTimespec(a)};
    });

    private Nap() {
    }

    /** The current thread's {two pollfds, errno, nap timespec}: no allocation after its first call. */
    static MemorySegment[] perThread() {
        return ONE.get();
    }

    /** A {@code struct timespec} of {@link VirtualThreadParking#NAP_NANOS}, written once. */
    static MemorySegment napTimespec(Arena arena) {
        MemorySegment t = arena.allocate(16, 8);
        t.set(JAVA_LONG, 0, 0L);
        t.set(JAVA_LONG, 8, VirtualThreadParking.NAP_NANOS);
        return t;
    }

    /**
     * A {@code ppoll(2)} over {@code n} pollfds for {@code timespec}, in a
     * {@link CarrierCompensation} bracket.
     *
     * @return the number of ready fds, 0 on timeout or EINTR
     */
    static int nap(MemorySegment errno, long pollfds, long n, MemorySegment timespec) throws IOException {
        int r;
        boolean compensated = CarrierCompensation.begin();
        try {
            r = (int) (long) MH$ppoll.invokeExact(errno, pollfds, n, timespec.address(), 0L);
        } catch (Throwable t) {
            throw new AssertionError("ppoll", t);
        } finally {
            CarrierCompensation.end(compensated);
        }
        return readyOrEintr(r, errno, "ppoll");
    }

    /** A poll-family call's result, 0 for EINTR; an IOException for any other failure. */
    static int readyOrEintr(int r, MemorySegment errno, String call) throws IOException {
        if (r >= 0) {
            return r;
        }
        int e = errno.get(JAVA_INT, ERRNO_OFFSET);
        if (e == EINTR) {
            return 0;
        }
        throw new IOException(call + " failed, errno " + e);
    }

    /**
     * A virtual thread's sleep on one fd that stands for a set (an epoll fd, a UCX worker's
     * event fd) until it is readable or {@code timeoutMillis} passed: the nap, then parking
     * through the JDK's poller as the JDK's selector does. The caller looks afterwards.
     */
    public static void sleepOnSet(int fd, int timeoutMillis) throws IOException {
        MemorySegment[] one = ONE.get();
        MemorySegment m = one[0];
        m.set(JAVA_INT, 0, fd);
        m.set(JAVA_SHORT, 4, POLLIN);
        m.set(JAVA_SHORT, 6, (short) 0);
        if (nap(one[1], m.address(), 1L, one[2]) == 0) {
            VirtualThreadParking.parkUntilReadable(fd, timeoutMillis);
        }
    }
}
