package io.hadronio.app.evaluate;

import java.util.List;

/**
 * How much to measure. Each run is sized ({@link RunSizing}) to last about
 * {@link #windowSeconds()} of measured time at the speed expected of its provider; JVM start,
 * connection set-up and warm-up come on top (about 1-2 s per run on a 2-core machine).
 */
public enum Profile {
    /** CI: two sizes, one repetition, very short runs. It checks that everything runs, not how fast. */
    SMOKE(List.of(64, 65536), 1, 0.02),
    /** The demo: sizes 4 B..1 MiB in powers of 4, one repetition. */
    QUICK(Sizes.powersOf(4), 1, 0.1),
    /** The published figures: sizes 4 B..1 MiB in powers of 2, five repetitions. */
    FULL(Sizes.powersOf(2), 5, 0.25);

    private final List<Integer> sizes;
    private final int repetitions;
    private final double windowSeconds;

    Profile(List<Integer> sizes, int repetitions, double windowSeconds) {
        this.sizes = sizes;
        this.repetitions = repetitions;
        this.windowSeconds = windowSeconds;
    }

    public List<Integer> sizes() {
        return sizes;
    }

    public int repetitions() {
        return repetitions;
    }

    /** Measured time a run aims at. */
    public double windowSeconds() {
        return windowSeconds;
    }

    /** The load mode's connections, rates and durations. */
    LoadPlan load() {
        return LoadPlan.of(this);
    }

    public String id() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }
}
