package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import io.hadronio.ucx.WordCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Native memory that costs nothing until it is touched: {@code Arena.allocate} zeroes
 * what it hands out (so every page becomes resident at once), while large {@code malloc}
 * blocks are fresh {@code mmap}s whose pages appear only when written. A connection's
 * receive and send slices are mostly idle, so 1,000 connections would otherwise pin
 * a gigabyte for nothing. Freed when the owning arena closes.
 */
public final class NativeMemory {
    private static final Linker LINKER = Linker.nativeLinker();
    /** {@snippet lang=c : void *aligned_alloc(size_t alignment, size_t size); } */
    private static final MethodHandle MH$aligned_alloc = LINKER.downcallHandle(
            LINKER.defaultLookup().find("aligned_alloc").orElseThrow(),
            WordCalls.call(2));
    /** {@snippet lang=c : void free(void *ptr); } */
    private static final MethodHandle MH$free = LINKER.downcallHandle(
            LINKER.defaultLookup().find("free").orElseThrow(), WordCalls.voidCall(1));

    private NativeMemory() {
    }

    /**
     * {@code size} bytes aligned to 4 KiB, not zeroed, released with {@code arena}.
     *
     * @throws OutOfMemoryError when the C library has no memory left
     */
    public static MemorySegment allocate(long size, Arena arena) {
        long alignment = 4096;
        long rounded = (size + alignment - 1) / alignment * alignment;
        long address;
        try {
            address = (long) MH$aligned_alloc.invokeExact(alignment, rounded, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("aligned_alloc", t);
        }
        if (address == 0) {
            throw new OutOfMemoryError("aligned_alloc(" + rounded + ") failed");
        }
        return MemorySegment.ofAddress(address).reinterpret(size, arena, segment -> free(segment.address()));
    }

    private static void free(long address) {
        try {
            MH$free.invokeExact(address, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("free", t);
        }
    }
}
