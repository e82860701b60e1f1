package io.hadronio.connection;

import static io.hadronio.connection.EndingVerdicts.*;
import static io.hadronio.connection.LifecycleTable.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The ending's clock-and-count decisions ({@link EndingVerdicts}), one row at a time: inputs
 * in, verdict out. No sockets, threads or reflection; the control thread's
 * {@link ConnectionEnding} performs what they say.
 */
class EndingVerdictsTest {
    private static final long LINGER = 60;
    private static final long NUDGE_AFTER = 2;
    private static final int UCX = PATH_UCX;
    // an upgraded connection's facts
    private static final int READY = PATH_TCP | UPGRADABLE | UPGRADE_READY;

    record Linger(String why, long from, long takenThen, long taken, long now, int verdict) {
    }

    @Test
    void lingerRowByRow() {
        List<Linger> rows = List.of(
                new Linger("the first look starts it", 0, 0, 0, 1_000, LINGER_RESTARTS),
                new Linger("the peer took a message since: it starts over", 1_000, 3, 4, 1_100, LINGER_RESTARTS),
                new Linger("it took one even after the linger would be over: starts over", 1_000, 3, 4, 9_000, LINGER_RESTARTS),
                new Linger("nothing taken, time left", 1_000, 3, 3, 1_030, LINGER_GOES_ON),
                new Linger("nothing taken, exactly the linger: not over yet", 1_000, 3, 3, 1_060, LINGER_GOES_ON),
                new Linger("nothing taken for longer than the linger: over", 1_000, 3, 3, 1_061, LINGER_OVER),
                new Linger("a clock past the sign bit still counts forwards", Long.MAX_VALUE - 10, 3, 3, Long.MIN_VALUE + 51,
                        LINGER_OVER));
        for (Linger r : rows) {
            assertEquals(r.verdict(), linger(r.from(), r.takenThen(), r.taken(), r.now(), LINGER), r.why());
        }
    }

    record Nudge(String why, long actions, boolean nudged, long started, long now, boolean due) {
    }

    @Test
    void nudgeRowByRow() {
        List<Nudge> rows = List.of(
                new Nudge("sends outstanding long enough: nudge", MAY_NUDGE | FIN_WAITS, false, 100, 103, true),
                new Nudge("not long enough yet", MAY_NUDGE | FIN_WAITS, false, 100, 102, false),
                new Nudge("once only", MAY_NUDGE | FIN_WAITS, true, 100, 500, false),
                new Nudge("the table does not allow it (our output is not on UCX)", FIN_WAITS | CHECK_LINGER, false, 100, 500,
                        false));
        for (Nudge r : rows) {
            assertEquals(r.due(), nudgeDue(r.actions(), r.nudged(), r.started(), r.now(), NUDGE_AFTER), r.why());
        }
    }

    record PeerEnd(String why, int word, long fin, boolean late, boolean bySession, boolean lost, int verdict) {
    }

    @Test
    void peerEndRowByRow() {
        List<PeerEnd> rows = List.of(
                new PeerEnd("its FIN came: take its messages", DRAINING | UCX | PEER_FIN, 5, false, false, false, TAKE_MESSAGES),
                new PeerEnd("no FIN yet: take what came, wait", DRAINING | UCX, -1, false, false, false, TAKE_MESSAGES),
                new PeerEnd("the connection broke", DRAINING | UCX | RESET, 5, false, false, false, PEER_END_OVER),
                new PeerEnd("the deadline passed", DRAINING | UCX, 5, true, false, false, PEER_END_OVER),
                new PeerEnd("the control connection ended before any FIN", DRAINING | UCX | CONTROL_EOF, -1, false, false,
                        false, PEER_END_OVER),
                new PeerEnd("it ended after the FIN: take the counted messages", DRAINING | UCX | CONTROL_EOF | PEER_FIN, 5,
                        false, false, false, TAKE_MESSAGES),
                new PeerEnd("by the session, the socket's end says nothing of the count", DRAINING | READY | CONTROL_EOF, -1,
                        false, true, false, TAKE_MESSAGES),
                new PeerEnd("by the session, and it said none will come", DRAINING | READY, -1, false, true, true,
                        PEER_END_OVER),
                new PeerEnd("by the session, the count came before it ended", DRAINING | READY, 4, false, true, true,
                        TAKE_MESSAGES),
                new PeerEnd("the peer's raw bytes before its switch are unread: drop them first",
                        DRAINING | READY | IN_LIMIT, -1, false, false, false, DISCARD_RAW_FIRST),
                new PeerEnd("its raw bytes are all read: take its messages", DRAINING | READY | IN_LIMIT | IN_UCX, -1, false,
                        false, false, TAKE_MESSAGES),
                new PeerEnd("by the session, its raw bytes are not in the way", DRAINING | READY | IN_LIMIT, -1, false, true,
                        false, TAKE_MESSAGES));
        for (PeerEnd r : rows) {
            assertEquals(r.verdict(), peerEnd(r.word(), r.fin(), r.late(), r.bySession(), r.lost()), r.why());
        }
    }

    record Switched(String why, int word, boolean late, boolean awaits) {
    }

    @Test
    void switchedRecordRowByRow() {
        List<Switched> rows = List.of(
                new Switched("input switched, its SWITCHED record not seen: keep the socket", DRAINING | READY | IN_UCX, false,
                        true),
                new Switched("not once the deadline passed", DRAINING | READY | IN_UCX, true, false),
                new Switched("it came", DRAINING | READY | IN_UCX | SWITCHED_SEEN, false, false),
                new Switched("the connection broke", DRAINING | READY | IN_UCX | RESET, false, false),
                new Switched("the control connection ended", DRAINING | READY | IN_UCX | CONTROL_EOF, false, false),
                new Switched("the input is raw: no record to wait for", DRAINING | READY, false, false),
                new Switched("accelerated from the start: no SWITCHED at all", DRAINING | UCX, false, false));
        for (Switched r : rows) {
            assertEquals(r.awaits(), awaitsSwitchedRecord(r.word(), r.late()), r.why());
        }
    }
}
