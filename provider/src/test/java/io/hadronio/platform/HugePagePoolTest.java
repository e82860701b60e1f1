package io.hadronio.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class HugePagePoolTest {
    private static final long AREA = 512 << 10;

    @Test
    void cutsAlignedChunksIntoDisjointAreasWithinTheBudgetAndFallsBackBeyondIt() throws Exception {
        HugePagePool pool = new HugePagePool(4L << 20);
        assumeTrue(pool.enabled(), "the kernel has no transparent huge pages");
        List<Arena> arenas = new ArrayList<>();
        Set<Long> chunks = new HashSet<>();
        Set<Long> addresses = new HashSet<>();
        for (int i = 0; i < 8; i++) {
            Arena arena = Arena.ofShared();
            arenas.add(arena);
            MemorySegment area = pool.allocate(AREA, arena);
            assertEquals(AREA, area.byteSize());
            assertEquals(0, area.address() % AREA, "block alignment");
            assertTrue(addresses.add(area.address()), "handed out twice");
            chunks.add(area.address() & -HugePagePool.CHUNK);
            // each area is its own: fill it with its index and read the other ones back below
            area.fill((byte) i);
        }
        assertEquals(2, chunks.size(), "four 512 KiB areas per 2 MiB chunk");
        assertEquals(4L << 20, pool.mappedBytes());
        assertEquals(8, pool.blocksInUse());
        for (Long chunk : chunks) {
            // ordinary pages, resident as touched, until a connection carries large messages (promote)
            assertEquals("nh", hugePageAdvice(chunk), "chunk 0x" + Long.toHexString(chunk) + " advised MADV_NOHUGEPAGE");
        }
        assertEquals(0, pool.hugeBytes());
        // the budget is spent: ordinary memory, as without the pool
        Arena beyond = Arena.ofShared();
        MemorySegment ordinary = pool.allocate(AREA, beyond);
        assertFalse(chunks.contains(ordinary.address() & -HugePagePool.CHUNK));
        assertEquals(4L << 20, pool.mappedBytes());
        beyond.close();
        int k = 0;
        for (Long address : addresses) {
            MemorySegment area = MemorySegment.ofAddress(address).reinterpret(AREA);
            byte first = area.get(ValueLayout.JAVA_BYTE, 0);
            assertEquals(first, area.get(ValueLayout.JAVA_BYTE, AREA - 1), "area " + k++ + " overwritten by another");
        }
        for (Arena arena : arenas) {
            arena.close();
        }
        assertEquals(0, pool.blocksInUse());
        // one empty chunk stays mapped for the next connection, the other is unmapped
        assertEquals(HugePagePool.CHUNK, pool.mappedBytes());
        // and is used again
        Arena again = Arena.ofShared();
        MemorySegment reused = pool.allocate(AREA, again);
        assertTrue(chunks.contains(reused.address() & -HugePagePool.CHUNK));
        assertEquals(HugePagePool.CHUNK, pool.mappedBytes());
        again.close();
    }

    @Test
    void sizesThatDoNotCutAChunkEvenlyAndSmallOnesAreOrdinaryMemory() {
        HugePagePool pool = new HugePagePool(64L << 20);
        for (long size : new long[] {3 * 64 << 10, 4096, 32 << 10, 4L << 20}) {
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment s = pool.allocate(size, arena);
                assertEquals(size, s.byteSize());
                s.fill((byte) 7);
            }
        }
        assertEquals(0, pool.mappedBytes());
        assertEquals(0, pool.blocksInUse());
    }

    @Test
    void aZeroBudgetTurnsThePoolOff() {
        HugePagePool pool = new HugePagePool(0);
        assertFalse(pool.enabled());
        try (Arena arena = Arena.ofConfined()) {
            pool.allocate(AREA, arena).fill((byte) 1);
        }
        assertEquals(0, pool.mappedBytes());
    }

    @Test
    void promotingAnAreaMovesItsChunkIntoAHugePageWithItsBytes() throws Exception {
        HugePagePool pool = new HugePagePool(4L << 20);
        assumeTrue(pool.enabled(), "the kernel has no transparent huge pages");
        try (Arena arena = Arena.ofShared()) {
            MemorySegment area = pool.allocate(AREA, arena);
            MemorySegment neighbour = pool.allocate(AREA, arena);
            long chunk = area.address() & -HugePagePool.CHUNK;
            assertEquals(chunk, neighbour.address() & -HugePagePool.CHUNK, "both in one chunk");
            // a connection of small messages writes a few pages
            for (long at = 0; at < AREA; at += 64 << 10) {
                area.set(ValueLayout.JAVA_LONG, at, at + 1);
            }
            neighbour.set(ValueLayout.JAVA_LONG, 8, 42);
            pool.promote(area.address());
            assertEquals("hg", hugePageAdvice(chunk));
            assertEquals(HugePagePool.CHUNK, pool.hugeBytes());
            for (long at = 0; at < AREA; at += 64 << 10) {
                assertEquals(at + 1, area.get(ValueLayout.JAVA_LONG, at), "byte " + at + " kept");
            }
            assertEquals(42, neighbour.get(ValueLayout.JAVA_LONG, 8), "the neighbour's bytes kept");
            // a second promotion of the chunk (the neighbour's connection) changes nothing
            pool.promote(neighbour.address());
            assertEquals(HugePagePool.CHUNK, pool.hugeBytes());
            // ordinary memory is left as it is
            MemorySegment ordinary = new HugePagePool(0).allocate(AREA, arena);
            pool.promote(ordinary.address());
            assertEquals(HugePagePool.CHUNK, pool.hugeBytes(), "promoting memory outside the pool changes nothing");
        }
    }

    /** The kernel's huge-page flag of the mapping that holds {@code address}: "hg" (MADV_HUGEPAGE), "nh" (MADV_NOHUGEPAGE) or "". */
    private static String hugePageAdvice(long address) throws Exception {
        boolean inside = false;
        for (String line : Files.readAllLines(Path.of("/proc/self/smaps"))) {
            if (line.matches("^[0-9a-f]+-[0-9a-f]+ .*")) {
                String[] range = line.substring(0, line.indexOf(' ')).split("-");
                inside = Long.parseUnsignedLong(range[0], 16) <= address && address < Long.parseUnsignedLong(range[1], 16);
            } else if (inside && line.startsWith("VmFlags:")) {
                List<String> flags = List.of(line.substring(8).trim().split(" "));
                return flags.contains("hg") ? "hg" : flags.contains("nh") ? "nh" : "";
            }
        }
        return "";
    }
}
