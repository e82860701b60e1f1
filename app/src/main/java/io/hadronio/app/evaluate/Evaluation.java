package io.hadronio.app.evaluate;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;

/**
 * One evaluation: the series of a profile (a provider in a mode, one metric, every size),
 * each run {@code repetitions} times on a JVM pair of its own ({@link BenchmarkPair}).
 * Runs are interleaved: repetition r of every series, providers side by side (the JDK's,
 * then hadroNIO's, for each mode and metric), before repetition r + 1, in reverse order every
 * other repetition, so that a change in the machine's load over time hits every provider
 * alike.
 */
final class Evaluation {
    private final Profile profile;
    private final List<Integer> sizes;
    private final int repetitions;
    private final Set<Mode> modes;
    private final Set<Provider> providers;
    private final Set<Metric> metrics;

    Evaluation(Profile profile, List<Integer> sizes, int repetitions, Set<Mode> modes, Set<Provider> providers,
            Set<Metric> metrics) {
        this.profile = profile;
        this.sizes = sizes.stream().sorted().distinct().toList();
        this.repetitions = repetitions;
        this.modes = Set.copyOf(modes);
        this.providers = Set.copyOf(providers);
        this.metrics = Set.copyOf(metrics);
    }

    /** Every series of one repetition, in the order of the first repetition; each lists its points by size. */
    List<List<Point>> series() {
        List<List<Point>> series = new ArrayList<>();
        for (Metric metric : Metric.values()) {
            if (!metrics.contains(metric)) {
                continue;
            }
            for (Mode mode : Mode.values()) {
                if (!modes.contains(mode)) {
                    continue;
                }
                for (Provider provider : Provider.values()) {
                    if (providers.contains(provider) && (provider == Provider.UCX) == (mode == Mode.RAW)) {
                        series.add(sizes.stream().map(size -> new Point(provider, mode, metric, size)).toList());
                    }
                }
            }
        }
        return series;
    }

    /** Every point of one repetition. */
    List<Point> points() {
        return series().stream().flatMap(List::stream).toList();
    }

    /** Runs of points: one record each. */
    int runs() {
        return points().size() * repetitions;
    }

    /** JVM pairs started: one per series and repetition. */
    int pairs() {
        return series().size() * repetitions;
    }

    /**
     * Runs everything with {@code pair}; after every pair, rewrites {@code runs.csv} in
     * {@code dir} so that an interrupted evaluation keeps what it measured.
     */
    List<RunRecord> run(BenchmarkPair pair, Path dir, PrintStream progressOut, boolean inPlace) throws IOException {
        List<RunRecord> records = new ArrayList<>();
        ProgressBar progress = new ProgressBar(progressOut, pairs(), inPlace);
        for (int rep = 1; rep <= repetitions; rep++) {
            List<List<Point>> order = new ArrayList<>(series());
            if (rep % 2 == 0) {
                Collections.reverse(order);
            }
            for (List<Point> points : order) {
                Point first = points.getFirst();
                progress.starting("rep " + rep + "/" + repetitions + ": " + first.mode().id() + " " + first.metric().id()
                        + " " + first.provider().label() + ", " + points.size() + " sizes");
                // every measured size finds the JVMs warmed up by the pair's unmeasured first pass
                List<RunRecord> done = pair.run(points, RunSizing.warmupPass(first, profile.windowSeconds()),
                        points.stream().map(p -> RunSizing.of(p, profile.windowSeconds())).toList(), rep);
                records.addAll(done);
                progress.finished();
                done.stream().filter(r -> !r.ok()).findFirst().ifPresent(r -> progressOut.println((inPlace ? "\n" : "")
                        + "evaluation: " + first.mode().id() + " " + first.metric().id() + " " + first.provider().label()
                        + " failed at " + Sizes.human(r.size()) + ": " + r.error()));
                Results.writeRunsCsv(dir.resolve(Results.RUNS_CSV), records);
            }
        }
        progress.close();
        return records;
    }
}
