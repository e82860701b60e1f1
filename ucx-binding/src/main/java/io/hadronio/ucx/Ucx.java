package io.hadronio.ucx;

/**
 * Entry point of the binding: is UCX usable in this process, and which version.
 *
 * <p>The first call loads libucs, libuct and libucp from the system (Debian package
 * {@code libucx0}), disables UCX's signal handlers, and refuses UCX older than 1.13.
 */
public final class Ucx {
    private Ucx() {
    }

    /** True when the UCX libraries loaded and are recent enough. Never throws. */
    public static boolean isAvailable() {
        return NativeLibraries.failure() == null;
    }

    /** Why UCX is not usable, or null when it is. */
    public static UcxUnavailableException unavailableReason() {
        return NativeLibraries.failure();
    }

    /**
     * Throws {@link UcxUnavailableException} (naming the package to install) unless UCX is usable.
     */
    public static void ensureAvailable() {
        NativeLibraries.ensureAvailable();
    }

    /**
     * Java targets that UCX may call back (endpoints' error handlers, active-message
     * handlers, completion callbacks), registered in this JVM and not released yet. A
     * diagnostic: one that grows with every connection made and closed is a leak.
     */
    public static int upcallTargets() {
        return Upcalls.registered();
    }

    /** The version of the loaded libucp, e.g. "1.13.1". */
    public static String version() {
        ensureAvailable();
        int[] v = NativeLibraries.version();
        return v[0] + "." + v[1] + "." + v[2];
    }
}
