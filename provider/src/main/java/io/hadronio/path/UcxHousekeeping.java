package io.hadronio.path;

import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.Reactor;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.concurrent.TimeUnit;

/**
 * What the UCX halves of connections ({@link Chores}) have the control thread do for them,
 * through the reactor's retry lists ({@link Reactor#retryList}): bytes a writer left held back
 * sent once credits come, and a released connection's memory freed once UCX is done with it.
 * How long a flush is watched and a free waited for is decided here; what a flush or a free
 * does is the connection's.
 */
public final class UcxHousekeeping {
    private static final Logger LOG = LazyLogger.of(UcxHousekeeping.class);
    // how long a connection stays watched after its last held-back bytes left
    private static final long FLUSH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    // how long the UCX requests a release found in flight may take before the memory is given up on (left allocated)
    private static final long FREE_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);
    // how often the control thread looks at them
    private static final long FREE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Reactor reactor;
    // connections whose accepted bytes wait for a credit or for our worker's progress (Connection.FlushWatch),
    // handed over by writers without a task
    private final Reactor.RetryList<Chores> flushing;
    // released connections whose memory waits for UCX requests in flight to end (Connection.freeIfDone)
    private final Reactor.RetryList<Chores> freeing;

    /** What a UCX half does when the control thread flushes it or frees it. Control thread. */
    public interface Chores {
        /** Progresses and sends what waited for credits; true while there was something to do. */
        boolean flushFromControl();

        /** The watch ends: true unless bytes are held back or a send is in flight meanwhile. */
        boolean endFlushWatch();

        /** Frees the memory once the requests a release found in flight ended: true once freed. */
        boolean freeIfDone();

        /** The requests did not end in time: their memory is left allocated. */
        void abandonInFlight();
    }

    public UcxHousekeeping(Reactor reactor) {
        this.reactor = reactor;
        this.flushing = reactor.retryList("control.flushing", 0, UcxHousekeeping::flushSends);
        this.freeing = reactor.retryList("control.freeing", FREE_EVERY_NANOS, UcxHousekeeping::freeMemory);
    }

    /**
     * Progresses a connection's worker and sends its bytes that wait for credits (every
     * millisecond) until none wait and no send is in flight: a blocking write returned once it
     * accepted them, and they must leave even if the application never calls in again (a UCX
     * rendezvous leaves only while its sender progresses: the UCX half's flush watch). Any thread,
     * without a task.
     */
    public void flushUntilSent(Chores connection) {
        flushing.request(connection);
    }

    /**
     * Flushes held-back bytes. A connection stays on the list for a while after its last
     * held-back bytes left, so that a streaming writer, which holds bytes back again and
     * again, does not have to wake the control thread each time.
     */
    private static int flushSends(Chores c, long idleNanos) {
        if (c.flushFromControl()) {
            return Reactor.Retry.BUSY;
        }
        return idleNanos > FLUSH_GRACE_NANOS && c.endFlushWatch() ? Reactor.Retry.DONE : Reactor.Retry.IDLE;
    }

    /**
     * Frees {@code connection}'s memory once the UCX requests its release found in flight have
     * ended: a send the peer takes a little later, a receive finishing its rendezvous. Any thread.
     */
    public void freeWhenDone(Chores connection) {
        reactor.execute(() -> freeing.add(connection));
    }

    private static int freeMemory(Chores c, long idleNanos) {
        if (c.freeIfDone()) {
            return Reactor.Retry.DONE;
        }
        if (idleNanos > FREE_PATIENCE_NANOS) {
            LOG.log(Level.DEBUG, "connection memory left allocated: UCX requests did not end in time");
            c.abandonInFlight();
            return Reactor.Retry.DONE;
        }
        return Reactor.Retry.IDLE;
    }
}
