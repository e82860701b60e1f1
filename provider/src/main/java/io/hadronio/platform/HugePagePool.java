package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.hadronio.ucx.WordCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Connections' send and receive areas in transparent huge pages, up to a budget, once they carry
 * large messages; beyond the budget, or where the kernel has no transparent huge pages,
 * {@link NativeMemory}.
 *
 * <p>Why: with shared memory, UCX moves every message above its eager limit with
 * {@code process_vm_readv} ({@code cma}), which pins the sender's pages one by one, and both
 * copies of a message (application buffer ↔ area) walk the areas page by page. In 2 MiB pages a
 * 1 MiB round trip took ~210 µs instead of ~300 and a 256 KiB one ~55 µs instead of ~76
 * (docs/benchmarks/blocking.md).
 *
 * <p>How: 2 MiB chunks, each {@code mmap}ed on its own and aligned to 2 MiB, cut into equal blocks
 * of one area size (a power of two from 64 KiB to 2 MiB: the default 8 × 64 KiB area is a quarter
 * of a chunk). A chunk starts in ordinary pages ({@code MADV_NOHUGEPAGE}, also where the kernel
 * gives huge pages to every mapping): each page becomes resident when it is first written, so a
 * connection of small messages costs the pages its messages touch (a few per slot), not 2 MiB per
 * chunk. When a connection carries its first message of 32 KiB or more ({@link #promote}), the
 * chunks of its areas are advised {@code MADV_HUGEPAGE} and collapsed into a huge page at once
 * ({@code MADV_COLLAPSE}, Linux 6.1 and later; earlier kernels give the huge page to the parts of
 * the chunk not yet touched), resident as a whole from then on. So at most {@code budget} bytes
 * are ever mapped here ({@code hadronio.hugepages}), the rest of the connections get ordinary
 * memory. A chunk whose blocks are all free is unmapped, except one per area size kept for the next
 * connection (connection churn would otherwise fault in and zero 2 MiB each time).
 *
 * <p>Allocation happens at connection set-up and release, and promotion once per connection,
 * never on the data path of small messages, so one lock.
 */
public final class HugePagePool {
    /** The size of a transparent huge page on x86-64 and of our chunks. */
    public static final long CHUNK = 2L << 20;
    static final long MIN_BLOCK = 64L << 10;

    private static final Linker LINKER = Linker.nativeLinker();
    /** {@snippet lang=c : void *mmap(void *addr, size_t length, int prot, int flags, int fd, off_t offset); } */
    private static final MethodHandle MH$mmap = LINKER.downcallHandle(
            LINKER.defaultLookup().find("mmap").orElseThrow(),
            WordCalls.call(6));
    /** {@snippet lang=c : int munmap(void *addr, size_t length); } */
    private static final MethodHandle MH$munmap = LINKER.downcallHandle(
            LINKER.defaultLookup().find("munmap").orElseThrow(),
            WordCalls.call(2));
    /** {@snippet lang=c : int madvise(void *addr, size_t length, int advice); } */
    private static final MethodHandle MH$madvise = LINKER.downcallHandle(
            LINKER.defaultLookup().find("madvise").orElseThrow(),
            WordCalls.call(3));
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE_ANONYMOUS = 0x02 | 0x20;
    private static final int MADV_HUGEPAGE = 14;
    private static final int MADV_NOHUGEPAGE = 15;
    private static final int MADV_COLLAPSE = 25;

    /** One mapped chunk, cut into blocks of one size; {@code free} has a bit per free block. */
    private static final class Chunk {
        final long address;
        final long blockSize;
        final int blocks;
        long free;
        // advised into huge pages (promote): it stays so while mapped
        boolean huge;

        Chunk(long address, long blockSize) {
            this.address = address;
            this.blockSize = blockSize;
            this.blocks = (int) (CHUNK / blockSize);
            this.free = (1L << blocks) - 1; // at most 32 blocks (MIN_BLOCK)
        }

        boolean empty() {
            return Long.bitCount(free) == blocks;
        }

        int inUse() {
            return blocks - Long.bitCount(free);
        }
    }

    private final long budget;
    // chunks by address, and by block size those with a free block (guarded by this)
    private final Map<Long, Chunk> chunks = new HashMap<>();
    private final Map<Long, List<Chunk>> withFree = new HashMap<>();

    /**
     * @param budget most bytes mapped in huge-page chunks at once; 0, or a kernel without
     *               transparent huge pages, turns the pool off
     */
    public HugePagePool(long budget) {
        this.budget = budget >= CHUNK && transparentHugePagesUsable() ? budget : 0;
    }

    /** True when areas may come from huge pages here at all. */
    public boolean enabled() {
        return budget > 0;
    }

    /**
     * {@code size} bytes, aligned to at least 4 KiB, not zeroed, released with {@code arena}:
     * from a huge-page chunk when the size fits one (a power of two, 64 KiB to 2 MiB) and the
     * budget allows, otherwise from {@link NativeMemory}.
     */
    public MemorySegment allocate(long size, Arena arena) {
        if (budget > 0 && size >= MIN_BLOCK && size <= CHUNK && Long.bitCount(size) == 1) {
            long address = take(size);
            if (address != 0) {
                return MemorySegment.ofAddress(address).reinterpret(size, arena, s -> give(s.address()));
            }
        }
        return NativeMemory.allocate(size, arena);
    }

    /**
     * The area at {@code address} carries large messages: its chunk goes into a huge page
     * (advised {@code MADV_HUGEPAGE} and collapsed at once where the kernel can), with the bytes
     * it holds. Nothing for ordinary memory or a chunk promoted before. Best effort: a kernel that
     * refuses leaves the chunk as it was, still correct. Called once per connection.
     */
    public synchronized void promote(long address) {
        Chunk chunk = chunks.get(address & -CHUNK);
        if (chunk == null || chunk.huge) {
            return;
        }
        chunk.huge = true;
        advise(chunk.address, MADV_HUGEPAGE);
        // EINVAL before Linux 6.1, EAGAIN/ENOMEM without a free huge page: the chunk's untouched
        // parts still get huge pages when first touched
        advise(chunk.address, MADV_COLLAPSE);
    }

    /** Bytes mapped in chunks now (blocks in use and free ones; resident only where touched or promoted). */
    public synchronized long mappedBytes() {
        return chunks.size() * CHUNK;
    }

    /** Bytes of those chunks promoted into huge pages ({@link #promote}): resident as a whole. */
    public synchronized long hugeBytes() {
        return chunks.values().stream().filter(c -> c.huge).count() * CHUNK;
    }

    /** Blocks handed out and not given back yet. */
    public synchronized long blocksInUse() {
        return chunks.values().stream().mapToLong(Chunk::inUse).sum();
    }

    private synchronized long take(long blockSize) {
        List<Chunk> list = withFree.computeIfAbsent(blockSize, k -> new ArrayList<>());
        Chunk chunk = list.isEmpty() ? null : list.get(list.size() - 1);
        if (chunk == null) {
            if ((chunks.size() + 1) * CHUNK > budget) {
                return 0;
            }
            long address = mapChunk();
            if (address == 0) {
                return 0;
            }
            chunk = new Chunk(address, blockSize);
            chunks.put(address, chunk);
            list.add(chunk);
        }
        int block = Long.numberOfTrailingZeros(chunk.free);
        chunk.free &= ~(1L << block);
        if (chunk.free == 0) {
            list.remove(list.size() - 1);
        }
        return chunk.address + block * blockSize;
    }

    private synchronized void give(long address) {
        Chunk chunk = chunks.get(address & -CHUNK);
        if (chunk == null) {
            throw new IllegalStateException("not a huge-page block: 0x" + Long.toHexString(address));
        }
        int block = (int) ((address - chunk.address) / chunk.blockSize);
        List<Chunk> list = withFree.get(chunk.blockSize);
        if (chunk.free == 0) {
            list.add(chunk);
        }
        chunk.free |= 1L << block;
        if (chunk.empty()) {
            // keep one empty chunk per size for the next connection, unmap the others
            long emptyOnes = list.stream().filter(Chunk::empty).count();
            if (emptyOnes > 1) {
                list.remove(chunk);
                chunks.remove(chunk.address);
                unmap(chunk.address, CHUNK);
            }
        }
    }

    /**
     * True when the kernel gives transparent huge pages to a region that asks for them
     * ({@code always} or {@code madvise} in {@code /sys/kernel/mm/transparent_hugepage/enabled}).
     */
    static boolean transparentHugePagesUsable() {
        try {
            String mode = java.nio.file.Files.readString(java.nio.file.Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
            return mode.contains("[always]") || mode.contains("[madvise]");
        } catch (java.io.IOException | RuntimeException e) {
            return false;
        }
    }

    /** A fresh 2 MiB mapping aligned to 2 MiB, in ordinary pages until {@link #promote}; 0 when none could be had. */
    private static long mapChunk() {
        try {
            // map twice the size and cut off what lies before and after an aligned chunk
            long base = (long) MH$mmap.invokeExact(0L, 2 * CHUNK, (long) PROT_READ_WRITE, (long) MAP_PRIVATE_ANONYMOUS, -1L, 0L, 0L, 0L);
            if (base == -1L || base == 0L) {
                return 0;
            }
            long aligned = (base + CHUNK - 1) & -CHUNK;
            if (aligned > base) {
                unmap(base, aligned - base);
            }
            long end = base + 2 * CHUNK;
            if (end > aligned + CHUNK) {
                unmap(aligned + CHUNK, end - (aligned + CHUNK));
            }
            // where the kernel gives every mapping huge pages ("always"), the first touch would make
            // the whole chunk resident: ordinary pages until promote
            advise(aligned, MADV_NOHUGEPAGE);
            return aligned;
        } catch (Throwable t) {
            throw new AssertionError("mmap", t);
        }
    }

    /** {@code madvise} over one chunk; the result is ignored (advice a kernel refuses leaves ordinary pages). */
    private static void advise(long chunk, int advice) {
        try {
            long ignored = (long) MH$madvise.invokeExact(chunk, CHUNK, (long) advice, 0L);
        } catch (Throwable t) {
            throw new AssertionError("madvise", t);
        }
    }

    private static void unmap(long address, long length) {
        try {
            int r = (int) (long) MH$munmap.invokeExact(address, length, 0L, 0L);
            if (r != 0) {
                throw new IllegalStateException("munmap(0x" + Long.toHexString(address) + ", " + length + ") failed");
            }
        } catch (IllegalStateException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("munmap", t);
        }
    }
}
