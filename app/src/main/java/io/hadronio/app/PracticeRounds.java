package io.hadronio.app;

/**
 * A latency benchmark's warm-up as practice measurements: rounds that run exactly the code of
 * the measured round, which comes last. The measured round then starts in the code the JIT
 * compiled for it.
 *
 * <p>Why: a warm-up that differs from the measured part by a branch - "is the warm-up over?",
 * first taken as the window opens - has its compiled loop thrown away at that very point (an
 * uncommon trap, {@code unstable_if}). The Netty round trip's measured half-second then began
 * with its event loop in the interpreter and the JIT recompiling it on the client's core:
 * {@code -Xlog:jit+compilation,deoptimization} showed the trap as the window opened and some 150
 * ms of compilations after it (docs/benchmarks/netty.md).
 */
public final class PracticeRounds {
    private PracticeRounds() {
    }

    // at least this many practice rounds (when the warm-up has that many round trips): the branch
    // that ends a round is then taken often enough in the warm-up to be compiled, and the JIT has
    // the rounds after the first few to finish whatever a round's end made it recompile
    static final int MIN_PRACTICE = 8;

    /**
     * The rounds for {@code warmup} round trips of warm-up and {@code messages} measured: practice
     * rounds that add up to {@code warmup} (at least {@link #MIN_PRACTICE} of them if the warm-up
     * has that many round trips, none longer than {@code messages}), then {@code messages}. Every
     * round fits a buffer of {@code messages} samples.
     */
    public static long[] of(long warmup, long messages) {
        if (warmup < 0 || messages <= 0) {
            throw new IllegalArgumentException("warm-up " + warmup + " and messages " + messages);
        }
        long practice = Math.min(warmup, Math.max(MIN_PRACTICE, (warmup + messages - 1) / messages));
        long[] rounds = new long[Math.toIntExact(practice + 1)];
        for (int i = 0; i < practice; i++) {
            // as even as they divide: the first (warmup % practice) rounds take one more
            rounds[i] = warmup / practice + (i < warmup % practice ? 1 : 0);
        }
        rounds[rounds.length - 1] = messages;
        return rounds;
    }

    /** One round of round trips: {@code n} of them, their times in the first {@code n} samples of the buffer. */
    @FunctionalInterface
    public interface Round {
        void run(int n) throws java.io.IOException;
    }

    /**
     * Runs the rounds of {@link #of} with {@code round}, opening the measurement window
     * ({@link MeasurementWindow#open}) before the last, the measured one.
     */
    public static void run(int warmup, int messages, Round round) throws java.io.IOException {
        long[] rounds = of(warmup, messages);
        for (int r = 0; r < rounds.length; r++) {
            if (r == rounds.length - 1) {
                MeasurementWindow.open();
            }
            round.run((int) rounds[r]);
        }
    }
}
