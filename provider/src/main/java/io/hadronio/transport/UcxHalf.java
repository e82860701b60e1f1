package io.hadronio.transport;

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

    /** The worker the half's readers and writers wait on. */
    Sleepers group();

    /** The threads asleep on a worker: the owner wakes them whenever a fact of the connection changes. */
    interface Sleepers {
        /** Wakes every thread waiting on the worker, so that each asks its connection again. */
        void wakeSleepers();
    }
}
