package io.hadronio.app.evaluate;

import java.io.PrintStream;
import java.time.Duration;

/**
 * The terminal's view of a long evaluation: a bar, the run that is going on, and an estimate
 * of the time left from the mean time of the runs so far. On a terminal the line is redrawn
 * in place; elsewhere (CI logs) one line is printed per step (a JVM pair).
 */
final class ProgressBar {
    private static final int WIDTH = 30;

    private final PrintStream out;
    private final int total;
    private final boolean inPlace;
    private final long started = System.nanoTime();
    private int done;

    ProgressBar(PrintStream out, int total, boolean inPlace) {
        this.out = out;
        this.total = total;
        this.inPlace = inPlace;
    }

    /** Shows that run {@code done + 1} of {@code total}, described by {@code what}, is starting. */
    void starting(String what) {
        int filled = total == 0 ? WIDTH : done * WIDTH / total;
        String bar = "#".repeat(filled) + ".".repeat(WIDTH - filled);
        String left = done == 0 ? "?" : format(Duration.ofNanos((System.nanoTime() - started) / done * (total - done)));
        String line = String.format("[%s] %d/%d  %s  (left ~%s)", bar, done + 1, total, what, left);
        if (inPlace) {
            out.print("\r" + line + "\u001b[K");
        } else {
            out.println(line);
        }
        out.flush();
    }

    void finished() {
        done++;
    }

    void close() {
        if (inPlace) {
            out.println();
        }
        out.println("evaluation: " + done + " pairs in " + format(Duration.ofNanos(System.nanoTime() - started)));
        out.flush();
    }

    static String format(Duration d) {
        long s = d.toSeconds();
        return s >= 3600 ? String.format("%dh%02dm", s / 3600, s / 60 % 60)
                : s >= 60 ? String.format("%dm%02ds", s / 60, s % 60) : s + "s";
    }
}
