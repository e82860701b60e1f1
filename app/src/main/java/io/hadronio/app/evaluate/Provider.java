package io.hadronio.app.evaluate;

/** Who carries the bytes in one series of the evaluation. */
public enum Provider {
    /** The JDK's own {@code SelectorProvider} (kernel TCP over loopback). */
    JDK("jdk", "JDK"),
    /** hadroNIO, the same NIO code with {@code io.hadronio.HadronioProvider}. */
    HADRONIO("hadronio", "hadroNIO"),
    /** The UCX binding used directly (tag send/receive, busy polling): the ceiling line. */
    UCX("ucx", "UCX binding");

    private final String id;
    private final String label;

    Provider(String id, String label) {
        this.id = id;
        this.label = label;
    }

    /** The name in result files and on the command line. */
    public String id() {
        return id;
    }

    /** The name in plots and tables. */
    public String label() {
        return label;
    }

    public static Provider byId(String id) {
        for (Provider p : values()) {
            if (p.id.equals(id)) {
                return p;
            }
        }
        throw new IllegalArgumentException("unknown provider " + id);
    }
}
