package io.hadronio.ucx;

/** {@code ucp_feature}: what a context must support. */
public enum Feature {
    TAG(1L),
    RMA(1L << 1),
    WAKEUP(1L << 4),
    STREAM(1L << 5),
    AM(1L << 6);

    final long bit;

    Feature(long bit) {
        this.bit = bit;
    }
}
