package io.hadronio.app.evaluate;

/** What one run measures. */
public enum Metric {
    /** Unidirectional streaming, client to server: operations and bytes per second. */
    THROUGHPUT("throughput"),
    /** Ping-pong: round-trip times (and round trips per second). */
    LATENCY("latency");

    private final String id;

    Metric(String id) {
        this.id = id;
    }

    /** The name in result files; also the benchmark subcommand. */
    public String id() {
        return id;
    }

    public static Metric byId(String id) {
        for (Metric m : values()) {
            if (m.id.equals(id)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown metric " + id);
    }
}
