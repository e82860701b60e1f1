package io.hadronio.observe;

/**
 * Why a connection is not on UCX: a stable code (what scripts and dashboards match, as SMC's
 * decline codes are) and the words an operator reads. The codes never change meaning; new
 * reasons get new codes. A connection keeps the first reason recorded for it.
 */
public enum Fallback {
    /** The peer does not run hadroNIO (no accelerated listener answered), or the client never asked. */
    PEER_PLAIN("peer-plain", "the peer does not run hadroNIO (no accelerated listener or client answered)"),
    /** The peer runs hadroNIO with another key, or as another user (per-user keys). */
    OTHER_KEY("other-key", "the peer runs hadroNIO with another key or as another user"),
    /** Neither on this host nor in {@code hadronio.remote.networks}. */
    NOT_IN_REMOTE_NETWORKS("not-in-remote-networks", "the peer is neither on this host nor in hadronio.remote.networks"),
    /** UCX would carry it over tcp only: the kernel's TCP is faster ({@code hadronio.kernel.tcp}). */
    UCX_TCP_ONLY("ucx-tcp-only", "UCX offers only tcp to this peer: the kernel's TCP carries the bytes (hadronio.kernel.tcp)"),
    /** The peer answered the upgrade with PLAIN: UCX offers it only tcp, or the endpoint settings differ (its side says which). */
    PEER_DECLINED("peer-declined", "the peer keeps the connection on the kernel (UCX offers it only tcp, or the endpoint settings differ)"),
    /** The two sides' UCX endpoint settings differ. */
    PROFILE_DIFFERS("profile-differs", "the peers' UCX endpoint settings differ"),
    /** The upgrade session is open and the connection is moving; a direction may still be raw. */
    UPGRADE_PENDING("upgrade-pending", "the move to UCX is under way"),
    /**
     * Offered an upgrade that has not begun: a client moves at a write that is not its first once
     * {@code hadronio.upgrade.delay} passed, or once it has read 64 KiB.
     */
    UPGRADE_NOT_TRIGGERED("upgrade-not-triggered",
            "the move to UCX has not begun (the client begins it at a write after hadronio.upgrade.delay and hadronio.upgrade.writes earlier writes, or after 64 KiB written or read; a client without hadroNIO never does)"),
    /** The upgrade began and broke off before a direction switched. */
    UPGRADE_FAILED("upgrade-failed", "the move to UCX failed"),
    /** The eager handshake failed (refused, reset, timed out, broken). */
    HANDSHAKE_FAILED("handshake-failed", "the hadroNIO handshake failed"),
    /** UCX did not start in this JVM: everything stays on the kernel. */
    UCX_NOT_STARTED("ucx-not-started", "UCX did not start in this JVM");

    private final String code;
    private final String words;

    Fallback(String code, String words) {
        this.code = code;
        this.words = words;
    }

    /** The stable code, e.g. {@code peer-plain}. */
    public String code() {
        return code;
    }

    /** What the code means, for a person. */
    public String words() {
        return words;
    }
}
