package io.hadronio.ucx;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT_UNALIGNED;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * A worker's own {@code sysv} receive FIFO, mapped a second time into this process so
 * that the binding can see — and mend — what UCX 1.13 cannot: an element that a sender
 * took and never finished writing because the sender was killed in between.
 *
 * <h2>Why</h2>
 * UCX's shared-memory transports ({@code sysv}, {@code posix}; {@code src/uct/sm/mm})
 * give each worker one receive FIFO that every peer process on the host writes into.
 * A sender takes the element at {@code head} with a compare-and-swap, writes the message
 * (for {@code am_bcopy} first attaching the receiver's descriptor segment and running the
 * pack callback), and only then flips the element's owner bit. The receiver reads
 * elements strictly in order and waits for the owner bit. A sender killed (SIGKILL)
 * between the two steps leaves an element that is taken and never marked written: the
 * receiver waits for it forever, and every later message from every other peer queues
 * behind it. Neither UCX 1.13 nor its current sources ({@code uct_mm_iface_poll_fifo})
 * ever skip such an element, and no UCX error or keepalive touches it. This is the stall
 * of {@code docs/crash-isolation.md} ("a worker that stops delivering after early kills").
 *
 * <h2>What this class does</h2>
 * It finds the worker's FIFO segment (a System V segment this process created while the
 * worker was created, recognised by the layout UCX initialises), lists the elements
 * between {@code tail} and {@code head} that are taken but not written, and
 * {@linkplain #complete completes} one as an empty inline message with active-message
 * id 0, which UCP never uses: UCT's stub handler logs {@code got active message id 0,
 * but no handler installed} and drops it, and the receiver moves on. Deciding
 * <em>when</em> an element is torn (its writer is dead, not just slow) is
 * {@link UcxWorker}'s part.
 *
 * <p>The layout is UCX's ({@code mm_iface.h}), checked against the machine code of the
 * Debian 1.13.1 {@code libuct} ({@code uct_mm_ep_am_short},
 * {@code uct_mm_iface_set_fifo_ptrs}): the control block starts at the first 64-byte
 * boundary of the segment, {@code head} at offset 0 (bit 63: the receiver armed its
 * event), {@code tail} at 0x80, the unix socket address of the receiver at 8 (length)
 * and 12 ({@code sun_family}); the elements follow at 0xC0, {@code FIFO_ELEM_SIZE}
 * bytes each, with {@code flags} (bit 0 owner, bit 1 inline), {@code am_id} and a 16-bit
 * {@code length} in their first four bytes. A segment that does not look like this when
 * the worker is new is not used, and the worker then works without repair.
 */
final class SysvReceiveFifo implements AutoCloseable {
    static final long CTL_ALIGN = 64;
    static final long CTL_SIZE = 0xC0;
    static final long HEAD = 0;
    static final long TAIL = 0x80;
    static final long SIGNAL_ADDRLEN = 8;
    static final long SIGNAL_FAMILY = 12;
    static final long EVENT_ARMED = 1L << 63;
    static final int FLAG_OWNER = 1;
    static final int FLAG_INLINE = 2;
    static final long ELEM_FLAGS = 0;
    static final long ELEM_AM_ID = 1;
    static final long ELEM_LENGTH = 2;
    /** The active-message id of a completed element: unused by UCP, so UCT's stub handler drops it. */
    static final int UNUSED_AM_ID = 0;
    // UCX 1.13's defaults for UCX_{SYSV,MM}_FIFO_ELEM_SIZE
    static final int DEFAULT_ELEM_SIZE = 128;
    private static final int AF_UNIX = 1;
    // FIFO segments are small (64 elements of 128 B by default); descriptor segments are megabytes
    private static final long MAX_FIFO_SEGMENT = 1 << 20;
    // atomic access to head, as UCX's senders take elements (ucs_atomic_cswap64)
    private static final VarHandle LONG = JAVA_LONG.varHandle();

    /** {@snippet lang=c : void *shmat(int shmid, const void *shmaddr, int shmflg); } */
    private static final class Shmat {
        static final MethodHandle MH = NativeLibraries.downcall("shmat",
                WordCalls.call(3));
    }

