package io.hadronio.transport;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.channels.SelectionKey;
import java.util.concurrent.TimeUnit;

/**
 * What connections have the control thread do for them, through the reactor's generic hooks
 * ({@link Reactor}): a lifecycle ticked until it has nothing more to finish, its control
 * records sent and read, an accelerated connection closed in order at a normal JVM exit, a
 * connection's held-back bytes flushed, and a released connection's memory freed once UCX
 * is done with it. What a record, a tick or a flush means is the connection's
 * ({@link ConnectionLifecycle}, {@link Connection}); how long a flush is watched and a free
 * waited for is decided here; the reactor only keeps the lists.
 */
public final class ConnectionControl {
    private static final Logger LOG = System.getLogger(ConnectionControl.class.getName());
    // how long a connection stays watched after its last held-back bytes left
    private static final long FLUSH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    // how long the UCX requests a release found in flight may take before the memory is given up on (left allocated)
    private static final long FREE_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);
    // how often the control thread looks at them
    private static final long FREE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final Reactor reactor;
    private final UcxRuntime runtime;
    // connections whose accepted bytes wait for a credit or for our worker's progress (Connection.watchSends),
    // handed over by writers without a task
    private final Reactor.RetryList<Connection> flushing;
    // released connections whose memory waits for UCX requests in flight to end (Connection.freeIfDone)
    private final Reactor.RetryList<Connection> freeing;
    // handshakes that ended accelerated since start, both directions (a diagnostic: control.accelerated.total);
    // written by the control thread only
    private volatile long accelerated;

    ConnectionControl(Reactor reactor, UcxRuntime runtime) {
        this.reactor = reactor;
        this.runtime = runtime;
        this.flushing = reactor.retryList("control.flushing", 0, ConnectionControl::flushSends);
        this.freeing = reactor.retryList("control.freeing", FREE_EVERY_NANOS, ConnectionControl::freeMemory);
    }

    /** The reactor the connections' control thread is. */
    Reactor reactor() {
        return reactor;
    }

    /** Runs a task on the control thread. */
    public void execute(Runnable task) {
        reactor.execute(task);
    }

    /** Wakes every selector and thread sleeping on a worker (a connect's outcome is there). */
    void wakeSelectors() {
        runtime.wakeAll();
    }

    /** Handshakes that ended accelerated since start, both directions. */
    long accelerated() {
        return accelerated;
    }

    // ---- control records and the exit --------------------------------------------------------

    /**
     * A handshake ended accelerated (control thread): from now on the socket of {@code key}
     * carries {@code life}'s control records, and a normal JVM exit must close {@code life} in order.
     */
    void established(SelectionKey key, ConnectionLifecycle life) {
        key.attach(new ControlRecordReader(life));
        reactor.closeAtExit(life);
        accelerated++;
    }

    /** Sends a control record on {@code life}'s socket; a peer that does not take it is only logged. */
    void send(ConnectionLifecycle life, byte type, long value) {
        try {
            Reactor.writeFully(life.tcp, ControlRecord.encode(type, value));
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "control connection: could not send record " + type, e);
        }
    }

    /** An upgraded connection's output moved to UCX: a normal JVM exit must close it in order. */
    void track(ConnectionLifecycle life) {
        reactor.execute(() -> reactor.closeAtExit(life));
    }

    /** An upgraded connection's input moved to UCX: what follows the raw bytes on its socket are control records. */
    void readRecords(ConnectionLifecycle life) {
        reactor.execute(() -> {
            if (life.state() >= ConnectionLifecycle.CLOSED || !life.tcp.isOpen()) {
                return;
            }
            try {
                SelectionKey key = reactor.keyFor(life.tcp);
                if (key == null) {
                    reactor.register(life.tcp, SelectionKey.OP_READ, new ControlRecordReader(life));
                } else {
                    key.attach(new ControlRecordReader(life));
                    key.interestOps(SelectionKey.OP_READ);
                }
                reactor.closeAtExit(life);
            } catch (IOException | java.nio.channels.CancelledKeyException e) {
                // closed meanwhile
            }
        });
    }

    /** {@code life}'s socket leaves the control thread's selector (before it closes). Control thread. */
    void forget(ConnectionLifecycle life) {
        reactor.removeExitClose(life);
        SelectionKey key = reactor.keyFor(life.tcp);
        if (key != null) {
            key.cancel();
        }
    }

    // ---- timers: what connections have to finish ------------------------------------------------

    /** Ticks {@code life} every millisecond until it has nothing more to finish ({@link ConnectionLifecycle#tick}). */
    void watch(ConnectionLifecycle life) {
        if (reactor.inReactorThread()) {
            if (life.startTicking()) {
                reactor.tickUntilDone(life);
            }
        } else {
            reactor.execute(() -> watch(life));
        }
    }

    /**
     * Progresses a connection's worker and sends its bytes that wait for credits (every
     * millisecond) until none wait and no send is in flight: a blocking write returned once it
     * accepted them, and they must leave even if the application never calls in again (a UCX
     * rendezvous leaves only while its sender progresses: Connection.watchSends). Any thread,
     * without a task.
     */
    void flushUntilSent(Connection connection) {
        flushing.request(connection);
    }

    /**
     * Flushes held-back bytes. A connection stays on the list for a while after its last
     * held-back bytes left, so that a streaming writer, which holds bytes back again and
     * again, does not have to wake the control thread each time.
     */
    private static int flushSends(Connection c, long idleNanos) {
        if (c.flushFromControl()) {
            return Reactor.Retry.BUSY;
        }
        return idleNanos > FLUSH_GRACE_NANOS && c.endFlushWatch() ? Reactor.Retry.DONE : Reactor.Retry.IDLE;
    }

    /**
     * Frees {@code connection}'s memory once the UCX requests its release found in flight have
     * ended: a send the peer takes a little later, a receive finishing its rendezvous. Any thread.
     */
    void freeWhenDone(Connection connection) {
        reactor.execute(() -> freeing.add(connection));
    }

    private static int freeMemory(Connection c, long idleNanos) {
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
