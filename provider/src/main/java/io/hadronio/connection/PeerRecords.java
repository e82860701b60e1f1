package io.hadronio.connection;

import java.net.ProtocolException;
import io.hadronio.connection.LifecycleTable.Event;

import static io.hadronio.connection.LifecycleTable.*;

/**
 * The peer's control records as its connection takes them: each of FIN, CLOSE, ABORT, SWITCHED
 * and NUDGE becomes an event of the owner's table ({@link ConnectionLifecycle},
 * {@link LifecycleTable}), and the actions the table answers are performed here or by the
 * close in order ({@link ConnectionEnding}). No state of its own: what the peer announced
 * (its FIN count, its close) is the owner's word.
 *
 * <p>Control thread only (the thread that reads the control connection). A record that breaks
 * the protocol resets the connection at once, as a broken control connection does, so that no
 * reader waits for an end-of-stream that will never come.
 */
final class PeerRecords {
    private PeerRecords() {
    }

    /** Takes one record of {@code life}'s peer; false when it broke the protocol (the connection is reset). */
    static boolean take(ConnectionLifecycle life, byte type, long value) {
        try {
            switch (type) {
                case ControlRecord.FIN -> life.onFin(Event.FIN_RECORD, value);
                case ControlRecord.CLOSE -> {
                    long a = life.step(Event.CLOSE_RECORD, 0, value, 0, 0);
                    checked(a, type, "CLOSE without FIN");
                    if ((a & WAKE) != 0) {
                        life.wake();
                    }
                    if ((a & END_OUTPUT_FOR_PEER) != 0) {
                        life.ending().endOutputForPeer();
                    }
                }
                case ControlRecord.ABORT -> {
                    long a = life.step(Event.ABORT_RECORD, 0, value, 0, 0);
                    checked(a, type, "ABORT " + value);
                    if ((a & DO_RESET) != 0) {
                        life.reset("Connection reset by peer");
                    }
                    if ((a & END_OUTPUT_FOR_PEER) != 0) {
                        life.ending().endOutputForPeer();
                    }
                }
                case ControlRecord.SWITCHED -> {
                    long limit = life.upgrade().limit();
                    long a = life.step(Event.SWITCHED_RECORD, 0, value, limit, 0);
                    checked(a, type, "SWITCHED " + value + " where " + limit + " raw bytes were announced");
                }
                case ControlRecord.NUDGE -> {
                    ConnectionEnding ending = life.ending();
                    long a = life.step(Event.NUDGE_RECORD, ending.progressingForPeer() ? PROGRESSING : 0);
                    checked(a, type, null);
                    if ((a & PROGRESS_FOR_PEER) != 0) {
                        ending.progressForPeer();
                    }
                }
                default -> checked(life.step(Event.UNKNOWN_RECORD), type, "unknown control record type " + type);
            }
            return true;
        } catch (ProtocolException e) {
            life.onControlEof(e.getMessage());
            return false;
        }
    }

    /** Throws what the table found wrong with a record of {@code type} (its message, or one after the peer's end). */
    static void checked(long actions, byte type, String brokenMessage) throws ProtocolException {
        if ((actions & RECORD_AFTER_END) != 0) {
            throw new ProtocolException("control record of type " + type + " after CLOSE or ABORT");
        }
        if ((actions & PROTOCOL_ERROR) != 0) {
            throw new ProtocolException(brokenMessage);
        }
    }
}
