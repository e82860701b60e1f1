package io.hadronio.ucx;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.util.LinkedHashSet;
import java.util.Set;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The configuration keys UCX did not use: UCX applies a key it does not know itself to every
 * transport it opens for a worker, and when none took it, logs {@code invalid configuration:
 * KEY=VALUE} (a warning; {@code invalid configurations: K1=V1,K2=V2} for several) as the worker
 * is created. That is UCX's own verdict on a key: a misspelt one, or one for a transport this
 * process does not open here. This class listens for that message while a worker is created,
 * through a log handler that UCX calls before its own (which still prints the line).
 *
 * <p>The handler gets the message's format and its {@code va_list}; it formats a copy of the
 * list ({@code vsnprintf}), as {@code va_copy} would, so the handlers after it read the list
 * untouched. A copy is the list's bytes: 24 on x86-64, 32 on AArch64, where a {@code va_list}
 * argument arrives as a pointer on both. Only a message UCX dispatches is seen: with
 * {@code UCX_LOG_LEVEL} below {@code warn} there is nothing to see.
 */
public final class UcxUnusedKeys {
    private static final Logger LOG = System.getLogger(UcxUnusedKeys.class.getName());
    // reaches onLog, for the handler's stub
    private static final MethodHandles.Lookup LOOKUP = MethodHandles.lookup();
    // UCX 1.13's format: "s" for several, then KEY=VALUE pairs joined by commas
    private static final String FORMAT = "invalid configuration%s: %s";
    private static final String PREFIX = "invalid configuration";
    // ucs_log_func_rc_t
    private static final long CONTINUE = 1;
    private static final long VA_LIST_BYTES = System.getProperty("os.arch", "").matches("amd64|x86_64") ? 24 : 32;

    // one watch at a time in the JVM: UCX's handler list is global and not thread-safe
    private static final ReentrantLock WATCH = new ReentrantLock();
    // the reports of the current watch, or null between watches
    private static volatile Set<String> heard;

    private UcxUnusedKeys() {
    }

    /** Something that creates workers (and may fail as UCX does). */
    @FunctionalInterface
    public interface WorkerCreation<T> {
        T run() throws UcxException;
    }

    /**
     * Runs {@code creation} and adds to {@code reports} what UCX reported meanwhile as used by
     * none of its transports, as UCX wrote it: {@code KEY=VALUE} pairs joined by commas (a
     * value may hold commas too, so ask {@link #names} about a key you know).
     */
    public static <T> T watch(WorkerCreation<T> creation, Set<String> reports) throws UcxException {
        NativeLibraries.ensureAvailable();
        WATCH.lock();
        try {
            Set<String> mine = new LinkedHashSet<>();
            heard = mine;
            Native.push();
            try {
                return creation.run();
            } finally {
                Native.pop();
                heard = null;
                reports.addAll(mine);
            }
        } finally {
            WATCH.unlock();
        }
    }

    /** Whether {@code report} (from {@link #watch}) names {@code key}: a pair that starts with {@code key=}. */
    public static boolean names(String report, String key) {
        String pair = key + "=";
        return report.startsWith(pair) || report.contains("," + pair);
    }

    @SuppressWarnings("unused") // called from native code
    private static long onLog(long file, long line, long function, long level, long component, long format, long ap) {
        try {
            Set<String> reports = heard;
            if (reports == null || format == 0
                    || !FORMAT.equals(MemorySegment.ofAddress(format).reinterpret(Integer.MAX_VALUE).getString(0))) {
                return CONTINUE;
            }
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment copy = arena.allocate(VA_LIST_BYTES, 16);
                MemorySegment.copy(MemorySegment.ofAddress(ap).reinterpret(VA_LIST_BYTES), 0, copy, 0, VA_LIST_BYTES);
                MemorySegment text = arena.allocate(1024);
                long ignored = (long) Native.VSNPRINTF.invokeExact(text.address(), 1024L, format, copy.address());
                String message = text.getString(0);
                int colon = message.indexOf(": ");
                if (message.startsWith(PREFIX) && colon > 0) {
                    reports.add(message.substring(colon + 2));
                }
            }
        } catch (Throwable t) {
            // an exception escaping an upcall kills the JVM
            LOG.log(Level.DEBUG, "reading a UCX log message failed", t);
        }
        return CONTINUE;
    }

    /** The handler's stub and the downcalls, made when first watched. */
    private static final class Native {
        /** {@snippet lang=c : int vsnprintf(char *str, size_t size, const char *format, va_list ap); } */
        static final MethodHandle VSNPRINTF = NativeLibraries.downcall("vsnprintf", WordCalls.call(4));
        /** {@snippet lang=c : void ucs_log_push_handler(ucs_log_func_t handler); } */
        static final MethodHandle PUSH = NativeLibraries.downcall("ucs_log_push_handler", WordCalls.voidCall(1));
        /** {@snippet lang=c : void ucs_log_pop_handler(void); } */
        static final MethodHandle POP = NativeLibraries.downcall("ucs_log_pop_handler", WordCalls.voidCall(0));
        /**
         * {@snippet lang=c : ucs_log_func_rc_t (*ucs_log_func_t)(const char *file, unsigned line, const char *function,
         *     ucs_log_level_t level, const ucs_log_component_config_t *comp_conf, const char *message, va_list ap); }
         */
        static final MemorySegment HANDLER = Upcalls.stub(LOOKUP, "onLog", WordCalls.word(7));

        static void push() {
            try {
                PUSH.invokeExact(HANDLER.address(), 0L, 0L, 0L);
            } catch (Throwable t) {
                throw new AssertionError("ucs_log_push_handler", t);
            }
        }

        static void pop() {
            try {
                POP.invokeExact(0L, 0L, 0L, 0L);
            } catch (Throwable t) {
                throw new AssertionError("ucs_log_pop_handler", t);
            }
        }
    }
}
