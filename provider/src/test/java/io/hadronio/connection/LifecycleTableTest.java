package io.hadronio.connection;

import static io.hadronio.connection.LifecycleTable.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.connection.LifecycleTable.Event;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The lifecycle's transition function, one table row at a time: a word, an event and its
 * inputs, the next word and the actions expected. No sockets, threads or reflection. The same
 * rows, with what the function answers for them, are the state table of docs/architecture.md
 * ("Lifecycle") and of {@link LifecycleTable}'s Javadoc: {@link #docsShowTheTable} fails when
 * either differs from the printed one. To print it: {@code main}, or run this class with
 * {@code -Dlifecycle.table.write=true} to rewrite both copies.
 */
class LifecycleTableTest {
    private static final int UCX = PATH_UCX;
    private static final int TCP = PATH_TCP;
    // an upgraded connection's upgrade facts, cumulatively
    private static final int UP = TCP | UPGRADABLE;
    private static final int READY = UP | UPGRADE_READY;

    record Row(int word, Event event, int in, long n, long m, long k, int next, long actions) {
    }

    private static final List<Row> ROWS = new ArrayList<>();

    private static void row(int word, Event event, int in, long n, long m, long k, int next, long actions) {
        ROWS.add(new Row(word, event, in, n, m, k, next, actions));
    }

    private static void row(int word, Event event, int in, int next, long actions) {
        row(word, event, in, 0, 0, 0, next, actions);
    }

