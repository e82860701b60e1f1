package io.hadronio.app.evaluate;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * One evaluation: the points of a profile, each run {@code repetitions} times, interleaved
 * run by run (every point once, then every point again, in reverse order every other
 * repetition), so that a change in the machine's load over time hits every provider alike.
 */
final class Evaluation {
    private final Profile profile;
    private final List<Integer> sizes;
    private final int repetitions;
    private final Set<Mode> modes;
    private final Set<Provider> providers;

    Evaluation(Profile profile, List<Integer> sizes, int repetitions, Set<Mode> modes, Set<Provider> providers) {
        this.profile = profile;
        this.sizes = List.copyOf(sizes);
        this.repetitions = repetitions;
        this.modes = Set.copyOf(modes);
        this.providers = Set.copyOf(providers);
    }

    /** Every point of one repetition, in the order of the first repetition. */
    List<Point> points() {
        List<Point> points = new ArrayList<>();
        for (int size : sizes) {
            for (Metric metric : Metric.values()) {
                for (Mode mode : Mode.values()) {
                    if (!modes.contains(mode)) {
                        continue;
                    }
                    for (Provider provider : Provider.values()) {
                        if (providers.contains(provider) && (provider == Provider.UCX) == (mode == Mode.RAW)) {
                            points.add(new Point(provider, mode, metric, size));
                        }
                    }
                }
            }
        }
        return points;
    }

    int runs() {
        return points().size() * repetitions;
    }

    /**
     * Runs everything with {@code pair}; after every run, rewrites {@code runs.csv} in
     * {@code dir} so that an interrupted evaluation keeps what it measured.
     */
    List<RunRecord> run(BenchmarkPair pair, Path dir, PrintStream progressOut, boolean inPlace) throws IOException {
        List<RunRecord> records = new ArrayList<>();
        ProgressBar progress = new ProgressBar(progressOut, runs(), inPlace);
        for (int rep = 1; rep <= repetitions; rep++) {
            List<Point> order = points();
            if (rep % 2 == 0) {
                Collections.reverse(order);
            }
            for (Point p : order) {
                progress.starting("rep " + rep + "/" + repetitions + ": " + p);
                RunRecord r = pair.run(p, RunSizing.of(p, profile.windowSeconds()), rep);
                records.add(r);
                progress.finished();
                if (!r.ok()) {
                    progressOut.println((inPlace ? "\n" : "") + "evaluation: " + p + " failed: " + r.error());
                }
                Results.writeRunsCsv(dir.resolve(Results.RUNS_CSV), records);
            }
        }
        progress.close();
        return records;
    }
}
