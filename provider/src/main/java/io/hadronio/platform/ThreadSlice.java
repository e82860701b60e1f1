package io.hadronio.platform;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * The calling thread's time slice under the kernel's fair scheduler ({@code sched_setattr(2)}'s
 * {@code sched_runtime} for {@code SCHED_OTHER}, Linux 6.12 and later; earlier kernels ignore
 * it). A thread with a slice shorter than the running thread's preempts it when it wakes up
 * (EEVDF's {@code PREEMPT_SHORT}); with the default slice it waits until the running thread's
 * slice is over, milliseconds. Nothing here throws: a kernel or a sandbox that refuses leaves
 * the slice as it was.
 */
public final class ThreadSlice {
    private static final long SYS_SCHED_SETATTR = 314; // x86_64
    private static final long SYS_SCHED_GETATTR = 315;
    private static final long SYS_GETTID = 186;
    private static final int ATTR_SIZE = 48;
    private static final MethodHandle SYSCALL;

    static {
        MethodHandle h = null;
        if ("amd64".equals(System.getProperty("os.arch")) || "x86_64".equals(System.getProperty("os.arch"))) {
            try {
                Linker linker = Linker.nativeLinker();
                h = linker.downcallHandle(linker.defaultLookup().find("syscall").orElseThrow(),
                        FunctionDescriptor.of(ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG,
                                ValueLayout.ADDRESS, ValueLayout.JAVA_LONG, ValueLayout.JAVA_LONG),
                        Linker.Option.firstVariadicArg(1));
            } catch (RuntimeException e) {
                h = null;
            }
        }
        SYSCALL = h;
    }

    private ThreadSlice() {
    }

    /** The calling thread's kernel id (0 when unknown: then {@link #set} applies to the caller). */
    public static long currentTid() {
        if (SYSCALL == null) {
            return 0;
        }
        try {
            long tid = (long) SYSCALL.invokeExact(SYS_GETTID, 0L, MemorySegment.NULL, 0L, 0L);
            return Math.max(0, tid);
        } catch (Throwable t) {
            return 0;
        }
    }

    /**
     * Sets thread {@code tid}'s slice (0: the caller's) to {@code nanos} (0: the kernel's
     * default) and returns the slice it had, or -1 when the kernel refused, the thread is gone
     * or not under the fair scheduler. Its policy and nice value stay as they are.
     */
    public static long set(long tid, long nanos) {
        if (SYSCALL == null) {
            return -1;
        }
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment attr = arena.allocate(ATTR_SIZE, 8);
            if ((long) SYSCALL.invokeExact(SYS_SCHED_GETATTR, tid, attr, (long) ATTR_SIZE, 0L) != 0
                    || attr.get(ValueLayout.JAVA_INT, 4) != 0 /* SCHED_OTHER */) {
                return -1;
            }
            long was = attr.get(ValueLayout.JAVA_LONG, 24); // sched_runtime (after flags, nice, priority)
            attr.set(ValueLayout.JAVA_INT, 0, ATTR_SIZE);
            attr.set(ValueLayout.JAVA_LONG, 8, 0L); // no flags: policy, nice and slice as given
            attr.set(ValueLayout.JAVA_LONG, 24, nanos);
            return (long) SYSCALL.invokeExact(SYS_SCHED_SETATTR, tid, attr, 0L, 0L) == 0 ? was : -1;
        } catch (Throwable t) {
            return -1;
        }
    }
}