    static {
        // connect (application; the handshake's outcome from the control thread)
        row(NEW, Event.CONNECT, 0, CONNECTING, 0);
        row(CONNECTING, Event.CONNECT, 0, CONNECTING, THROW_PENDING);
        row(OPEN | TCP, Event.CONNECT, 0, OPEN | TCP, THROW_CONNECTED);
        row(CLOSED, Event.CONNECT, 0, CLOSED, THROW_CLOSED);
        row(CONNECTING, Event.PLAIN_PEER, 0, CONNECTING | TCP, 0);
        row(CONNECTING | TCP, Event.TCP_CONNECTED, 0, OPEN | TCP, 0);
        row(CLOSED | TCP, Event.TCP_CONNECTED, 0, CLOSED | TCP, THROW_CLOSED);
        row(CONNECTING, Event.HANDSHAKE_ACCELERATED, 0, CONNECTING | OUTCOME, NOTIFY | WAKE | WAKE_SELECTORS);
        row(CLOSING, Event.HANDSHAKE_ACCELERATED, 0, DRAINING | OUTCOME, NOTIFY | WAKE | WAKE_SELECTORS | WATCH);
        row(CLOSED, Event.HANDSHAKE_ACCELERATED, 0, CLOSED, UNCHANGED);
        row(CONNECTING, Event.HANDSHAKE_PLAIN, 0, CONNECTING | OUTCOME, NOTIFY | WAKE_SELECTORS);
        row(CONNECTING, Event.HANDSHAKE_FAILED, 0, CONNECTING | OUTCOME, KEEP_FAILURE | NOTIFY | WAKE_SELECTORS);
        row(CLOSED, Event.HANDSHAKE_FAILED, 0, CLOSED, UNCHANGED | NOTIFY | WAKE_SELECTORS);
        row(CONNECTING | OUTCOME, Event.TAKE_OUTCOME, HALF, OPEN | OUTCOME | UCX, 0);
        row(CONNECTING | OUTCOME, Event.TAKE_OUTCOME, 0, OPEN | OUTCOME | TCP, 0);
        row(CONNECTING | OUTCOME, Event.TAKE_OUTCOME, FAILED, CONNECTING | OUTCOME, THROW_FAILURE);
        row(CONNECTING, Event.TAKE_OUTCOME, 0, CONNECTING, THROW_CLOSED);
        row(CONNECTING, Event.ACCEPTED_ACCELERATED, HALF, OPEN | UCX, 0);
        // half-closes and close (application)
        row(OPEN | UCX, Event.SHUTDOWN_INPUT, 0, OPEN | UCX | INPUT_SHUT, WAKE);
        row(OPEN | UCX, Event.SHUTDOWN_OUTPUT, 0, OPEN | UCX | OUTPUT_SHUT, WATCH);
        row(OPEN | TCP, Event.SHUTDOWN_OUTPUT, 0, OPEN | TCP | OUTPUT_SHUT, 0);
        row(OPEN | UCX | OUTPUT_SHUT, Event.SHUTDOWN_OUTPUT, 0, OPEN | UCX | OUTPUT_SHUT, 0);
        row(OPEN | TCP, Event.CLOSE, 0, CLOSED | TCP, NOTIFY | CLOSE_SOCKET);
        row(OPEN | UCX, Event.CLOSE, HALF, CLOSING | UCX, NOTIFY | WAKE | LAST_OUT_LATER);
        row(CONNECTING | OUTCOME, Event.CLOSE, HALF, CLOSING | OUTCOME, NOTIFY | WAKE | LAST_OUT_LATER);
        row(CLOSING | UCX, Event.CLOSE, HALF, CLOSING | UCX, UNCHANGED);
        row(CLOSING | UCX, Event.LAST_OUT, 0, DRAINING | UCX, WATCH);
        row(CLOSING | UCX, Event.LAST_OUT, ABORTIVE, DRAINING | UCX, RUN_ABORT);
        row(CLOSED | UCX, Event.LAST_OUT, 0, CLOSED | UCX, UNCHANGED);
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED, Event.LATE_WRITE_ASKED, 0,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | LATE_WRITE, 0);
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED | LATE_WRITE, Event.LATE_WRITE_ASKED, 0,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | LATE_WRITE, UNCHANGED);
        // control records (control thread; DONE: the rendezvous thread)
        row(OPEN | UCX, Event.FIN_RECORD, 0, 5, 3, -1, OPEN | UCX | PEER_FIN, WAKE);
        row(OPEN | UCX | PEER_FIN, Event.FIN_RECORD, 0, 5, 5, 5, OPEN | UCX | PEER_FIN, WAKE);
        row(OPEN | UCX, Event.FIN_RECORD, 0, 2, 3, -1, OPEN | UCX, PROTOCOL_ERROR);
        row(OPEN | UCX | PEER_FIN, Event.FIN_RECORD, 0, 5, 3, 4, OPEN | UCX | PEER_FIN, PROTOCOL_ERROR);
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED, Event.FIN_RECORD, 0, 5, 3, 5, OPEN | UCX | PEER_FIN | PEER_CLOSED,
                RECORD_AFTER_END);
        row(DRAINING | READY | FIN_SENT, Event.DONE, 0, 7, 2, -1, DRAINING | READY | FIN_SENT | PEER_FIN, WAKE);
        row(OPEN | UCX | PEER_FIN, Event.CLOSE_RECORD, 0, OPEN | UCX | PEER_FIN | PEER_CLOSED, WAKE | END_OUTPUT_FOR_PEER);
        row(OPEN | UCX, Event.CLOSE_RECORD, 0, OPEN | UCX, PROTOCOL_ERROR);
        row(OPEN | UCX, Event.ABORT_RECORD, 0, OPEN | UCX | PEER_ABORTED, DO_RESET | END_OUTPUT_FOR_PEER);
        row(OPEN | UCX, Event.ABORT_RECORD, 0, 1, 0, 0, OPEN | UCX, PROTOCOL_ERROR);
        row(OPEN | READY | IN_LIMIT | IN_UCX, Event.SWITCHED_RECORD, 0, 100, 100, 0,
                OPEN | READY | IN_LIMIT | IN_UCX | SWITCHED_SEEN, 0);
        row(OPEN | READY | IN_LIMIT | IN_UCX, Event.SWITCHED_RECORD, 0, 99, 100, 0, OPEN | READY | IN_LIMIT | IN_UCX,
                PROTOCOL_ERROR);
        row(OPEN | UCX, Event.NUDGE_RECORD, 0, OPEN | UCX, UNCHANGED | PROGRESS_FOR_PEER);
        row(OPEN | UCX, Event.NUDGE_RECORD, PROGRESSING, OPEN | UCX, UNCHANGED);
        row(OPEN | UCX, Event.UNKNOWN_RECORD, 0, OPEN | UCX, PROTOCOL_ERROR);
        row(OPEN | UCX | PEER_ABORTED, Event.UNKNOWN_RECORD, 0, OPEN | UCX | PEER_ABORTED, RECORD_AFTER_END);
        // the control connection's end, resets (control thread, any thread, UCX upcall)
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED, Event.CONTROL_EOF, HALF,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | CONTROL_EOF, 0);
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED, Event.CONTROL_EOF, HALF | ERROR,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | CONTROL_EOF, DO_RESET | ABORT_ENDPOINT);
        row(OPEN | UCX, Event.CONTROL_EOF, HALF, OPEN | UCX | CONTROL_EOF, DO_RESET | ABORT_ENDPOINT);
        row(OPEN | UCX | PEER_ABORTED, Event.CONTROL_EOF, HALF, OPEN | UCX | PEER_ABORTED | CONTROL_EOF, DO_RESET);
        row(DRAINING | UCX | FIN_SENT, Event.CONTROL_EOF, HALF | AWAITING_PEER, DRAINING | UCX | FIN_SENT | CONTROL_EOF, 0);
        row(OPEN | UCX, Event.RESET, 0, OPEN | UCX | RESET | INPUT_RESET, WAKE);
        row(OPEN | READY | OUT_UCX, Event.RESET_OUTPUT, 0, OPEN | READY | OUT_UCX | RESET | OUTPUT_RESET, WAKE);
        row(OPEN | UCX, Event.PEER_FAILURE, 0, OPEN | UCX | RESET | INPUT_RESET, 0);
        // the upgrade (application, rendezvous thread, reader)
        row(OPEN | TCP, Event.CONVERTED, 0, OPEN | UP, 0);
        row(OPEN | UP, Event.UPGRADE_READY, HALF, OPEN | READY, 0);
        row(OPEN | UP | UPGRADE_OFF, Event.UPGRADE_READY, HALF, OPEN | UP | UPGRADE_OFF, UNCHANGED);
        row(CLOSED | UP, Event.UPGRADE_READY, HALF, CLOSED | UP, UNCHANGED);
        row(OPEN | UP, Event.UPGRADE_OFF, 0, OPEN | UP | UPGRADE_OFF, 0);
        row(OPEN | READY | OUT_UCX, Event.UPGRADE_OFF, 0, OPEN | READY | OUT_UCX | UPGRADE_OFF, GO_ON);
        row(OPEN | READY, Event.OUTPUT_SWITCH, 0, OPEN | READY | OUT_UCX, SEND_SWITCH);
        row(OPEN | READY | OUTPUT_SHUT, Event.OUTPUT_SWITCH, 0, OPEN | READY | OUTPUT_SHUT, UNCHANGED);
        row(OPEN | UP, Event.OUTPUT_SWITCH, 0, OPEN | UP, UNCHANGED);
        row(OPEN | READY | OUT_UCX, Event.OUTPUT_ACKED, 0, OPEN | READY | OUT_UCX | OUT_ACKED, 0);
        row(DRAINING | READY | OUT_UCX | PEER_FIN | PEER_CLOSED, Event.OUTPUT_ACKED, 0,
                DRAINING | READY | OUT_UCX | PEER_FIN | PEER_CLOSED | OUT_ACKED, WATCH | END_OUTPUT_FOR_PEER);
        row(OPEN | READY, Event.PEER_SWITCH, 0, 100, 40, 0, OPEN | READY | IN_LIMIT, 0);
        row(OPEN | READY, Event.PEER_SWITCH, 0, 100, 100, 0, OPEN | READY | IN_LIMIT, INPUT_DONE);
        row(OPEN | READY, Event.PEER_SWITCH, 0, 30, 40, 0, OPEN | READY, PROTOCOL_ERROR);
        row(OPEN | READY | IN_LIMIT, Event.INPUT_SWITCHED, 0, OPEN | READY | IN_LIMIT | IN_UCX, READ_RECORDS | WAKE);
        row(OPEN | READY, Event.PEER_CLOSING, 0, OPEN | READY | UPGRADE_OFF, 0);
        row(OPEN | READY | OUT_UCX, Event.PEER_CLOSING, 0, OPEN | READY | OUT_UCX, UNCHANGED | DO_RESET_OUTPUT);
        // closing in order (control thread)
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED, Event.OUTPUT_ENDS_FOR_PEER, HALF,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | FIN_SENT, SEND_FIN_ENDING_OUTPUT);
        row(OPEN | UCX | PEER_FIN | PEER_CLOSED | FIN_SENT, Event.OUTPUT_ENDS_FOR_PEER, HALF,
                OPEN | UCX | PEER_FIN | PEER_CLOSED | FIN_SENT, UNCHANGED);
        row(OPEN | READY | OUT_UCX | PEER_ABORTED, Event.OUTPUT_ENDS_FOR_PEER, HALF,
                OPEN | READY | OUT_UCX | PEER_ABORTED, UNCHANGED);
        row(DRAINING | UCX, Event.TICK_FIN, SENDS_COMPLETE, DRAINING | UCX | FIN_SENT, SEND_FIN);
        row(DRAINING | UCX, Event.TICK_FIN, 0, DRAINING | UCX, UNCHANGED | FIN_WAITS | CHECK_LINGER | MAY_NUDGE);
        row(OPEN | UCX | OUTPUT_SHUT, Event.TICK_FIN, 0, OPEN | UCX | OUTPUT_SHUT, UNCHANGED | FIN_WAITS | MAY_NUDGE);
        row(DRAINING | UCX | RESET, Event.TICK_FIN, 0, DRAINING | UCX | RESET | FIN_SENT, 0);
        row(DRAINING | UCX, Event.TICK_FIN, SEND_FAILED, DRAINING | UCX | FIN_SENT, 0);
        row(DRAINING | UP, Event.TICK_FIN, 0, DRAINING | UP | FIN_SENT, 0);
        row(DRAINING | READY | OUT_UCX, Event.TICK_FIN, SENDS_COMPLETE, DRAINING | READY | OUT_UCX,
                UNCHANGED | FIN_WAITS | CHECK_LINGER);
        row(DRAINING | UCX | FIN_SENT, Event.TICK_FIN, 0, DRAINING | UCX | FIN_SENT, UNCHANGED);
        row(DRAINING | UCX | FIN_SENT, Event.TICK_CLOSE, 0, DRAINING | UCX | FIN_SENT, UNCHANGED | SEND_CLOSE);
        row(DRAINING | UCX | FIN_SENT | RESET, Event.TICK_CLOSE, 0, DRAINING | UCX | FIN_SENT | RESET,
                UNCHANGED | RUN_FINISH);
        row(DRAINING | UP | FIN_SENT, Event.TICK_CLOSE, 0, DRAINING | UP | FIN_SENT, UNCHANGED | ASK_PEER_END);
        row(OPEN | UCX | OUTPUT_SHUT | FIN_SENT, Event.TICK_CLOSE, 0, OPEN | UCX | OUTPUT_SHUT | FIN_SENT, UNCHANGED);
        row(DRAINING | UCX, Event.LINGER_OVER, 0, DRAINING | UCX | FIN_SENT, RUN_ABORT);
        row(DRAINING | UCX, Event.ABORT, 0, DRAINING | UCX, UNCHANGED | SEND_ABORT);
        row(DRAINING | UCX | RESET, Event.ABORT, 0, DRAINING | UCX | RESET, UNCHANGED | RUN_FINISH);
        row(DRAINING | UP, Event.ABORT, 0, DRAINING | UP, UNCHANGED | ASK_PEER_END);
        row(DRAINING | UCX | FIN_SENT, Event.PEER_END_WAIT, AFTER_OUR_END | HALF, DRAINING | UCX | FIN_SENT,
                UNCHANGED | AWAIT_PEER);
        row(DRAINING | READY | OUT_UCX | OUT_ACKED | FIN_SENT, Event.PEER_END_WAIT, AFTER_OUR_END | UPGRADE | HALF,
                DRAINING | READY | OUT_UCX | OUT_ACKED | FIN_SENT, UNCHANGED | AWAIT_BY_SESSION);
        row(DRAINING | READY | FIN_SENT, Event.PEER_END_WAIT, UPGRADE | HALF, DRAINING | READY | FIN_SENT,
                UNCHANGED | AWAIT_BY_SESSION);
        row(DRAINING | READY | FIN_SENT | RESET, Event.PEER_END_WAIT, UPGRADE | HALF, DRAINING | READY | FIN_SENT | RESET,
                UNCHANGED | RUN_FINISH);
        row(DRAINING | UP | FIN_SENT, Event.PEER_END_WAIT, UPGRADE, DRAINING | UP | FIN_SENT, UNCHANGED | RUN_FINISH);
        row(DRAINING | UCX | FIN_SENT, Event.FINISH, ANNOUNCED, CLOSED | UCX | FIN_SENT, FORGET | CLOSE_SOCKET | RELEASE);
        row(DRAINING | UCX | FIN_SENT | RESET, Event.FINISH, 0, CLOSED | UCX | FIN_SENT | RESET,
                FORGET | LINGER_ZERO | CLOSE_SOCKET | RELEASE);
        row(DRAINING | UP | FIN_SENT, Event.FINISH, 0, CLOSED | UP | FIN_SENT, FORGET | CLOSE_SOCKET | RELEASE);
        row(DRAINING | UCX | FIN_SENT, Event.FINISH, ANNOUNCED | KEEP_MEMORY, CLOSED | UCX | FIN_SENT, FORGET | CLOSE_SOCKET);
        row(OPEN | UCX, Event.EXIT, HALF, DRAINING | UCX, MEMORY_STAYS | WAKE | WATCH);
        row(DRAINING | UCX, Event.EXIT, HALF, DRAINING | UCX, UNCHANGED);
        row(OPEN | TCP, Event.EXIT, 0, OPEN | TCP, UNCHANGED);
    }

    @Test
    void everyRowDoesWhatItSays() {
        for (Row r : ROWS) {
            long result = decide(r.word(), r.event(), r.in(), r.n(), r.m(), r.k());
            String where = r.event() + " in " + describe(r.word()) + " " + inputs(r.in());
            assertEquals(describe(r.next()), describe(next(result)), where);
            assertEquals(actionNames(r.actions()), actionNames(actions(result)), where);
        }
    }

    @Test
    void everyEventHasRows() {
        Set<Event> seen = EnumSet.noneOf(Event.class);
        ROWS.forEach(r -> seen.add(r.event()));
        assertEquals(EnumSet.allOf(Event.class), seen);
    }

    /**
     * What lets a next word decided from a snapshot be stored later (ConnectionLifecycle#store):
     * from any word, any event only sets facts and moves the ladder up; and a word not stored
     * is the word as it was.
     */
    @Test
    void theWordOnlyGrows() {
        int[] facts = {0, TCP, UCX, OUTCOME, FIN_SENT | PEER_FIN, PEER_CLOSED | PEER_FIN, RESET | INPUT_RESET,
            CONTROL_EOF, OUTPUT_SHUT, READY, READY | OUT_UCX | OUT_ACKED, READY | IN_LIMIT | IN_UCX, PEER_ABORTED,
            UP | UPGRADE_OFF, LATE_WRITE};
        for (int state = NEW; state <= CLOSED; state++) {
            for (int f : facts) {
                int w = state | f;
                for (Event e : Event.values()) {
                    for (int in = 0; in < 1 << INPUT_NAMES.length; in++) {
                        if (Integer.bitCount(in) > 2) {
                            // (each row reads at most three inputs; pairs of them cover every branch)
                            continue;
                        }
                        for (long[] nmk : new long[][] {{0, 0, -1}, {5, 5, 5}, {2, 3, 4}}) {
                            long result = decide(w, e, in, nmk[0], nmk[1], nmk[2]);
                            int next = next(result);
                            assertEquals(f, next & f, () -> e + " cleared a fact of " + describe(w));
                            assertTrue((next & LADDER) >= state && (next & LADDER) <= CLOSED, () -> e + " in " + describe(w));
                            if ((actions(result) & NOT_STORED) != 0) {
                                assertEquals(w, next, () -> e + " not stored, but changed " + describe(w));
                            }
                        }
                    }
                }
            }
        }
    }

    // ---- the printed table -------------------------------------------------------------------

    private static final String BEGIN = "<!-- lifecycle-table:begin generated by LifecycleTableTest; do not edit -->";
    private static final String END = "<!-- lifecycle-table:end -->";

    static String describe(int w) {
        String f = facts(w);
        return stateName(w) + (f.isEmpty() ? "" : " " + f);
    }

    /** What changed from {@code w} to {@code next}: the ladder's new state, the facts set; or "same". */
    private static String change(int w, int next) {
        if (next == w) {
            return "same";
        }
        String to = (next & LADDER) != (w & LADDER) ? stateName(next) : "";
        String added = facts(next & ~w);
        return to + (!to.isEmpty() && !added.isEmpty() ? " " : "") + (added.isEmpty() ? "" : "+" + added.replace(", ", " +"));
    }

    private static String counts(Row r) {
        StringBuilder b = new StringBuilder(inputs(r.in()));
        if (r.n() != 0 || r.m() != 0 || r.k() != 0) {
            b.append(b.isEmpty() ? "" : "; ").append("n=").append(r.n()).append(" m=").append(r.m()).append(" k=").append(r.k());
        }
        return b.isEmpty() ? "-" : b.toString();
    }

    /** The state table as Markdown: each row's word, event and inputs, and what the function answers. */
    static String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("| state (example word) | event (sent by) | inputs | actions | next |\n");
        b.append("|---|---|---|---|---|\n");
        for (Row r : ROWS) {
            long result = decide(r.word(), r.event(), r.in(), r.n(), r.m(), r.k());
            String a = actionNames(actions(result));
            b.append("| ").append(describe(r.word())).append(" | ").append(r.event()).append(" (").append(r.event().by)
                    .append(") | ").append(counts(r)).append(" | ").append(a.isEmpty() ? "-" : a).append(" | ")
                    .append(change(r.word(), next(result))).append(" |\n");
        }
        return b.toString();
    }

    private static final Path JAVADOC = Path.of("src", "main", "java", "io", "hadronio", "connection", "LifecycleTable.java");

    @Test
    void docsShowTheTable() throws IOException {
        GeneratedTable.check(markdown(), BEGIN, END, JAVADOC, "lifecycle.table.write", "LifecycleTableTest");
    }

    public static void main(String[] args) {
        System.out.print(markdown());
    }
}
