package io.hadronio.app.evaluate;

/**
 * The programming model a benchmark uses; each is a {@code hadronio} subcommand that runs the
 * same code on either NIO provider. {@link #RAW} is the UCX binding's own benchmark, which has
 * no NIO mode: it is drawn as the ceiling line in every mode's figures.
 */
public enum Mode {
    BLOCKING("blocking", "blocking channels", "blocking"),
    NONBLOCKING("nonblocking", "non-blocking channels with a Selector", "nonblocking"),
    NETTY("netty", "Netty (NIO transport)", "netty"),
    NIO2("nio2", "NIO.2 asynchronous channels (CompletionHandler)", "nio2"),
    RAW("raw", "UCX binding (tag API)", "ucx");

    private final String id;
    private final String label;
    private final String command;

    Mode(String id, String label, String command) {
        this.id = id;
        this.label = label;
        this.command = command;
    }

    public String id() {
        return id;
    }

    public String label() {
        return label;
    }

    /** The {@code hadronio} subcommand whose {@code benchmark latency|throughput} runs this mode. */
    String command() {
        return command;
    }

    public static Mode byId(String id) {
        for (Mode m : values()) {
            if (m.id.equals(id)) {
                return m;
            }
        }
        throw new IllegalArgumentException("unknown mode " + id);
    }
}
