package io.hadronio.ucx;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The word descriptors carry C's narrower integers as the ABI says they may: an {@code int}
 * argument widened with its sign, an {@code int} result cut from the word, and an upcall's
 * {@code int} result read from the low bits of the word it returns.
 */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class WordCallsTest {
    private static final Linker LINKER = Linker.nativeLinker();

    private static MethodHandle libc(String name, int arity) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), WordCalls.word(arity));
    }

    @Test
    void intArgumentAndResultThroughAWord() throws Throwable {
        // int abs(int): a negative int widened with its sign, a result cut back to an int
        MethodHandle abs = libc("abs", 1);
        assertEquals(5, (int) (long) abs.invokeExact((long) -5));
        assertEquals(Integer.MAX_VALUE, (int) (long) abs.invokeExact((long) -Integer.MAX_VALUE));
        // int close(int) of a bad fd: -1, which a caller reading the whole word might see as 4294967295
        MethodHandle close = libc("close", 1);
        assertEquals(-1, (int) (long) close.invokeExact(-1L));
    }

    @Test
    void upcallResultIsReadFromItsLowBits() throws Throwable {
        // void qsort(void *base, size_t n, size_t size, int (*compar)(const void *, const void *));
        // the comparator returns its int in a word whose upper half is garbage on purpose
        MethodHandle qsort = LINKER.downcallHandle(LINKER.defaultLookup().find("qsort").orElseThrow(),
                WordCalls.noResult(4));
        MethodHandle compare = MethodHandles.lookup().findStatic(WordCallsTest.class, "compareInts",
                WordCalls.word(2).toMethodType());
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment comparator = LINKER.upcallStub(compare, WordCalls.word(2), arena);
            int[] values = {7, -3, 42, 0, -100, 5};
            MemorySegment array = arena.allocateFrom(JAVA_INT, values);
            qsort.invokeExact(array.address(), (long) values.length, 4L, comparator.address());
            assertArrayEquals(new int[] {-100, -3, 0, 5, 7, 42}, array.toArray(JAVA_INT));
        }
    }

    @SuppressWarnings("unused") // called from native code
    private static long compareInts(long a, long b) {
        int x = MemorySegment.ofAddress(a).reinterpret(4).get(JAVA_INT, 0);
        int y = MemorySegment.ofAddress(b).reinterpret(4).get(JAVA_INT, 0);
        return 0x5A5A_5A5A_0000_0000L | (Integer.compare(x, y) & 0xFFFF_FFFFL);
    }

    @Test
    void downcallsOfFewerArgumentsPassZerosTheFunctionNeverReads() throws Throwable {
        MethodHandle abs = LINKER.downcallHandle(LINKER.defaultLookup().find("abs").orElseThrow(), WordCalls.call(1));
        assertEquals(7, (int) (long) abs.invokeExact(-7L, 0L, 0L, 0L));
        // five arguments through the eight-word shape: on x86-64 the seventh and eighth on the stack
        // int select(int nfds, fd_set *r, fd_set *w, fd_set *e, struct timeval *timeout), timeout 0
        MethodHandle select = LINKER.downcallHandle(LINKER.defaultLookup().find("select").orElseThrow(),
                WordCalls.call(5));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment zeroTimeout = arena.allocate(16);
            assertEquals(0, (int) (long) select.invokeExact(0L, 0L, 0L, 0L, zeroTimeout.address(), 0L, 0L, 0L));
            // void qsort(base, n, size, compar) is four words already; void free(NULL) is one
            MethodHandle free = LINKER.downcallHandle(LINKER.defaultLookup().find("free").orElseThrow(),
                    WordCalls.voidCall(1));
            free.invokeExact(0L, 0L, 0L, 0L);
        }
    }

    @Test
    void downcallShapesAreFew() {
        assertSame(WordCalls.call(0), WordCalls.call(4));
        assertSame(WordCalls.call(5), WordCalls.call(8));
        assertEquals(WordCalls.SHORT, WordCalls.call(1).argumentLayouts().size());
        assertEquals(WordCalls.LONG, WordCalls.call(6).argumentLayouts().size());
        assertSame(WordCalls.voidCall(0), WordCalls.voidCall(4));
        assertThrows(IllegalArgumentException.class, () -> WordCalls.voidCall(5));
        assertThrows(IllegalArgumentException.class, () -> WordCalls.call(9));
    }

    @Test
    void oneDescriptorPerArity() {
        assertSame(WordCalls.word(3), WordCalls.word(3));
        assertSame(WordCalls.noResult(0), WordCalls.noResult(0));
        assertEquals(4, WordCalls.word(4).argumentLayouts().size());
        assertThrows(IllegalArgumentException.class, () -> WordCalls.word(9));
        assertThrows(IllegalArgumentException.class, () -> WordCalls.noResult(-1));
    }
}
