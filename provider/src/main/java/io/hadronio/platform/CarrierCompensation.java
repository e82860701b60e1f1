package io.hadronio.platform;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
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
 * JDK), a WARNING says so once and virtual threads pin their carriers as before.
 */
public final class CarrierCompensation {
    private static final Logger LOG = System.getLogger(CarrierCompensation.class.getName());
    private static final String PACKAGE = "jdk.internal.misc";
    // boolean Blocker.begin(), void Blocker.end(boolean); null when out of reach
    private static final MethodHandle BEGIN;
    private static final MethodHandle END;

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
