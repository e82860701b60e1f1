package io.hadronio.observe;

/**
 * Which way a connection's bytes go, as the counters and the listing of connections split them:
 * the kernel's TCP, a local Unix stream (posing as TCP), or UCX.
 */
public enum PathKind {
    KERNEL_TCP("kernel-tcp"),
    KERNEL_UNIX("kernel-unix"),
    UCX("ucx");

    // PathKind.values() copies the array each call; counters index by ordinal
    static final PathKind[] ALL = values();

    private final String label;

    PathKind(String label) {
        this.label = label;
    }

    /** The stable label: {@code kernel-tcp}, {@code kernel-unix}, {@code ucx}. */
    public String label() {
        return label;
    }
}
