package io.hadronio.platform;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Parks a virtual thread until an fd is readable, through the JDK's own poller
 * ({@code sun.nio.ch.Poller}), the way the JDK's selector waits in a virtual thread: the
 * thread unmounts, and its carrier runs the other virtual threads meanwhile.
 *
 * <p>Why not a {@code poll(2)} in a {@link CarrierCompensation} bracket: the
 * virtual-thread scheduler does not replace every carrier that blocks. With parallelism
 * <i>p</i> it keeps at least {@code jdk.virtualThreadScheduler.minRunnable} (default
 * <i>p</i>/2) carriers running and starts a spare only below that
 * ({@code ForkJoinPool.tryCompensate}). On two cores one selector asleep in
 * {@code poll(2)} left one carrier for every other virtual thread: JGroups' members (whose
 * selector loops, bundlers and handlers are virtual threads) multicast at 12,000-49,000
 * messages/s per member, and at 89,000-212,000 with {@code minRunnable=2}, in interleaved
 * rounds (docs/benchmarks/apps.md). The JDK's selector parks instead, and
 * its runs did not change with the setting.
 *
 * <p>A thread naps briefly before it parks ({@link #NAP_NANOS}). The poller's method is
 * package-private, so {@code sun.nio.ch} is opened to the unnamed modules
 * ({@link JdkInternals#ensureOpened}). Where that or the method is out of reach (another
 * JDK), {@link #available()} is false, a WARNING says so once, and callers keep the
 * bracketed wait.
 */
public final class VirtualThreadParking {
    /**
     * How long a virtual thread naps in {@code ppoll(2)} (its carrier held, in a
     * {@link CarrierCompensation} bracket) before it parks. An answer within it wakes the
     * thread at once; through the poller it takes a hop more (the poller thread wakes, then
     * the scheduler runs the thread), which on three unpinned JVMs on two cores took JGroups'
     * sequential RPCs from a p50 of 78 to 230 us. An idle selector (JGroups' FD_SOCK2) holds
     * its carrier no longer than this.
     */
    public static final long NAP_NANOS = 200_000;

    private static final Logger LOG = LazyLogger.of(VirtualThreadParking.class);
    private static final String PACKAGE = "sun.nio.ch";
    private static final BooleanSupplier OPEN = () -> true;

    /**
     * The poller's methods, looked up when a virtual thread first sleeps: looking them up
     * initializes the JDK's poller, which starts its threads, and a process whose threads
     * are all platform threads should not get them from us (a soak test counts its threads).
     */
    private static final class Handles {
        // static void Poller.pollSelector(int fdVal, long nanos) throws IOException; null when out of reach
        static final MethodHandle POLL_SELECTOR;
        // static void Poller.poll(int fdVal, int event, long nanos, BooleanSupplier isOpen) throws IOException
        static final MethodHandle POLL;
        // Net.POLLIN and Net.POLLOUT, the events Poller.poll takes
        static final int NET_POLLIN;
        static final int NET_POLLOUT;

        static {
            MethodHandle selector = null;
            MethodHandle poll = null;
            int in = 0;
            int out = 0;
            try {
                JdkInternals.ensureOpened(PACKAGE);
                Class<?> poller = Class.forName(PACKAGE + ".Poller");
                MethodHandles.Lookup lookup = MethodHandles.privateLookupIn(poller, MethodHandles.lookup());
                selector = lookup.findStatic(poller, "pollSelector",
                        MethodType.methodType(void.class, int.class, long.class));
                poll = lookup.findStatic(poller, "poll",
                        MethodType.methodType(void.class, int.class, int.class, long.class, BooleanSupplier.class));
                Class<?> net = Class.forName(PACKAGE + ".Net");
                MethodHandles.Lookup netLookup = MethodHandles.privateLookupIn(net, MethodHandles.lookup());
                in = (short) netLookup.findStaticGetter(net, "POLLIN", short.class).invokeExact();
                out = (short) netLookup.findStaticGetter(net, "POLLOUT", short.class).invokeExact();
            } catch (Throwable e) {
                LOG.log(Level.WARNING, "virtual threads that sleep in hadroNIO hold their carrier threads: " + e);
                selector = null;
                poll = null;
            }
            POLL_SELECTOR = selector;
            POLL = poll;
            NET_POLLIN = in;
            NET_POLLOUT = out;
        }
    }

    private VirtualThreadParking() {
    }

    /** True when the current thread is virtual and can park here. */
    public static boolean applies() {
        return Thread.currentThread().isVirtual() && Handles.POLL_SELECTOR != null;
    }

    /** Whether the JDK's poller is in reach (otherwise {@link #applies()} is always false). */
    public static boolean available() {
        return Handles.POLL_SELECTOR != null;
    }

    /**
     * Parks the current virtual thread until {@code fd} is readable, {@code timeoutMillis}
     * passed (negative: no limit; 0 is not a wait and returns at once), the thread is
     * interrupted or it is unparked spuriously. The caller looks at what is ready afterwards.
     * Only one thread may park on an fd at a time.
     */
    public static void parkUntilReadable(int fd, int timeoutMillis) throws IOException {
        if (timeoutMillis == 0) {
            return;
        }
        try {
            Handles.POLL_SELECTOR.invokeExact(fd, nanos(timeoutMillis));
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("Poller.pollSelector", t);
        }
    }

    /** As {@link #parkUntilReadable}, on a socket's fd, until it is writable ({@code output}) or readable. */
    public static void parkUntilReady(int fd, boolean output, int timeoutMillis) throws IOException {
        if (timeoutMillis == 0) {
            return;
        }
        int event = output ? Handles.NET_POLLOUT : Handles.NET_POLLIN;
        try {
            Handles.POLL.invokeExact(fd, event, nanos(timeoutMillis), OPEN);
        } catch (IOException | RuntimeException | Error e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("Poller.poll", t);
        }
    }

    // the poller takes 0 as "no limit"
    private static long nanos(int timeoutMillis) {
        return timeoutMillis < 0 ? 0 : TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
    }
}