    /** {@snippet lang=c : int shmdt(const void *shmaddr); } */
    private static final class Shmdt {
        static final MethodHandle MH = NativeLibraries.downcall("shmdt", WordCalls.call(1));
    }

    private final int shmid;
    private final long attachAddress;
    private final MemorySegment ctl;
    private final MemorySegment elements;
    private final int fifoSize;
    private final int elemSize;
    private boolean closed;

    private SysvReceiveFifo(int shmid, long attachAddress, MemorySegment ctl, MemorySegment elements, int fifoSize,
            int elemSize) {
        this.shmid = shmid;
        this.attachAddress = attachAddress;
        this.ctl = ctl;
        this.elements = elements;
        this.fifoSize = fifoSize;
        this.elemSize = elemSize;
    }

    /** A System V segment as {@code /proc/sysvipc/shm} lists it. */
    record Segment(int shmid, long size, long creatorPid) {
    }

    /** The System V segments this process created, by id; empty where {@code /proc/sysvipc/shm} is missing. */
    static Set<Integer> ownSegments() {
        Set<Integer> ids = new HashSet<>();
        for (Segment s : segments()) {
            if (s.creatorPid() == ProcessHandle.current().pid()) {
                ids.add(s.shmid());
            }
        }
        return ids;
    }

    static List<Segment> segments() {
        List<Segment> segments = new ArrayList<>();
        List<String> lines;
        try {
            lines = Files.readAllLines(Path.of("/proc/sysvipc/shm"));
        } catch (IOException | RuntimeException e) {
            return segments;
        }
        // key shmid perms size cpid lpid nattch ...
        for (int i = 1; i < lines.size(); i++) {
            String[] f = lines.get(i).trim().split("\\s+");
            if (f.length < 5) {
                continue;
            }
            try {
                segments.add(new Segment(Integer.parseInt(f[1]), Long.parseLong(f[3]), Long.parseLong(f[4])));
            } catch (NumberFormatException ignored) {
                // not a segment line
            }
        }
        return segments;
    }

    /**
     * The receive FIFO among the segments this process created that are not in
     * {@code before} (taken just before the worker was created), or null when there is
     * not exactly one segment with the layout of a new UCX FIFO of {@code elemSize}-byte
     * elements. {@code why} gets the reason when null is returned.
     */
    static SysvReceiveFifo find(Set<Integer> before, int elemSize, StringBuilder why) {
        long pid = ProcessHandle.current().pid();
        List<SysvReceiveFifo> found = new ArrayList<>();
        int candidates = 0;
        for (Segment s : segments()) {
            if (s.creatorPid() != pid || before.contains(s.shmid()) || s.size() > MAX_FIFO_SEGMENT) {
                continue;
            }
            candidates++;
            SysvReceiveFifo fifo = attach(s, elemSize);
            if (fifo != null) {
                found.add(fifo);
            }
        }
        if (found.size() == 1) {
            return found.get(0);
        }
        found.forEach(SysvReceiveFifo::close);
        why.append(found.isEmpty()
                ? candidates + " new small System V segment(s) of this process, none with the layout of a UCX FIFO"
                        + " of " + elemSize + "-byte elements"
                : found.size() + " new segments look like a UCX FIFO (another worker created at the same time?)");
        return null;
    }

    /** Maps the segment and checks that it looks like a FIFO nobody has written to yet; null if not. */
    private static SysvReceiveFifo attach(Segment s, int elemSize) {
        long address;
        try {
            address = (long) Shmat.MH.invokeExact((long) s.shmid(), 0L, 0L, 0L);
        } catch (Throwable t) {
            return null;
        }
        if (address == -1L || address == 0) {
            return null;
        }
        MemorySegment all = MemorySegment.ofAddress(address).reinterpret(s.size());
        long ctlOffset = ((address + CTL_ALIGN - 1) & -CTL_ALIGN) - address;
        long elementsOffset = ctlOffset + CTL_SIZE;
        int fifoSize = 0;
        boolean layout = elemSize >= 8 && s.size() > elementsOffset;
        if (layout) {
            MemorySegment ctl = all.asSlice(ctlOffset, CTL_SIZE);
            int addrlen = ctl.get(JAVA_INT, SIGNAL_ADDRLEN);
            int family = Short.toUnsignedInt(ctl.get(JAVA_SHORT_UNALIGNED, SIGNAL_FAMILY));
            layout = (ctl.get(JAVA_LONG, HEAD) & ~EVENT_ARMED) == 0 && ctl.get(JAVA_LONG, TAIL) == 0 && family == AF_UNIX
                    && addrlen > 2 && addrlen <= 110;
            // UCX marks every element "owner bit set" at creation: empty for the first lap
            while (layout && elementsOffset + (long) (fifoSize + 1) * elemSize <= s.size()
                    && all.get(JAVA_BYTE, elementsOffset + (long) fifoSize * elemSize) == FLAG_OWNER) {
                fifoSize++;
            }
            layout = layout && fifoSize >= 2 && Integer.bitCount(fifoSize) == 1;
        }
        if (!layout) {
            detach(address);
            return null;
        }
        return new SysvReceiveFifo(s.shmid(), address, all.asSlice(ctlOffset, CTL_SIZE),
                all.asSlice(elementsOffset, (long) fifoSize * elemSize), fifoSize, elemSize);
    }

