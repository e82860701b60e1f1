package io.hadronio.path;

/**
 * The bytes one direction of a connection carried so far, by path (the kernel socket, raw; UCX),
 * for the observing tools (observe/Counters sums them when asked). Written only by that
 * direction's reader or writer, under the channel's read or write lock, with plain stores; read
 * racily by the tools. Padded on both sides (as Agrona pads its queues' indices): the reader's
 * and the writer's counts never share a cache line with each other, nor with the fields both of
 * them read on every call ({@link Paths}'), which a store per read or write would otherwise
 * invalidate in the other thread's cache.
 */
final class DirectionBytes extends DirectionBytesValues {
    // padding after the values (with DirectionBytesPadding's before them): 64 bytes each side
    long p10, p11, p12, p13, p14, p15, p16, p17;

    /** {@code n} (> 0) bytes went over the kernel socket, raw. */
    void addRaw(long n) {
        raw += n;
    }

    /** {@code n} (> 0) bytes went over UCX. */
    void addUcx(long n) {
        ucx += n;
    }

    long raw() {
        return raw;
    }

    long ucx() {
        return ucx;
    }
}

/** The padding before {@link DirectionBytesValues}' fields (superclass fields come first in HotSpot's layout). */
abstract class DirectionBytesPadding {
    long p00, p01, p02, p03, p04, p05, p06, p07;
}

/** The counts, between the paddings. */
abstract class DirectionBytesValues extends DirectionBytesPadding {
    long raw;
    long ucx;
}
