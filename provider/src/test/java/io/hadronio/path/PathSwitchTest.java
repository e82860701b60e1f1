package io.hadronio.path;

import io.hadronio.connection.GeneratedTable;

import static io.hadronio.path.PathSwitch.*;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hadronio.path.PathSwitch.Event;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The upgrade session's transition function ({@link PathSwitch}), one row at a time, without
 * sockets, threads or reflection; the rows with the function's answers are the table in
 * docs/architecture.md ("Upgrade mode") and in PathSwitch's Javadoc, which
 * {@link #docsShowTheTable} checks ({@code -Dpath.switch.table.write=true} rewrites them).
 */
class PathSwitchTest {
    private static final int S = SESSION;
    // a session whose UCX half is ready
    private static final int R = READY;

    record Row(int word, Event event, int in, int next, int actions) {
    }

    private static final List<Row> ROWS = new ArrayList<>();

    private static void row(int word, Event event, int in, int next, int actions) {
        ROWS.add(new Row(word, event, in, next, actions));
    }

    static {
        row(0, Event.HELLO, S, 0, UNCHANGED);
        row(R, Event.HELLO, S, R, PROTOCOL_ERROR);
        row(0, Event.HELLO, S | NO_HALF, 0, PROTOCOL_ERROR);
        row(0, Event.READIED, S, R, 0);
        row(R, Event.SWITCH, S, R | PEER_DONE, TAKE_SWITCH);
        row(R | SWITCH_SENT | MINE_DONE, Event.SWITCH, S, R | SWITCH_SENT | MINE_DONE | PEER_DONE,
                TAKE_SWITCH | CLOSE_SESSION);
        // the peer's records follow raw bytes, which our application may never read: the session stays
        row(R | SWITCH_SENT | MINE_DONE, Event.SWITCH, S | RAW_BEFORE,
                R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW, TAKE_SWITCH);
        row(R | SWITCH_SENT | MINE_DONE | AFTER_RAW, Event.SWITCH, S,
                R | SWITCH_SENT | MINE_DONE | AFTER_RAW | PEER_DONE, TAKE_SWITCH);
        row(0, Event.SWITCH, S, 0, PROTOCOL_ERROR);
        row(R | PEER_DONE, Event.SWITCH, S, R | PEER_DONE, PROTOCOL_ERROR);
        row(R | SWITCH_SENT, Event.ACK, S | MATCH, R | SWITCH_SENT | MINE_DONE, OUTPUT_ACKED);
        row(R | SWITCH_SENT | PEER_DONE, Event.ACK, S | MATCH, R | SWITCH_SENT | PEER_DONE | MINE_DONE,
                OUTPUT_ACKED | CLOSE_SESSION);
        row(R | SWITCH_SENT | PEER_DONE | AFTER_RAW, Event.ACK, S | MATCH,
                R | SWITCH_SENT | PEER_DONE | AFTER_RAW | MINE_DONE, OUTPUT_ACKED);
        row(R | SWITCH_SENT | PEER_DONE | PEER_RAW, Event.ACK, S | MATCH,
                R | SWITCH_SENT | PEER_DONE | PEER_RAW | MINE_DONE, OUTPUT_ACKED);
        row(R | SWITCH_SENT, Event.ACK, S, R | SWITCH_SENT, PROTOCOL_ERROR);
        row(R, Event.ACK, S | MATCH, R, PROTOCOL_ERROR);
        row(R, Event.NO_SWITCH, S, R | PEER_DONE | PEER_RAW, 0);
        row(R | MINE_DONE | MINE_RAW, Event.NO_SWITCH, S, R | MINE_DONE | MINE_RAW | PEER_DONE | PEER_RAW, CLOSE_SESSION);
        row(R | PEER_DONE, Event.NO_SWITCH, S, R | PEER_DONE, PROTOCOL_ERROR);
        row(R, Event.CLOSING, S, R | CLOSING_SEEN, PEER_CLOSING);
        row(R, Event.CLOSING, S | BODY, R, PROTOCOL_ERROR);
        row(R | CLOSING_SEEN, Event.CLOSING, S, R | CLOSING_SEEN, PROTOCOL_ERROR);
        row(0, Event.CLOSING, S, 0, PROTOCOL_ERROR);
        row(R | CLOSING_SEEN, Event.CLOSING_ANSWERED, S | COUNTED, R | CLOSING_SEEN | SWITCH_SENT, SEND_SWITCH | SEND_DONE);
        row(R | CLOSING_SEEN, Event.CLOSING_ANSWERED, S | COUNTED | RAW_BEFORE, R | CLOSING_SEEN | SWITCH_SENT | AFTER_RAW,
                SEND_SWITCH | SEND_DONE);
        row(R | CLOSING_SEEN | SWITCH_SENT, Event.CLOSING_ANSWERED, S | COUNTED, R | CLOSING_SEEN | SWITCH_SENT,
                UNCHANGED | SEND_DONE);
        row(R | CLOSING_SEEN, Event.CLOSING_ANSWERED, S, R | CLOSING_SEEN, UNCHANGED | SEND_DONE);
        row(R | CLOSING_SENT, Event.DONE, S, R | CLOSING_SENT | DONE_SEEN, TAKE_COUNT);
        row(R, Event.DONE, S, R, PROTOCOL_ERROR);
        row(R | CLOSING_SENT | DONE_SEEN, Event.DONE, S, R | CLOSING_SENT | DONE_SEEN, PROTOCOL_ERROR);
        row(R, Event.OUTPUT_SWITCHED, S, R | SWITCH_SENT, SEND_SWITCH);
        row(R, Event.OUTPUT_SWITCHED, S | RAW_BEFORE, R | SWITCH_SENT | AFTER_RAW, SEND_SWITCH);
        row(R | ENDED, Event.OUTPUT_SWITCHED, S, R | ENDED | SWITCH_SENT, RESET_OUTPUT);
        row(R, Event.OUTPUT_SWITCHED, 0, R | SWITCH_SENT, RESET_OUTPUT);
        row(R | SWITCH_SENT, Event.OUTPUT_SWITCHED, S, R | SWITCH_SENT, UNCHANGED);
        row(0, Event.OUTPUT_ENDED_RAW, S, MINE_DONE | MINE_RAW, SEND_NO_SWITCH);
        row(R | PEER_DONE | PEER_RAW, Event.OUTPUT_ENDED_RAW, S, R | PEER_DONE | PEER_RAW | MINE_DONE | MINE_RAW,
                SEND_NO_SWITCH | CLOSE_SESSION);
        row(R | SWITCH_SENT, Event.OUTPUT_ENDED_RAW, S, R | SWITCH_SENT, UNCHANGED);
        row(0, Event.OUTPUT_ENDED_RAW, 0, 0, UNCHANGED);
        row(R, Event.CLOSE_ASKS, S, R | CLOSING_SENT, SEND_CLOSING);
        row(R | PEER_DONE | PEER_RAW, Event.CLOSE_ASKS, S, R | PEER_DONE | PEER_RAW, UNCHANGED | STOP_AWAITING);
        row(R | ENDED, Event.CLOSE_ASKS, S, R | ENDED, UNCHANGED | STOP_AWAITING);
        row(0, Event.CLOSE_ASKS, S, 0, UNCHANGED | STOP_AWAITING);
        row(R | CLOSING_SENT, Event.CLOSE_ASKS, S, R | CLOSING_SENT, UNCHANGED);
        row(0, Event.SESSION_END, S, ENDED, GIVE_UP);
        row(R, Event.SESSION_END, S, R | ENDED, UPGRADE_OFF);
        row(R | SWITCH_SENT, Event.SESSION_END, S, R | SWITCH_SENT | ENDED, RESET_UNTAKEN);
        row(R | SWITCH_SENT | MINE_DONE, Event.SESSION_END, S, R | SWITCH_SENT | MINE_DONE | ENDED, RESET_PEER_CLOSED);
        row(R | SWITCH_SENT | MINE_DONE, Event.SESSION_END, S | CLOSE_REQUESTED, R | SWITCH_SENT | MINE_DONE | ENDED, 0);
        row(R | SWITCH_SENT | MINE_DONE | PEER_DONE, Event.SESSION_END, S,
                R | SWITCH_SENT | MINE_DONE | PEER_DONE | ENDED, 0);
        // the peer moved after raw bytes that we have not read: its records cannot reach us, its close did
        row(R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW, Event.SESSION_END, S | INPUT_RAW,
                R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW | ENDED, RESET_PEER_CLOSED);
        row(R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW, Event.SESSION_END, S | INPUT_RAW | CLOSE_REQUESTED,
                R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW | ENDED, 0);
        row(R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW, Event.SESSION_END, S,
                R | SWITCH_SENT | MINE_DONE | PEER_DONE | AFTER_RAW | ENDED, 0);
        row(R | CLOSING_SENT | SWITCH_SENT | MINE_DONE | PEER_DONE, Event.SESSION_END, S,
                R | CLOSING_SENT | SWITCH_SENT | MINE_DONE | PEER_DONE | ENDED, STOP_AWAITING);
        row(R | ENDED, Event.SESSION_END, S, R | ENDED, UNCHANGED);
        row(0, Event.ABANDON, S | HALF, ABANDONED, UPGRADE_OFF | RELEASE | CLOSE_SESSION);
        row(R, Event.ABANDON, S | HALF, R | ABANDONED, UPGRADE_OFF | CLOSE_SESSION);
        row(0, Event.ABANDON, 0, ABANDONED, UPGRADE_OFF);
        row(ABANDONED, Event.ABANDON, S, ABANDONED, UNCHANGED);
    }

    private static String describe(int w) {
        String s = names(w, STATE_NAMES);
        return s.isEmpty() ? "-" : s;
    }

    @Test
    void everyRowDoesWhatItSays() {
        for (Row r : ROWS) {
            long result = decide(r.word(), r.event(), r.in());
            String where = r.event() + " in " + describe(r.word()) + " " + names(r.in(), INPUT_NAMES);
            assertEquals(describe(r.next()), describe(next(result)), where);
            assertEquals(names(r.actions(), ACTION_NAMES), names(actions(result), ACTION_NAMES), where);
        }
    }

    @Test
    void everyEventHasRows() {
        Set<Event> seen = EnumSet.noneOf(Event.class);
        ROWS.forEach(r -> seen.add(r.event()));
        assertEquals(EnumSet.allOf(Event.class), seen);
    }

    /** Facts are only set; a word not stored is the word as it was. */
    @Test
    void theWordOnlyGrows() {
        for (int w = 0; w < 1 << STATE_NAMES.length; w++) {
            for (Event e : Event.values()) {
                for (int in = 0; in < 1 << INPUT_NAMES.length; in++) {
                    long result = decide(w, e, in);
                    int word = w;
                    assertEquals(w, next(result) & w, () -> e + " cleared a fact of " + describe(word));
                    if ((actions(result) & (UNCHANGED | PROTOCOL_ERROR)) != 0) {
                        assertEquals(w, next(result), () -> e + " not stored, but changed " + describe(word));
                    }
                }
            }
        }
    }

    // ---- the printed table -------------------------------------------------------------------

    private static final String BEGIN = "<!-- path-switch-table:begin generated by PathSwitchTest; do not edit -->";
    private static final String END = "<!-- path-switch-table:end -->";

    static String markdown() {
        StringBuilder b = new StringBuilder();
        b.append("| session state (example) | event | inputs | actions | next |\n");
        b.append("|---|---|---|---|---|\n");
        for (Row r : ROWS) {
            long result = decide(r.word(), r.event(), r.in());
            String in = names(r.in(), INPUT_NAMES);
            String a = names(actions(result), ACTION_NAMES);
            int added = next(result) & ~r.word();
            b.append("| ").append(describe(r.word())).append(" | ").append(r.event()).append(" | ")
                    .append(in.isEmpty() ? "-" : in).append(" | ").append(a.isEmpty() ? "-" : a).append(" | ")
                    .append(added == 0 ? "same" : "+" + names(added, STATE_NAMES).replace(", ", " +")).append(" |\n");
        }
        return b.toString();
    }

    private static final Path JAVADOC = Path.of("src", "main", "java", "io", "hadronio", "path", "PathSwitch.java");

    @Test
    void docsShowTheTable() throws IOException {
        GeneratedTable.check(markdown(), BEGIN, END, JAVADOC, "path.switch.table.write", "PathSwitchTest");
    }

    public static void main(String[] args) {
        System.out.print(markdown());
    }
}
