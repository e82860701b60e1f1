package io.hadronio.nio;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.spi.AbstractSelectionKey;

/** A registration with a {@link HadronioSelector}. */
final class HadronioSelectionKey extends AbstractSelectionKey implements ReadySignal.Key {
    private static final VarHandle QUEUED;

    static {
        try {
            QUEUED = MethodHandles.lookup().findVarHandle(HadronioSelectionKey.class, "queued", int.class);
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private final SelectableChannel channel;
    private final HadronioSelector selector;
    // the interest set; read by the selecting thread at every selection
    private volatile int interestOps;
    // the ready set; written by the selecting thread
    private volatile int readyOps;
    // for channels of the JDK's provider: their fd, else -1
    final int platformFd;

    // ---- the selector's queue of keys to look at (see HadronioSelector) ----
    // 1 while the key waits in that queue: set by whoever queues it (any thread), cleared by the
    // selecting thread before it asks the channel, so that a change after the look queues it again
    @SuppressWarnings("unused") // through QUEUED
    private volatile int queued;
    // the next key in the queue (an intrusive stack); written before the push publishes it
    HadronioSelectionKey nextQueued;

    // ---- the selecting thread's bookkeeping (under the selector's lock) ----
    // the selection pass that last looked at the key, and the ops it found ready
    long pass;
    int passOps;
    // the fd this key has in its selector's epoll set (-1: none), the events it asks there, and
    // whether a spinning selection polls it (not a listener's)
    int epollFd = -1;
    int epollEvents;
    boolean epollSpin;

    // counted in its selector's connection keys (HadronioSelector.connectionKeys); guarded by this
    boolean countedAsConnection;

    // its place in its selector's selected-key set, -1 when not there (SelectedKeys; under that set's guards)
    int selectedIndex = -1;

    HadronioSelectionKey(SelectableChannel channel, HadronioSelector selector, int platformFd, int interestOps) {
        this.channel = channel;
        this.selector = selector;
        this.platformFd = platformFd;
        this.interestOps = interestOps;
    }

    @Override
    public SelectableChannel channel() {
        return channel;
    }

    @Override
    public Selector selector() {
        return selector;
    }

    private void ensureValid() {
        if (!isValid()) {
            throw new CancelledKeyException();
        }
    }

    @Override
    public int interestOps() {
        ensureValid();
        return interestOps;
    }

    @Override
    public SelectionKey interestOps(int ops) {
        ensureValid();
        if ((ops & ~channel.validOps()) != 0) {
            throw new IllegalArgumentException("Invalid interest ops " + ops + " for " + channel);
        }
        if (interestOps != ops) {
            interestOps = ops;
            queueForSelection();
            selector.interestChanged();
        }
        return this;
    }

    int interestOpsUnchecked() {
        return interestOps;
    }

    @Override
    public int readyOps() {
        ensureValid();
        return readyOps;
    }

    void readyOps(int ops) {
        readyOps = ops;
    }

    /** The ready set whether or not the key is valid: another thread may cancel it while a selection sets it. */
    int readyOpsUnchecked() {
        return readyOps;
    }

    /**
     * Queues the key for its selector's next pass unless it waits there already (any thread;
     * lock-free). The volatile read of {@code queued} comes after the caller's change, and the
     * selector clears it before it looks, so either this call queues the key again or the
     * selector's look sees the change.
     */
    @Override
    public void queueForSelection() {
        if ((int) QUEUED.getVolatile(this) == 0 && QUEUED.compareAndSet(this, 0, 1)) {
            selector.enqueue(this);
        }
    }

    /** Queues the key, and wakes its selector if it sleeps: for a readiness that comes without a UCX event. */
    @Override
    public void queueAndWake() {
        queueForSelection();
        selector.interestChanged();
    }

    /** The selecting thread took the key from the queue and is about to look at it. */
    void dequeued() {
        nextQueued = null;
        QUEUED.setVolatile(this, 0);
    }
}
