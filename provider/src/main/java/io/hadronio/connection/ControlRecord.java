package io.hadronio.connection;

import java.nio.ByteBuffer;

/**
 * What the TCP connection of an accelerated connection carries after the handshake:
 * {@link #LENGTH}-byte records, a type byte and a big-endian {@code long}.
 * <pre>
 *  FIN   count   the sender will send no more than count DATA messages (shutdownOutput or close)
 *  CLOSE 0       the sender closed its channel (always after FIN)
 *  NUDGE 0       the sender is closing with messages the receiver must take in: progress until FIN
 *                (UCX moves large messages only while the receiver progresses)
 *  SWITCHED n    an upgraded connection's first record, right after the sender's n raw bytes:
 *                it wakes a reader waiting on the socket, and n must match the sender's SWITCH
 *  ABORT 0       the sender closed abortively (SO_LINGER 0): the receiver resets the connection; the
 *                sender lives, so the UCX endpoint it shares with its other connections stays
 * </pre>
 */
final class ControlRecord {
    static final byte FIN = 1;
    static final byte CLOSE = 2;
    static final byte NUDGE = 3;
    static final byte SWITCHED = 4;
    static final byte ABORT = 5;
    static final int LENGTH = 9;

    private ControlRecord() {
    }

    static ByteBuffer encode(byte type, long value) {
        return ByteBuffer.allocate(LENGTH).put(type).putLong(value).flip();
    }
}
