package io.hadronio.connection;

import io.hadronio.worker.WorkerGroup;

import java.io.IOException;

/**
 * What a connection's owner ({@link ConnectionLifecycle}, {@link ConnectionEnding}) needs of its
 * UCX half: the counts a close in order compares, the end of our output, the wait for the peer's
 * last messages, and the freeing. The owner names only this; the data path that implements it
 * (receive slices, send slots, credits) is the channel side's. Which thread calls what is the
 * owner's Javadoc; none of these is on a read or write path.
 */
public interface UcxHalf {
    /**
     * Our output ends for the peer: writes see it from now on and post nothing more, bytes held
     * back for a credit are dropped. Returns how many DATA messages we posted in all.
     */
    long endOutput();

    /**
     * Every send we posted completed locally (DATA and CREDIT messages), so closing loses
     * nothing; progresses once. Throws when a send failed (the peer is gone).
     */
    boolean sendsComplete() throws IOException;

    /** How many DATA messages we posted so far (the count our FIN announces). */
    long messagesSent();

    /** How many of our DATA messages the peer took so far (its credits): the close's linger restarts with each. */
    long messagesTaken();

    /** How many DATA messages of the peer arrived and were consumed. */
    long messagesConsumed();

    /**
     * Progress for a peer that nudged us (control thread); false once there is nothing more to
     * take for it.
     */
    boolean progressForPeer();

    /**
     * Progresses, and takes and drops the peer's DATA messages that arrived: true once
     * {@code upTo} did (never while it is not known, -1), or when nothing more can arrive.
     */
    boolean discardInput(long upTo);

    /** The peer died or reset: its endpoint closes by force, so that sends it never took complete now. */
    void abortEndpoint();

    /** Frees the half (the endpoint's use, receives, memory) once nothing of it is in flight. */
    void release();

    /** The transports UCX uses for it, e.g. {@code [cma, sysv]}. */
    String transports();

    /** The worker group the half's readers and writers wait on (the owner wakes its sleepers on every fact). */
    WorkerGroup group();

    // ---- for the handshakes and the upgrade, which set the half up ------------------------------

    /** Our id for the connection: the peer tags its messages to us with it. */
    int localId();

    /** The size of our receive slices, which the peer's messages must fit. */
    int rxSliceSize();

    /** How many receive slices we posted: the peer's initial credits. */
    int rxSliceCount();

    /** Connects to the peer's half, as its hello describes it. */
    void connect(int peerId, int peerSliceSize, int peerSliceCount, byte[] peerWorkerAddress)
            throws io.hadronio.ucx.UcxException;

    /** True when UCX reaches the peer only over TCP (where the kernel's TCP serves better). */
    boolean onlyTcp();
}
