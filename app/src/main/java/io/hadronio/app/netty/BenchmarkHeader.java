package io.hadronio.app.netty;

import io.netty.buffer.ByteBuf;

/**
 * The settings a benchmark client sends at the start of every connection (big-endian):
 * message length (int), concurrent connections (int), warm-up count (long), measured
 * count (long). Counts are per connection, except for the connection benchmark where
 * they count connections.
 */
record BenchmarkHeader(int length, int connections, long warmup, long messages) {
    static final int LENGTH = 24;

    void write(ByteBuf out) {
        out.writeInt(length).writeInt(connections).writeLong(warmup).writeLong(messages);
    }

    static BenchmarkHeader read(ByteBuf in) {
        return new BenchmarkHeader(in.readInt(), in.readInt(), in.readLong(), in.readLong());
    }
}
