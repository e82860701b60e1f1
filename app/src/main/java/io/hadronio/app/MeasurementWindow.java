package io.hadronio.app;

import io.hadronio.app.evaluate.ProcessCpu;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Tells a driver watching a benchmark client's standard output ({@code hadronio evaluate})
 * when the measured part starts, so that CPU per operation counts neither JVM start-up nor
 * warm-up. The line carries the client's own CPU time per thread at that moment (the driver
 * samples the server's when it reads the line): a driver that read the line late, as a loaded
 * machine makes it for a window of 20 ms, sampled the client after its window and measured
 * none of it. The end of the window is the client's {@code RESULT} line. A client that
 * measures several times in one JVM (sizes of a {@link SizeSequence}, rates of the load mode)
 * calls {@link #next()} before each, so that every measurement opens its own window. A client whose warm-up is {@link PracticeRounds} on an
 * event loop, where every round must run the same code, calls {@link #openRound} as each round
 * begins: the line then comes once per round, and a driver takes the last one before the
 * {@code RESULT} line, which is the measured round's.
 */
public final class MeasurementWindow {
    /**
     * How the line printed once, when the first measured operation starts, begins; then
     * {@link #THREADS_FIELD} and the client's CPU time per thread ({@link ProcessCpu#ownThreads}).
     */
    public static final String OPEN_LINE = "WINDOW open";
    private static final String THREADS_FIELD = " threads=";

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
                // before the caller starts its clock: reading /proc takes a fraction of a millisecond
                System.out.println(OPEN_LINE + THREADS_FIELD + ProcessCpu.ownThreads());
                System.out.flush();
                return;
            }
        }
    }

    /** The client's CPU time per thread that an {@link #OPEN_LINE} line carries, or null if it carries none. */
    public static String threadsIn(String openLine) {
        int at = openLine.indexOf(THREADS_FIELD);
        return at < 0 ? null : openLine.substring(at + THREADS_FIELD.length());
    }
}
