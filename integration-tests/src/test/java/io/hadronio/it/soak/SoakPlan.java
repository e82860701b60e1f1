package io.hadronio.it.soak;

import java.util.SplittableRandom;

/**
 * What one soak connection does, derived from the run's seed and the connection's id by
 * both of its sides alike: the messages each side sends (their sizes, 1 B to 4 MiB), which
 * of them it sends only after the peer's end-of-stream, and how the connection ends.
 *
 * <p>Endings:
 * <ul>
 * <li>{@link Ending#CLIENT_HALF_CLOSES}: the client sends its messages and shuts its output
 *     down; the server sends some messages, reads to end-of-stream, then sends the rest
 *     (its "tail": it keeps sending after the client's half-close) and closes, with
 *     {@code close()} at once ({@link #fullClose}) or {@code shutdownOutput()} first. The
 *     client reads everything, then end-of-stream, then closes.</li>
 * <li>{@link Ending#SERVER_HALF_CLOSES}: the same with the roles swapped.</li>
 * <li>{@link Ending#BOTH_HALF_CLOSE}: both send everything, shut their output down, read to
 *     end-of-stream and close.</li>
 * </ul>
 * Each direction's bytes are a stream of {@link io.hadronio.it.Data} starting at an offset
 * of its own ({@link #clientBase}, {@link #serverBase}), so that bytes of another connection
 * or of the other direction never pass for the right ones.
 */
record SoakPlan(long id, Ending ending, boolean fullClose, long[] client, int clientTailFrom, long[] server,
                int serverTailFrom, long clientBase, long serverBase) {
    static final long MAX_MESSAGE = 4L << 20;

    enum Ending {
        CLIENT_HALF_CLOSES, SERVER_HALF_CLOSES, BOTH_HALF_CLOSE
    }

    /** The plan of connection {@code id}: up to {@code maxMessages} messages before a side's half-close, and a tail. */
    static SoakPlan of(long seed, long id, int maxMessages) {
        SplittableRandom r = random(seed, id, 1);
        Ending ending = Ending.values()[r.nextInt(Ending.values().length)];
        boolean fullClose = r.nextBoolean();
        long[] client = messages(r, ending == Ending.SERVER_HALF_CLOSES, maxMessages);
        long[] server = messages(r, ending == Ending.CLIENT_HALF_CLOSES, maxMessages);
        int clientTailFrom = ending == Ending.SERVER_HALF_CLOSES ? client.length - 1 - r.nextInt(client.length)
                : client.length;
        int serverTailFrom = ending == Ending.CLIENT_HALF_CLOSES ? server.length - 1 - r.nextInt(server.length)
                : server.length;
        // 2^62 / 2 apart at least on average: streams of different connections never overlap in practice
        return new SoakPlan(id, ending, fullClose, client, clientTailFrom, server, serverTailFrom,
                r.nextLong() >>> 2, r.nextLong() >>> 2);
    }

    /** 0..max messages, at least one when this side has a tail; sizes log-uniform in 1 B..4 MiB, both ends often. */
    private static long[] messages(SplittableRandom r, boolean tail, int max) {
        int n = r.nextInt(max + 1);
        if (tail && n == 0) {
            n = 1;
        }
        long[] m = new long[n];
        for (int i = 0; i < n; i++) {
            int kind = r.nextInt(100);
            m[i] = kind < 4 ? 1 : kind < 8 ? MAX_MESSAGE : logUniform(r, MAX_MESSAGE);
        }
        return m;
    }

    /** 1..max, each order of magnitude about as likely as the next. */
    static long logUniform(SplittableRandom r, long max) {
        long v = (long) Math.exp(r.nextDouble() * Math.log(max + 1.0));
        return Math.max(1, Math.min(max, v));
    }

    /** A random of its own for each purpose ({@code salt}) of each connection. */
    static SplittableRandom random(long seed, long id, int salt) {
        return new SplittableRandom(seed * 0x9E3779B97F4A7C15L + id * 0xC2B2AE3D27D4EB4FL + salt);
    }

    long[] sends(boolean isClient) {
        return isClient ? client : server;
    }

    int tailFrom(boolean isClient) {
        return isClient ? clientTailFrom : serverTailFrom;
    }

    long base(boolean isClient) {
        return isClient ? clientBase : serverBase;
    }

    static long total(long[] messages) {
        long t = 0;
        for (long m : messages) {
            t += m;
        }
        return t;
    }

    /** Connection ids: the client JVM's incarnation, its slot, and the slot's generation. */
    static long id(int incarnation, int slot, int generation) {
        return (long) incarnation << 40 | (long) slot << 24 | generation;
    }

    static int incarnation(long id) {
        return (int) (id >>> 40);
    }
}
