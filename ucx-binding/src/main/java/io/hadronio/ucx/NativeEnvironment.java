package io.hadronio.ucx;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * The process environment as native code sees it ({@code getenv}/{@code setenv} of
 * libc, not {@link System#getenv()}, which is a copy taken when the JVM started).
 *
 * <p>Why the binding writes to it: some UCX settings are read by UCX's memory domains
 * from the environment only. {@code ucp_config_modify} applies a key to the transports'
 * interface configuration, not to their memory-domain configuration, and UCX 1.13 drops
 * such a key with a warning ({@code invalid configuration: CMA_MEMORY_INVALIDATE=y}) at
 * worker creation. {@code UCX_CMA_MEMORY_INVALIDATE} is one: see
 * {@link UcxContext.Builder#peerFailureDetection}.
 *
 * <p>{@code setenv} is not safe against a {@code getenv} running at the same time in
 * another thread. The binding calls it at most once per variable and process, under one
 * lock that also covers its own reads, before the first {@code ucp_config_read} that
 * needs it; the JVM itself reads its environment at start-up only. A variable that is set
 * already (by the user) is never changed, except the signal settings {@link NativeLibraries}
 * makes before libucs is loaded (a JVM must own those signals). The functions are libc's,
 * looked up without UCX, so that they work before UCX is loaded.
 */
final class NativeEnvironment {
    /** Held while the binding reads or writes the environment, and while a context is opened (UCX reads it then). */
    static final Object LOCK = new Object();

    private NativeEnvironment() {
    }

    /** {@snippet lang=c : char *getenv(const char *name); } */
    private static final class Getenv {
        static final MethodHandle MH = libc("getenv", WordCalls.call(1));
    }

    /** {@snippet lang=c : int setenv(const char *name, const char *value, int overwrite); } */
    private static final class Setenv {
        static final MethodHandle MH = libc("setenv", WordCalls.call(3));
    }

    private static MethodHandle libc(String name, FunctionDescriptor descriptor) {
        Linker linker = Linker.nativeLinker();
        return linker.downcallHandle(linker.defaultLookup().find(name).orElseThrow(), descriptor);
    }

    /** The variable's value in the native environment, or null when it is not set. */
    static String get(String name) {
        synchronized (LOCK) {
            try (Arena arena = Arena.ofConfined()) {
                long value = (long) Getenv.MH.invokeExact(arena.allocateFrom(name).address(), 0L, 0L, 0L);
                return value == 0 ? null : MemorySegment.ofAddress(value).reinterpret(Integer.MAX_VALUE).getString(0);
            } catch (Throwable t) {
                throw new AssertionError("getenv", t);
            }
        }
    }

    /**
     * Sets the variable unless it is set already; returns its value afterwards (the given
     * one, or the one found).
     */
    static String setIfAbsent(String name, String value) {
        synchronized (LOCK) {
            String present = get(name);
            if (present != null) {
                return present;
            }
            setenv(name, value);
            return value;
        }
    }

    /** Sets the variable, whatever it was. */
    static void set(String name, String value) {
        synchronized (LOCK) {
            setenv(name, value);
        }
    }

    private static void setenv(String name, String value) {
        try (Arena arena = Arena.ofConfined()) {
            int result = (int) (long) Setenv.MH.invokeExact(arena.allocateFrom(name).address(),
                    arena.allocateFrom(value).address(), 1L, 0L);
            if (result != 0) {
                throw new IllegalStateException("setenv(" + name + ") failed");
            }
        } catch (RuntimeException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("setenv", t);
        }
    }
}
