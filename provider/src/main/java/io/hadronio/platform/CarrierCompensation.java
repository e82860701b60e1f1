package io.hadronio.platform;

import io.hadronio.ucx.WordCalls;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;

/**
 * Brackets a native wait that may block ({@code poll(2)}, a UCX worker's event wait) so that a
 * virtual thread in it does not starve the others. An FFM downcall pins a virtual thread to
 * its carrier for as long as the call lasts, and the scheduler has only as many carriers as
 * cores: a few virtual threads blocked in hadroNIO's selectors (JGroups 5 runs its TCP_NIO2
 * selector loops on virtual threads) held every carrier, and no other virtual thread ran until
 * a poll timed out. The JDK brackets its own blocking system calls the same way, with
 * {@code jdk.internal.misc.Blocker}, which lets the scheduler add a carrier for the time;
 * we call it too (its package exported as {@link JdkInternals} does for {@code sun.nio.ch}).
 *
 * <p>On a platform thread both calls do nothing. If {@code Blocker} is out of reach (another
 * JDK), a WARNING says so once and virtual threads pin their carriers while they wait.
 *
 * <p>An adaptive waiter's spin is bracketed the same way ({@link #beginSpin}): a virtual thread
 * that spins, yielding the core ({@link #yieldCore}), is to the scheduler a carrier in a
 * blocking call, and the other virtual threads run on the carrier it adds. Without it a virtual
 * thread could not spin at all (its carrier is what the others need; a JVM pinned to one core
 * has one), and every message to a virtual-thread selector loop waited for the thread to wake
 * from {@code poll(2)} on an idle core: JGroups' sequential RPCs took 141 us (p50), where they take
 * 36-48 us with the spin (docs/benchmarks/apps.md).
 */
public final class CarrierCompensation {
    private static final Logger LOG = LazyLogger.of(CarrierCompensation.class);
    private static final String PACKAGE = "jdk.internal.misc";
    private static final String VM_PACKAGE = "jdk.internal.vm";
    // boolean Blocker.begin(), void Blocker.end(boolean); null when out of reach
    private static final MethodHandle BEGIN;
    private static final MethodHandle END;
    // static void Continuation.pin(), unpin(); null when out of reach (then no spin is compensated)
    private static final MethodHandle PIN;
    private static final MethodHandle UNPIN;
    // virtual threads in a beginSpin bracket, and how many may be: each holds a carrier the
    // scheduler added, and more spinning threads than cores only take turns on them (the rest
    // sleep at once, without spinning)
    private static final java.util.concurrent.atomic.AtomicInteger SPINNING = new java.util.concurrent.atomic.AtomicInteger();
    private static final int MAX_SPINNING = Runtime.getRuntime().availableProcessors();
    // int sched_yield(void)
    private static final MethodHandle SCHED_YIELD = Linker.nativeLinker().downcallHandle(
            Linker.nativeLinker().defaultLookup().find("sched_yield").orElseThrow(),
            WordCalls.call(0));

    static {
        MethodHandle begin = null;
        MethodHandle end = null;
        try {
            JdkInternals.ensureExported(PACKAGE);
            Class<?> blocker = Class.forName(PACKAGE + ".Blocker");
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            begin = lookup.findStatic(blocker, "begin", MethodType.methodType(boolean.class));
            end = lookup.findStatic(blocker, "end", MethodType.methodType(void.class, boolean.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.WARNING, "virtual threads that block in hadroNIO pin their carrier threads: " + e);
            begin = null;
            end = null;
        }
        BEGIN = begin;
        END = end;
        MethodHandle pin = null;
        MethodHandle unpin = null;
        if (begin != null) {
            try {
                JdkInternals.ensureExported(VM_PACKAGE);
                Class<?> continuation = Class.forName(VM_PACKAGE + ".Continuation");
                MethodHandles.Lookup lookup = MethodHandles.lookup();
                pin = lookup.findStatic(continuation, "pin", MethodType.methodType(void.class));
                unpin = lookup.findStatic(continuation, "unpin", MethodType.methodType(void.class));
            } catch (ReflectiveOperationException | RuntimeException e) {
                LOG.log(Level.WARNING, "virtual threads do not spin in hadroNIO's waits: " + e);
                pin = null;
                unpin = null;
            }
        }
        PIN = pin;
        UNPIN = unpin;
    }

    private CarrierCompensation() {
    }

    /**
     * Before a native wait: on a virtual thread, lets the scheduler add a carrier for the time.
     *
     * @return what {@link #end} needs: whether a carrier was asked for
     */
    public static boolean begin() {
        if (BEGIN == null || !Thread.currentThread().isVirtual()) {
            return false;
        }
        try {
            return (boolean) BEGIN.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError("Blocker.begin", t);
        }
    }

    /**
     * Before an adaptive waiter spins on, past its first microseconds: on a virtual thread,
     * lets the scheduler add a carrier for the time and pins the thread to its own, so that it
     * can neither unmount while the scheduler counts its carrier as blocked (a lock it waits
     * for parks the carrier, as a native wait would) nor keep the others from running. Spins
     * that yield should then yield with {@link #yieldCore}.
     *
     * @return what {@link #endSpin} needs: false on a platform thread, in a nested bracket, when
     *         as many virtual threads as the process has cores spin already, or when the JDK's
     *         internals are out of reach - then a virtual thread must not spin on
     */
    public static boolean beginSpin() {
        if (PIN == null || !Thread.currentThread().isVirtual()) {
            return false;
        }
        if (SPINNING.incrementAndGet() > MAX_SPINNING) {
            SPINNING.decrementAndGet();
            return false;
        }
        boolean attempted = false;
        try {
            PIN.invokeExact();
            attempted = (boolean) BEGIN.invokeExact();
            if (!attempted) {
                UNPIN.invokeExact();
            }
            return attempted;
        } catch (Throwable t) {
            throw new AssertionError("Blocker.begin", t);
        } finally {
            if (!attempted) {
                SPINNING.decrementAndGet();
            }
        }
    }

    /** How many virtual threads spin in a {@link #beginSpin} bracket now (for tests and monitoring). */
    public static int spinningVirtualThreads() {
        return SPINNING.get();
    }

    /** After the spin that {@link #beginSpin} preceded, before the waiter sleeps or returns. */
    public static void endSpin(boolean attempted) {
        if (!attempted) {
            return;
        }
        try {
            END.invokeExact(attempted);
            UNPIN.invokeExact();
        } catch (Throwable t) {
            throw new AssertionError("Blocker.end", t);
        } finally {
            SPINNING.decrementAndGet();
        }
    }

    /**
     * Gives the core to any thread queued for it ({@code sched_yield(2)}), also on a virtual
     * thread, where {@link Thread#yield()} would hand the carrier to another virtual thread
     * instead - wrong for a spin that {@link #beginSpin} made a blocking call: the other
     * virtual threads run on the added carrier, and that one needs the core.
     */
    public static void yieldCore() {
        try {
            long ignored = (long) SCHED_YIELD.invokeExact(0L, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("sched_yield", t);
        }
    }

    /** After the native wait that {@link #begin} preceded. */
    public static void end(boolean attempted) {
        if (!attempted) {
            return;
        }
        try {
            END.invokeExact(attempted);
        } catch (Throwable t) {
            throw new AssertionError("Blocker.end", t);
        }
    }
}