    private static void detach(long address) {
        try {
            long ignored = (long) Shmdt.MH.invokeExact(address, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("shmdt", t);
        }
    }

    int shmid() {
        return shmid;
    }

    int fifoSize() {
        return fifoSize;
    }

    /** The index the next sender will take (without the event bit). */
    long head() {
        long head = ctl.get(JAVA_LONG, HEAD);
        VarHandle.acquireFence();
        return head & ~EVENT_ARMED;
    }

    /** Up to where the receiver has released elements (it may have read a few beyond). */
    long tail() {
        long tail = ctl.get(JAVA_LONG, TAIL);
        VarHandle.acquireFence();
        return tail;
    }

    private long offset(long index) {
        return (index & (fifoSize - 1)) * elemSize;
    }

    /** The owner bit a written element of this index carries: it flips with every lap. */
    private int writtenOwnerBit(long index) {
        return (index & fifoSize) != 0 ? FLAG_OWNER : 0;
    }

    /**
     * Whether the element of this index was taken by a sender and is not written yet.
     * Only meaningful for {@code tail() <= index < head()}.
     */
    boolean isUnwritten(long index) {
        int flags = elements.get(JAVA_BYTE, offset(index));
        VarHandle.acquireFence();
        return (flags & FLAG_OWNER) != writtenOwnerBit(index);
    }

    /** The indexes between tail and head whose elements are taken and not written: being written, or torn. */
    long[] unwritten() {
        long tail = tail();
        long head = head();
        if (head - tail > fifoSize || head < tail) {
            return new long[0]; // read while a sender or the receiver moved; the caller looks again later
        }
        long[] found = new long[(int) (head - tail)];
        int n = 0;
        for (long i = tail; i < head; i++) {
            if (isUnwritten(i)) {
                found[n++] = i;
            }
        }
        return java.util.Arrays.copyOf(found, n);
    }

    /**
     * Writes the element of this index as an empty inline message for active-message id
     * {@link #UNUSED_AM_ID} and marks it written, as its sender would have: the receiver
     * hands it to UCT's stub handler (a warning) and goes on with the next element.
     */
    void complete(long index) {
        long at = offset(index);
        elements.set(JAVA_BYTE, at + ELEM_AM_ID, (byte) UNUSED_AM_ID);
        elements.set(JAVA_SHORT_UNALIGNED, at + ELEM_LENGTH, (short) 0);
        VarHandle.releaseFence();
        elements.set(JAVA_BYTE, at + ELEM_FLAGS, (byte) (FLAG_INLINE | writtenOwnerBit(index)));
        VarHandle.fullFence();
    }

    /**
     * Takes the element at {@code head} as a sender does first, and returns its index;
     * the element stays unwritten. For tests: a sender that dies right after this.
     */
    long takeElement() {
        while (true) {
            long head = (long) LONG.getVolatile(ctl, HEAD);
            if (LONG.compareAndSet(ctl, HEAD, head, (head + 1) & ~EVENT_ARMED)) {
                return head & ~EVENT_ARMED;
            }
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            detach(attachAddress);
        }
    }

    @Override
    public String toString() {
        return "sysv FIFO shmid " + shmid + " (" + fifoSize + " x " + elemSize + " B)";
    }
}
