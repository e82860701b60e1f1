package io.hadronio.app;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Tells a driver watching a benchmark client's standard output ({@code hadronio evaluate})
 * when the measured part starts: it then samples the CPU time of both processes, so that
 * CPU per operation counts neither JVM start-up nor warm-up. The end of the window is the
 * client's {@code RESULT} line. A client that measures several times in one JVM (sizes of a
 * {@link SizeSequence}, rates of the load mode) calls {@link #next()} before each, so that
 * every measurement opens its own window.
 */
public final class MeasurementWindow {
    /** The line printed once, when the first measured operation starts. */
    public static final String OPEN_LINE = "WINDOW open";

    // several connections (Netty) may start their measured part; the first one of a measurement opens the window
    private static final AtomicBoolean OPENED = new AtomicBoolean();

    private MeasurementWindow() {
    }

    /** The next measurement's measured part may open the window again. */
    public static void next() {
        OPENED.set(false);
    }

    /** Prints {@link #OPEN_LINE} the first time it is called for this measurement; later calls do nothing. */
    public static void open() {
        if (OPENED.compareAndSet(false, true)) {
            System.out.println(OPEN_LINE);
            System.out.flush();
        }
    }
}
