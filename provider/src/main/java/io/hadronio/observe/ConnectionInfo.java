package io.hadronio.observe;

import javax.management.ConstructorParameters;

/**
 * One open connection as {@code hadronio ss}, the MBean's {@code Connections} attribute and the
 * tests see it. An MXBean maps it to a {@code CompositeData} with one item per getter.
 */
public final class ConnectionInfo {
    private final String local;
    private final String remote;
    private final String state;
    private final String path;
    private final String transport;
    private final String reasonCode;
    private final String reason;
    private final long bytesIn;
    private final long bytesOut;
    private final long openedAt;
    private final long upgradedAt;

    /**
     * @param path       {@code kernel-tcp}, {@code kernel-unix} or {@code ucx} ({@link PathKind})
     * @param transport  what {@code HadronioSocketOptions.TRANSPORT} reads ({@code ucx:cma,sysv}, {@code tcp}, {@code unix})
     * @param reasonCode {@link Fallback#code()} while not on UCX, else empty
     * @param reason     its words (and how, where known), else empty
     * @param openedAt   when it opened, ms since the epoch
     * @param upgradedAt when both directions had moved to UCX, ms since the epoch; 0: not moved (or on UCX from its first byte)
     */
    @ConstructorParameters({"local", "remote", "state", "path", "transport", "reasonCode", "reason", "bytesIn",
        "bytesOut", "openedAt", "upgradedAt"})
    public ConnectionInfo(String local, String remote, String state, String path, String transport, String reasonCode,
                          String reason, long bytesIn, long bytesOut, long openedAt, long upgradedAt) {
        this.local = local;
        this.remote = remote;
        this.state = state;
        this.path = path;
        this.transport = transport;
        this.reasonCode = reasonCode;
        this.reason = reason;
        this.bytesIn = bytesIn;
        this.bytesOut = bytesOut;
        this.openedAt = openedAt;
        this.upgradedAt = upgradedAt;
    }

    public String getLocal() {
        return local;
    }

    public String getRemote() {
        return remote;
    }

    /** {@code OPEN}, {@code CLOSING}, ... (the lifecycle's ladder). */
    public String getState() {
        return state;
    }

    public String getPath() {
        return path;
    }

    public String getTransport() {
        return transport;
    }

    public String getReasonCode() {
        return reasonCode;
    }

    public String getReason() {
        return reason;
    }

    public long getBytesIn() {
        return bytesIn;
    }

    public long getBytesOut() {
        return bytesOut;
    }

    public long getOpenedAt() {
        return openedAt;
    }

    public long getUpgradedAt() {
        return upgradedAt;
    }

    @Override
    public String toString() {
        return local + " -> " + remote + " " + state + " " + path + " " + transport
                + (reasonCode.isEmpty() ? "" : " " + reasonCode + " (" + reason + ")") + " in=" + bytesIn + " out="
                + bytesOut + (upgradedAt != 0 ? " upgraded=" + upgradedAt : "");
    }
}
