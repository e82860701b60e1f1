package io.hadronio.ucx;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.SymbolLookup;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Loads the system's UCX libraries once per JVM and resolves symbols from them.
 *
 * <p>Loading does three things besides {@code dlopen}: it keeps libucs from taking over
 * the signals the JVM owns; it reads the library version; and it refuses versions older
 * than {@link #MIN_MAJOR}.{@link #MIN_MINOR}. A failure is remembered and reported, never
 * thrown from a class initialiser.
 *
 * <p>The signals: libucs's constructor installs handlers for SIGSEGV, SIGBUS, SIGILL and
 * SIGFPE ({@code UCX_ERROR_SIGNALS}) and SIGHUP ({@code UCX_DEBUG_SIGNO}) that print a
 * backtrace and kill the process. The JVM raises SIGSEGV on purpose (safepoint polls in
 * compiled loops, implicit null checks, stack guard pages), so with UCX's handler in place
 * the JVM dies at the next of those. Restoring the JVM's handlers after loading
 * ({@code ucs_debug_disable_signals}) leaves a window in which any other thread's safepoint
 * poll kills the JVM (with JFR's sampling on, while loading UCX; regression: UcxSignalsTest).
 * So the environment tells libucs not to install them at all, before it is loaded, and
 * the restore after loading stays for a libucs someone else loaded first.
 */
final class NativeLibraries {
    static final int MIN_MAJOR = 1;
    static final int MIN_MINOR = 13;
    static final String DEBIAN_PACKAGES = "libucx0 (runtime), ucx-utils and libucx-dev (tools, headers)";
    static final String INSTALL_HINT = "install UCX >= " + MIN_MAJOR + "." + MIN_MINOR
            + ", on Debian/Ubuntu: apt-get install libucx0 ucx-utils libucx-dev";

    static final Linker LINKER = Linker.nativeLinker();

    // every UCX symbol is looked up here; null when loading failed
    private static final SymbolLookup LOOKUP;
    // why loading failed; null when UCX is usable
    private static final UcxUnavailableException FAILURE;
    // the version libucp reports, e.g. {1, 13, 1}
    private static final int[] VERSION;

    static {
        SymbolLookup lookup = null;
        UcxUnavailableException failure = null;
        int[] version = {0, 0, 0};
        try {
            keepSignalsFromUcx();
            SymbolLookup ucs = open("libucs.so.0");
            open("libuct.so.0");
            SymbolLookup ucp = open("libucp.so.0");
            lookup = ucp.or(ucs).or(LINKER.defaultLookup());
            disableSignalHandlers(lookup);
            version = readVersion(lookup);
            if (version[0] < MIN_MAJOR || (version[0] == MIN_MAJOR && version[1] < MIN_MINOR)) {
                failure = new UcxUnavailableException("UCX " + version[0] + "." + version[1] + "." + version[2]
                        + " is too old: " + INSTALL_HINT);
            }
        } catch (UcxUnavailableException e) {
            failure = e;
        } catch (Throwable t) {
            failure = new UcxUnavailableException("UCX could not be loaded (" + t + "): " + INSTALL_HINT, t);
        }
        LOOKUP = failure == null ? lookup : null;
        FAILURE = failure;
        VERSION = version;
    }

    private NativeLibraries() {
    }

    private static SymbolLookup open(String name) {
        try {
            return SymbolLookup.libraryLookup(name, Arena.global());
        } catch (IllegalArgumentException e) {
            throw new UcxUnavailableException(name + " could not be loaded (" + e.getMessage() + "; package "
                    + DEBIAN_PACKAGES + "): " + INSTALL_HINT, e);
        }
    }

    /**
     * Sets {@code UCX_ERROR_SIGNALS} to none and {@code UCX_DEBUG_SIGNO} to 0 in this
     * process's environment, which libucs reads when it is loaded: the JVM must own those
     * signals, so a value the user set is replaced too (it could only kill the JVM).
     */
    private static void keepSignalsFromUcx() {
        NativeEnvironment.set("UCX_ERROR_SIGNALS", "");
        NativeEnvironment.set("UCX_DEBUG_SIGNO", "0");
    }

    private static void disableSignalHandlers(SymbolLookup lookup) throws Throwable {
        MethodHandle disable = LINKER.downcallHandle(find(lookup, "ucs_debug_disable_signals"),
                WordCalls.voidCall(0));
        disable.invokeExact(0L, 0L, 0L, 0L);
    }

    private static int[] readVersion(SymbolLookup lookup) throws Throwable {
        MethodHandle getVersion = LINKER.downcallHandle(find(lookup, "ucp_get_version"),
                WordCalls.voidCall(3));
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment parts = arena.allocate(ValueLayout.JAVA_INT, 3);
            getVersion.invokeExact(parts.address(), parts.address() + 4, parts.address() + 8, 0L);
            return new int[] {parts.getAtIndex(ValueLayout.JAVA_INT, 0),
                    parts.getAtIndex(ValueLayout.JAVA_INT, 1), parts.getAtIndex(ValueLayout.JAVA_INT, 2)};
        }
    }

    private static MemorySegment find(SymbolLookup lookup, String name) {
        return lookup.find(name).orElseThrow(() ->
                new UcxUnavailableException("symbol " + name + " missing from the UCX libraries: " + INSTALL_HINT));
    }

    /** Throws the load failure, if any. */
    static void ensureAvailable() {
        if (FAILURE != null) {
            throw FAILURE;
        }
    }

    static UcxUnavailableException failure() {
        return FAILURE;
    }

    static int[] version() {
        return VERSION.clone();
    }

    /** A downcall handle for a UCX (or libc) function; only valid when UCX is available. */
    static MethodHandle downcall(String name, FunctionDescriptor descriptor, Linker.Option... options) {
        ensureAvailable();
        return LINKER.downcallHandle(find(LOOKUP, name), descriptor, options);
    }
}
