package io.hadronio.app.ucx;

/**
 * What one benchmark measures. The client sends its settings to the server in the
 * handshake, so a server needs only its kind; both sides then run the same loops.
 *
 * @param kind     latency (ping-pong) or throughput (streaming)
 * @param length   bytes per message
 * @param messages measured messages per run
 * @param warmup   messages before the first run, not measured
 * @param window   throughput: most sends (and posted receives) outstanding at once; latency: 1
 * @param runs     measured runs, each of {@code messages} messages
 */
public record BenchmarkSettings(Kind kind, int length, int messages, int warmup, int window, int runs) {

    /** The two benchmarks. */
    public enum Kind {
        LATENCY, THROUGHPUT;

        String label() {
            return name().toLowerCase(java.util.Locale.ROOT);
        }
    }

    public BenchmarkSettings {
        if (kind == null) {
            throw new IllegalArgumentException("kind missing");
        }
        if (length < 0) {
            throw new IllegalArgumentException("length must be >= 0, not " + length);
        }
        if (messages < 1) {
            throw new IllegalArgumentException("messages must be >= 1, not " + messages);
        }
        if (warmup < 0) {
            throw new IllegalArgumentException("warm-up must be >= 0, not " + warmup);
        }
        if (window < 1) {
            throw new IllegalArgumentException("window must be >= 1, not " + window);
        }
        if (runs < 1) {
            throw new IllegalArgumentException("runs must be >= 1, not " + runs);
        }
    }

    @Override
    public String toString() {
        return kind.label() + ": length=" + length + " B, messages=" + messages + " (+" + warmup + " warm-up)"
                + (kind == Kind.THROUGHPUT ? ", window=" + window : "") + ", runs=" + runs;
    }
}
