package io.hadronio.path;

/**
 * The data path's wire format: the UCX tags of a {@link Connection}'s messages, and the word a
 * CREDIT message carries.
 *
 * <pre>
 *  63            32 31    24 23          0
 * +----------------+--------+-------------+
 * | receiver's id  |  kind  |      0      |
 * +----------------+--------+-------------+
 * </pre>
 * Each side picks a 32-bit id on its worker and tells the peer in the handshake; the
 * peer stamps it on everything it sends, so one worker serves many connections.
 * {@code DATA} messages carry 1 .. sliceSize application bytes (an empty one holds a bulk
 * message's place); {@code CREDIT} messages carry a little-endian {@code long}: how many DATA
 * messages the receiver has consumed so far (cumulative, so a lost race between two credit
 * messages is harmless), with {@link #CREDIT_WANTS_BULK} set when the receiver wants bulk
 * messages; {@code BULK} messages carry a bulk message's bytes, its index in the low 24 bits.
 */
final class WireFormat {
    static final int KIND_DATA = 1;
    static final int KIND_CREDIT = 2;
    // the bytes of a bulk message (see Connection, Bulk messages); its index in the low 24 bits of the tag
    static final int KIND_BULK = 3;
    // a message at least this long goes as a bulk message: an empty DATA message in its place in the
    // stream, its bytes under their own tag, received where the reader wants them
    static final int BULK_MIN = 32 * 1024;
    private static final long BULK_INDEX_MASK = (1L << 24) - 1;
    // in a CREDIT message's count: the reader reads into buffers a bulk message can land in directly,
    // so the sender should use bulk messages (through a slice they cost an empty message more)
    static final long CREDIT_WANTS_BULK = 1L << 62;
    // the whole tag: senders leave the low 24 bits 0, and UCX hashes a receive by its tag only when
    // its mask is full; any other mask puts it on the worker's one wildcard list, which every
    // arriving message searches from the start (with 1,000 connections' 9,000 receives posted,
    // ~0.4 ms per message: docs/benchmarks/selector-scale.md)
    static final long TAG_MASK = -1L;

    private WireFormat() {
    }

    static long tag(int id, int kind) {
        return ((long) id << 32) | ((long) kind << 24);
    }

    /** The tag of the bytes of bulk message {@code index} to the connection with id {@code id}. */
    static long bulkTag(int id, long index) {
        return tag(id, KIND_BULK) | (index & BULK_INDEX_MASK);
    }
}
