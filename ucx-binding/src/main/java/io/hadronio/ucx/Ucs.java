package io.hadronio.ucx;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/** Downcalls into libucs. Package-private: only the binding touches method handles. */
final class Ucs {
    private Ucs() {
    }

    /** {@snippet lang=c : const char *ucs_status_string(ucs_status_t status); } */
    private static final class StatusString {
        static final MethodHandle MH = NativeLibraries.downcall("ucs_status_string",
                WordCalls.call(1));
    }

    /** UCX's description of a status, or a plain number when UCX is not loaded. */
    static String statusString(int status) {
        if (NativeLibraries.failure() != null) {
            return "UCX status " + status;
        }
        try {
            long text = (long) StatusString.MH.invokeExact((long) status, 0L, 0L, 0L);
            return MemorySegment.ofAddress(text).reinterpret(256).getString(0);
        } catch (Throwable t) {
            throw new AssertionError("ucs_status_string", t);
        }
    }
}
