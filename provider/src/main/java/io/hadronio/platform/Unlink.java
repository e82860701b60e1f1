package io.hadronio.platform;

import io.hadronio.ucx.WordCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * Removes a file with one {@code unlink(2)}: {@code Files.deleteIfExists} asks {@code statx}
 * first (is it a directory?), which made a local stream's look for its peer's reset mark
 * (connection/LocalStreams, once per connection) two system calls and 7-9 % of a short
 * connection's samples.
 */
public final class Unlink {
    private static final Linker LINKER = Linker.nativeLinker();
    /** {@snippet lang=c : int unlink(const char *path); } */
    private static final MethodHandle MH$unlink = LINKER.downcallHandle(
            LINKER.defaultLookup().find("unlink").orElseThrow(), WordCalls.word(1));

    private Unlink() {
    }

    /** True when {@code path} (not a directory) existed and is gone; false when it did not exist or stays. */
    public static boolean unlink(String path) {
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment p = arena.allocateFrom(path);
            return (int) (long) MH$unlink.invokeExact(p.address()) == 0;
        } catch (Throwable e) {
            return false;
        }
    }
}
