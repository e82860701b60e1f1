package io.hadronio.platform;

import io.hadronio.ucx.WordCalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * How many bytes a socket's receive queue holds: {@code ioctl(fd, FIONREAD, &n)}, what the JDK's
 * socket streams answer {@code available()} with. Linked at the first use (few applications ask).
 */
public final class ReadableBytes {
    // FIONREAD on Linux (asm-generic ioctls: x86-64 and AArch64 alike)
    private static final long FIONREAD = 0x541B;

    private ReadableBytes() {
    }

    private static final class Ioctl {
        /** {@snippet lang=c : int ioctl(int fd, unsigned long request, ...); } its third argument a pointer. */
        static final MethodHandle MH = Linker.nativeLinker().downcallHandle(
                Linker.nativeLinker().defaultLookup().find("ioctl").orElseThrow(),
                WordCalls.word(3), Linker.Option.firstVariadicArg(2));
        // one int per thread that asks, kept while the thread lives
        static final ThreadLocal<MemorySegment> COUNT = ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(4));
    }

    /** The bytes {@code fd}'s receive queue holds now. */
    public static int of(int fd) throws IOException {
        MemorySegment count = Ioctl.COUNT.get();
        int r;
        try {
            r = (int) (long) Ioctl.MH.invokeExact((long) fd, FIONREAD, count.address());
        } catch (Throwable t) {
            throw new AssertionError("ioctl", t);
        }
        if (r != 0) {
            throw new IOException("ioctl(FIONREAD) failed on fd " + fd);
        }
        return count.get(ValueLayout.JAVA_INT, 0);
    }
}
