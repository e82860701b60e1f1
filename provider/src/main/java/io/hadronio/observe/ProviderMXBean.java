package io.hadronio.observe;

import java.util.List;
import java.util.Map;

/**
 * The MBean {@code io.hadronio:type=Provider}: what a monitoring stack scrapes (JConsole,
 * VisualVM, Prometheus' JMX exporter) and what {@code hadronio ss} lists. Counts are since the
 * JVM started; maps are keyed by stable labels (paths: {@code kernel-tcp}, {@code kernel-unix},
 * {@code ucx}; reasons: {@link Fallback#code()}).
 */
public interface ProviderMXBean {
    /** Connections opened so far (connected or accepted). */
    long getConnectionsOpened();

    /** Connections whose channels closed so far. */
    long getConnectionsClosed();

    /** Open connections by the path their bytes take now. */
    Map<String, Long> getConnectionsOpenByPath();

    /** Connections that stayed off UCX, by reason code. */
    Map<String, Long> getFallbacksByReason();

    /** What each reason code means. */
    Map<String, String> getFallbackReasons();

    /** Upgrades whose session opened (each side counts its own). */
    long getUpgradesStarted();

    /** Upgraded connections with both directions on UCX. */
    long getUpgradesFinished();

    /** Upgrades given up after their session opened, before a direction switched. */
    long getUpgradesAbandoned();

    /** Eager handshakes that failed (clients' connects, servers' refused connections). */
    long getHandshakeFailures();

    /** Connections reset. */
    long getResets();

    /** Bytes applications read, by path. */
    Map<String, Long> getBytesInByPath();

    /** Bytes applications wrote, by path. */
    Map<String, Long> getBytesOutByPath();

    /** The configuration in force (the validated {@code hadronio.*} values, defaults included). */
    Map<String, String> getConfiguration();

    /** The {@code hadronio.*} system properties set in this JVM. */
    Map<String, String> getPropertiesSet();

    /** The open connections: addresses, state, path, reason when not on UCX, bytes, upgrade time. */
    List<ConnectionInfo> getConnections();
}
