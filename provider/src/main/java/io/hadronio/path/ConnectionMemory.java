package io.hadronio.path;

import io.hadronio.platform.HugePagePool;
import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxWorker;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One connection's native memory (its receive slices, send slots and credit words, in one
 * arena), the UCX requests that keep it allocated after {@link Connection#release}, and the
 * JVM-wide count of such memory (a diagnostic: {@link UcxRuntime#resources}).
 *
 * <p>The areas start in ordinary pages, each resident once written; the connection's first message
 * of {@link WireFormat#BULK_MIN} bytes or more, either way, moves them into huge pages
 * ({@link #largeMessage}, {@link HugePagePool#promote}), where large messages move faster.
 *
 * <p>Guarding: {@code bytes} and the areas are written by the allocations, which happen at set-up
 * only (the receive side's by the constructing thread, the send slots under the worker group's
 * lock in {@link Connection#connect}), and read by {@link #free}, which runs once, after release,
 * and by {@link #largeMessage}, under the worker group's lock, as is {@code large}. The
 * requests kept in flight ({@link #keepIfInFlight}, {@link #releaseEnded}, {@link #abandon}) are
 * under the worker group's lock. The JVM-wide counters are atomics, changed only at set-up and
 * release.
 */
public final class ConnectionMemory {
    // connections' memory (one Arena each: slices, slots, credit words) not freed yet in this JVM,
    // and its bytes: a diagnostic (UcxRuntime.resources), changed only at set-up and release
    private static final AtomicInteger LIVE = new AtomicInteger();
    private static final AtomicLong BYTES = new AtomicLong();
    // of those, the ones release() left allocated because UCX requests in flight may still use them,
    // each with what it found in flight and the lifecycle then (memoryRetainedBy, a diagnostic)
    private static final java.util.Map<ConnectionMemory, String> RETAINED = new java.util.concurrent.ConcurrentHashMap<>();

    // where the receive and send areas come from (huge pages within a budget)
    private final HugePagePool areas;
    // memory of this connection: slices, slots, credit words; freed by free()
    private final Arena arena = Arena.ofShared();
    // bytes allocated in it (counted in BYTES)
    private long bytes;
    // start addresses of the areas (slices, then slots; 0 until allocated): what largeMessage promotes
    private final long[] areaAddresses = new long[2];
    // set by the first message of BULK_MIN bytes or more: the areas were promoted; under the lock
    private boolean large;

    // requests release() found in flight (a send the peer has not taken yet, a receive mid-rendezvous):
    // kept until they end, and only then is the memory they use freed (Connection.freeIfDone); under lock
    private long[] inFlight = new long[4];
    private int inFlightCount;

    ConnectionMemory(HugePagePool areas) {
        this.areas = areas;
    }

    /** An area for slices or slots (huge pages within the pool's budget). */
    MemorySegment area(long size) {
        MemorySegment area = areas.allocate(size, arena);
        areaAddresses[areaAddresses[0] == 0 ? 0 : 1] = area.address();
        count(size);
        return area;
    }

    /**
     * The connection carries a message of {@link WireFormat#BULK_MIN} bytes or more: the first
     * time, its areas go into huge pages ({@link HugePagePool#promote}; a system call or two, once
     * per connection). Called by the data path for large messages only; under the worker group's lock.
     */
    void largeMessage() {
        if (large) {
            return;
        }
        large = true;
        for (long address : areaAddresses) {
            if (address != 0) {
                areas.promote(address);
            }
        }
    }

    /** {@code size} bytes of 8-byte words (credit counts). */
    MemorySegment words(long size) {
        MemorySegment words = arena.allocate(size, 8);
        count(size);
        return words;
    }

    private void count(long size) {
        bytes += size;
        BYTES.addAndGet(size);
    }

    /** The connection's first allocations are made: its memory counts as live until {@link #free}. */
    void opened() {
        LIVE.incrementAndGet();
    }

    /** Gives a request back to UCX, unless it is still in progress: then it is kept (it may still use our memory). */
    void keepIfInFlight(UcxWorker worker, long request) {
        if (request == Requests.NONE || request == UcxWorker.COMPLETED) {
            return;
        }
        if (worker.status(request) == UcsStatus.INPROGRESS) {
            if (inFlightCount == inFlight.length) {
                inFlight = java.util.Arrays.copyOf(inFlight, 2 * inFlightCount);
            }
            inFlight[inFlightCount++] = request;
        } else {
            worker.release(request);
        }
    }

    /** Requests kept so far. */
    int inFlight() {
        return inFlightCount;
    }

    /** Gives back the kept requests that ended; returns how many are still in flight. */
    int releaseEnded(UcxWorker worker) {
        int left = 0;
        for (int i = 0; i < inFlightCount; i++) {
            long request = inFlight[i];
            if (worker.status(request) == UcsStatus.INPROGRESS) {
                inFlight[left++] = request;
            } else {
                worker.release(request);
            }
        }
        inFlightCount = left;
        return left;
    }

    /** The kept requests go back to UCX (unless the worker closed); the memory stays allocated for good. */
    void abandon(UcxWorker worker) {
        if (worker.isOpen()) {
            for (int i = 0; i < inFlightCount; i++) {
                worker.release(inFlight[i]);
            }
        }
        inFlightCount = 0;
    }

    /** Requests in flight keep the memory after release: {@code why} says which (diagnostics). */
    void retain(String why) {
        RETAINED.put(this, why);
    }

    /** Frees the memory (and ends its retention, if any). */
    void free() {
        RETAINED.remove(this);
        arena.close();
        LIVE.decrementAndGet();
        BYTES.addAndGet(-bytes);
    }

    /** Connections whose memory is not freed (open ones, and any {@link Connection#release} had to leave), JVM-wide. */
    public static int memoryLive() {
        return LIVE.get();
    }

    /** Bytes of native memory those connections hold (slices, send slots, credit words). */
    public static long memoryBytes() {
        return BYTES.get();
    }

    /** Connections whose memory {@link Connection#release} left allocated because UCX requests in flight might still use it. */
    public static int memoryRetained() {
        return RETAINED.size();
    }

    /** What each of those connections had in flight when it was released, and its lifecycle then (diagnostics). */
    static String memoryRetainedBy() {
        return RETAINED.values().toString();
    }
}
