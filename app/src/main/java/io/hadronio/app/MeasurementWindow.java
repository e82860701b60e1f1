package io.hadronio.app;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * Tells a driver watching a benchmark client's standard output ({@code hadronio evaluate})
 * when the measured part starts: it then samples the CPU time of both processes, so that
 * CPU per operation counts neither JVM start-up nor warm-up. The end of the window is the
 * client's {@code RESULT} line. A client that measures several times in one JVM (sizes of a
 * {@link SizeSequence}, rates of the load mode) calls {@link #next()} before each, so that
 * every measurement opens its own window. A client whose warm-up is {@link PracticeRounds} on an
 * event loop, where every round must run the same code, calls {@link #openRound} as each round
 * begins: the line then comes once per round, and a driver takes the last one before the
 * {@code RESULT} line, which is the measured round's.
 */
public final class MeasurementWindow {
    /** The line printed once, when the first measured operation starts. */
    public static final String OPEN_LINE = "WINDOW open";

    // the highest round of PracticeRounds that some connection of this measurement began (openRound;
    // open() is round 0): several connections (Netty) may start one, the first opens the window
    private static final AtomicInteger ROUND = new AtomicInteger(-1);

    private MeasurementWindow() {
    }

    /** The next measurement's measured part may open the window again. */
    public static void next() {
        ROUND.set(-1);
    }

    /** Prints {@link #OPEN_LINE} the first time it is called for this measurement; later calls do nothing. */
    public static void open() {
        openRound(0);
    }

    /**
     * Prints {@link #OPEN_LINE} the first time a connection of this measurement begins round
     * {@code round} of its {@link PracticeRounds}; later calls for that round do nothing.
     */
    public static void openRound(int round) {
        for (int seen = ROUND.get(); round > seen; seen = ROUND.get()) {
            if (ROUND.compareAndSet(seen, round)) {
                System.out.println(OPEN_LINE);
                System.out.flush();
                return;
            }
        }
    }
}
