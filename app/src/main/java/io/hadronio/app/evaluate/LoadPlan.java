package io.hadronio.app.evaluate;

import java.util.List;

/**
 * The load mode's share of a profile: connection counts, offered rates (requests per second,
 * all connections together, tried in increasing order until the server saturates), request
 * size and how long each run warms up and measures.
 *
 * @param connections   connection counts
 * @param rates         offered rates, increasing
 * @param length        request and response bytes
 * @param warmupSeconds seconds before measuring
 * @param seconds       measured seconds per run
 * @param repetitions   runs of every point (each a JVM pair per provider, server model and connection count)
 */
record LoadPlan(List<Integer> connections, List<Integer> rates, int length, double warmupSeconds, double seconds,
                int repetitions) {
    /** A run answered fewer than this share of the offered requests: the server is saturated, higher rates are skipped. */
    static final double SATURATED = 0.9;

    /**
     * The load mode of each profile. Quick keeps it to about a minute (two connection counts,
     * three rates, half-second windows) so that the whole quick profile stays near two to three
     * minutes; full runs the whole ladder three times for medians and spreads.
     */
    static LoadPlan of(Profile profile) {
        return switch (profile) {
            case SMOKE -> new LoadPlan(List.of(10), List.of(2_000), 64, 0.2, 0.3, 1);
            // steady: the quick load plan, when asked for (--load); its point is the streams
            case QUICK, STEADY -> new LoadPlan(List.of(10, 1000), List.of(1_000, 10_000, 50_000), 64, 0.3, 0.5, 1);
            case FULL -> new LoadPlan(List.of(1, 10, 100, 1000),
                    List.of(1_000, 2_000, 5_000, 10_000, 20_000, 50_000, 100_000, 200_000), 64, 0.3, 1, 3);
        };
    }
}
