package io.hadronio.connection;

import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.Reactor;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.channels.SelectionKey;

/**
 * What a connection's owner has the control thread do for it, through the reactor's generic
 * hooks ({@link Reactor}): a lifecycle ticked until it has nothing more to finish, its control
 * records sent and read, an accelerated connection closed in order at a normal JVM exit. What
 * a record or a tick means is the owner's ({@link ConnectionLifecycle}); the reactor only keeps
 * the lists. (What the UCX halves have it do, flushing and freeing, is {@link UcxHousekeeping}'s.)
 */
public final class ConnectionControl {
    private static final Logger LOG = LazyLogger.of(ConnectionControl.class);

    private final Reactor reactor;
    // wakes every selector and thread sleeping on a worker
    private final Runnable wakeAll;
    // handshakes that ended accelerated since start, both directions (a diagnostic: control.accelerated.total);
    // written by the control thread only
    private volatile long accelerated;

    public ConnectionControl(Reactor reactor, Runnable wakeAll) {
        this.reactor = reactor;
        this.wakeAll = wakeAll;
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
        wakeAll.run();
    }

    /** Handshakes that ended accelerated since start, both directions. */
    public long accelerated() {
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
}
