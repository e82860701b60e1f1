package io.hadronio.app.evaluate;

import java.util.List;

/**
 * How much to measure. Each run (one size) is sized ({@link RunSizing}) to last about
 * {@link #windowSeconds()} of measured time at the speed expected of its provider; warm-up
 * comes on top, and a JVM pair's start (2-5 s on a 2-core machine) once per series of sizes.
 */
public enum Profile {
    /**
     * CI: two sizes, one repetition, very short runs, and benchmark JVMs without the C2 compiler. It checks that
     * everything runs and writes its files, not how fast: its figures mean nothing.
     */
    SMOKE(List.of(64, 65536), 1, 0.02, List.of("-XX:TieredStopAtLevel=1")),
    /**
     * The demo: sizes 4 B..1 MiB in powers of 4, three repetitions (the summary takes their
     * medians: one repetition caught in one of this machine's slow spells must not decide a point).
     */
    QUICK(Sizes.powersOf(4), 3, 0.1, List.of()),
    /** The published figures: sizes 4 B..1 MiB in powers of 2, five repetitions. */
    FULL(Sizes.powersOf(2), 5, 0.25, List.of()),
    /**
     * Large messages in the steady state: 64 KiB and 1 MiB, three-second windows, five
     * repetitions. The quick profile's streams last a tenth of a second, too short for a
     * stream to settle (hadroNIO's 64 KiB blocking stream moved 2.0-2.4 GB/s there and
     * 6.5 in 600,000-message runs, docs/benchmarks/blocking.md); issue 10's streaming
     * target against the binding is judged here ({@code --metrics throughput}, all modes: ~13 min).
     */
    STEADY(List.of(65536, 1 << 20), 5, 3.0, List.of());

    private final List<Integer> sizes;
    private final int repetitions;
    private final double windowSeconds;
    private final List<String> jvmOptions;

    Profile(List<Integer> sizes, int repetitions, double windowSeconds, List<String> jvmOptions) {
        this.sizes = sizes;
        this.repetitions = repetitions;
        this.windowSeconds = windowSeconds;
        this.jvmOptions = jvmOptions;
    }

    /**
     * Options for the benchmark JVMs: none where the figures matter. The smoke profile stops
     * at the C1 compiler: compiling with C2 is most of the CPU a short JVM pair costs (about
     * 5 s of CPU instead of 2.5 s per pair here), and on two cores CPU is what bounds how
     * long the smoke test takes.
     */
    public List<String> jvmOptions() {
        return jvmOptions;
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
