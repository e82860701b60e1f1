package io.hadronio.connection;

import static io.hadronio.connection.LifecycleTable.*;

/**
 * The decisions of a connection's ending ({@link ConnectionEnding}) that depend on clocks and
 * counts, which {@link LifecycleTable} leaves out: whether the close's linger is over, whether a
 * closing side nudges its peer, and how the wait for the peer's last messages goes on. Pure
 * functions: inputs in, verdict out; no sockets, threads, clocks or fields. The control thread
 * gathers the inputs, asks, and performs what the verdict says. {@code EndingVerdictsTest}
 * walks them row by row.
 */
final class EndingVerdicts {
    private EndingVerdicts() {
    }

    // ---- the close's linger ------------------------------------------------------------------

    /** The peer took a message since the linger last started (or it never started): it starts over now. */
    static final int LINGER_RESTARTS = 0;
    /** The peer took nothing since, but the linger has time left. */
    static final int LINGER_GOES_ON = 1;
    /** The peer took nothing for longer than the linger: the connection is reset. */
    static final int LINGER_OVER = 2;

    /**
     * Whether a closed connection whose peer takes none of its last bytes keeps them: the
     * linger started at {@code from} (0: never) when the peer had taken {@code takenThen} of
     * our messages; now it has taken {@code taken}.
     */
    static int linger(long from, long takenThen, long taken, long now, long lingerNanos) {
        if (from == 0 || taken != takenThen) {
            return LINGER_RESTARTS;
        }
        return now - from > lingerNanos ? LINGER_OVER : LINGER_GOES_ON;
    }

    // ---- the nudge ---------------------------------------------------------------------------

    /**
     * A closing side whose sends are outstanding asks its peer, once, to take them (the peer may
     * not be reading, and so not progressing): where the table allows it ({@code MAY_NUDGE}), not
     * nudged yet, and the drain began more than {@code afterNanos} ago.
     */
    static boolean nudgeDue(long actions, boolean nudged, long drainStarted, long now, long afterNanos) {
        return (actions & MAY_NUDGE) != 0 && !nudged && now - drainStarted > afterNanos;
    }

    // ---- the wait for the peer's last messages -----------------------------------------------

    /** The wait is over: the connection broke, the deadline passed, or no count will come. */
    static final int PEER_END_OVER = 0;
    /** Take (and drop) the peer's DATA messages up to its count. */
    static final int TAKE_MESSAGES = 1;
    /**
     * First read and drop the peer's raw bytes before its switch point: its records (the FIN
     * the wait needs) follow them on the kernel socket. Then take its messages.
     */
    static final int DISCARD_RAW_FIRST = 2;

    /**
     * How the wait for the peer's last messages goes on, from the word {@code w}, the peer's
     * announced count {@code fin} (-1: none yet), whether the deadline passed, whether the count
     * comes over the upgrade session ({@code bySession}) and whether the session said it never
     * will ({@code lost}). By the session, the kernel socket's end or reset says nothing of the
     * count: the peer answers before it closes.
     */
    static int peerEnd(int w, long fin, boolean late, boolean bySession, boolean lost) {
        if ((w & RESET) != 0 || late || fin < 0 && (bySession ? lost : (w & CONTROL_EOF) != 0)) {
            return PEER_END_OVER;
        }
        if (!bySession && (w & IN_UCX) == 0 && (w & IN_LIMIT) != 0) {
            // the peer's raw bytes before its switch, unread: its records (the FIN) follow them
            return DISCARD_RAW_FIRST;
        }
        return TAKE_MESSAGES;
    }

    /**
     * After the peer's last messages: the socket stays open while the peer's SWITCHED record is
     * on its way (it sends it when our ACK of its switch comes, whatever its session said
     * since). A socket closed with it unread sends a reset, which takes the peer's unread input
     * with it (the last answer of a server that closed with its output raw; regression:
     * CloseAfterAnswerAcrossJvmsTest). Not once the deadline passed.
     */
    static boolean awaitsSwitchedRecord(int w, boolean late) {
        return !late && (w & (IN_UCX | SWITCHED_SEEN | RESET | CONTROL_EOF)) == IN_UCX;
    }
}
