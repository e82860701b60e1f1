package io.hadronio.app.evaluate;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The load mode: for each server model (blocking, non-blocking, Netty, NIO.2), connection count and
 * provider (JDK, hadroNIO), one JVM pair whose client goes through the offered rates in
 * increasing order on the same connections until the server no longer keeps up
 * ({@link LoadPlan#SATURATED}; higher rates are skipped). Providers alternate per step, and
 * every repetition runs all steps before the next one (in reverse order every other one), so
 * that load from elsewhere hits both providers alike.
 */
final class LoadEvaluation {
    private static final List<Mode> MODES = List.of(Mode.BLOCKING, Mode.NONBLOCKING, Mode.NETTY, Mode.NIO2);

    private final LoadPlan plan;
    private final Set<Mode> modes;
    private final Set<Provider> providers;

    LoadEvaluation(LoadPlan plan, Set<Mode> modes, Set<Provider> providers) {
        this.plan = plan;
        this.modes = Set.copyOf(modes);
        this.providers = Set.copyOf(providers);
    }

    /** One JVM pair of one repetition: a server model, a connection count, a provider. */
    private record Step(Mode mode, int connections, Provider provider) {
    }

    private List<Step> steps() {
        List<Step> steps = new ArrayList<>();
        for (Mode mode : MODES) {
            for (int connections : plan.connections()) {
                for (Provider provider : List.of(Provider.JDK, Provider.HADRONIO)) {
                    if (modes.contains(mode) && providers.contains(provider)) {
                        steps.add(new Step(mode, connections, provider));
                    }
                }
            }
        }
        return steps;
    }

    /** JVM pairs the load mode starts. */
    int pairs() {
        return steps().size() * plan.repetitions();
    }

    List<LoadRecord> run(BenchmarkPair pair, Path dir, PrintStream progressOut, boolean inPlace) {
        List<LoadRecord> records = new ArrayList<>();
        ProgressBar progress = new ProgressBar(progressOut, pairs(), inPlace);
        for (int rep = 1; rep <= plan.repetitions(); rep++) {
            List<Step> order = new ArrayList<>(steps());
            if (rep % 2 == 0) {
                Collections.reverse(order);
            }
            for (Step step : order) {
                progress.starting(String.format(Locale.ROOT, "load rep %d/%d: %s %s, %d connections", rep,
                        plan.repetitions(), step.mode().id(), step.provider().label(), step.connections()));
                List<LoadRecord> done = run(pair, step, rep);
                records.addAll(done);
                progress.finished();
                Results.writeLoadCsv(dir.resolve(Results.LOAD_CSV), records);
                done.stream().filter(r -> !r.ok()).forEach(r -> progressOut.println((inPlace ? "\n" : "")
                        + "evaluation: load " + step.mode().id() + " " + step.provider().id() + " " + step.connections()
                        + " at " + (long) r.offeredPerSec() + "/s failed: " + r.error()));
            }
        }
        progress.close();
        return records;
    }

    /** One pair through the rate ladder: a record per rate it ran, and a failed one for the rate it failed at. */
    private List<LoadRecord> run(BenchmarkPair pair, Step step, int rep) {
        long started = System.nanoTime();
        String rates = String.join(",", plan.rates().stream().map(r -> Integer.toString(r)).toList());
        BenchmarkPair.Outcome o;
        try {
            o = pair.runOnFreePort("load-r" + rep + "-" + step.mode().id() + "-" + step.provider().id() + "-c"
                    + step.connections(), step.provider(), port -> {
                        String address = "127.0.0.1:" + port;
                        return List.of(List.of("load", "-s", "-a", address, "--mode", step.mode().id()),
                                List.of("load", "-r", address, "--mode", step.mode().id(),
                                        "-c", Integer.toString(step.connections()), "--rate", rates,
                                        "--stop-below", Double.toString(LoadPlan.SATURATED),
                                        "-l", Integer.toString(plan.length()),
                                        "--warmup", Double.toString(plan.warmupSeconds()),
                                        "--duration", Double.toString(plan.seconds())));
                    });
        } catch (Exception e) {
            o = new BenchmarkPair.Outcome(List.of(), -1, -1, (System.nanoTime() - started) / 1e9,
                    String.valueOf(e.getMessage()));
        }
        List<LoadRecord> records = new ArrayList<>();
        for (int i = 0; i < o.measurements().size(); i++) {
            BenchmarkPair.Measurement m = o.measurements().get(i);
            ResultLine r = m.result();
            long answered = (long) r.number("messages");
            records.add(new LoadRecord(rep, step.provider(), step.mode(), step.connections(), plan.length(),
                    plan.rates().get(i), r.number("achieved_per_s"), r.number("avg_us"), r.number("p50_us"),
                    r.number("p99_us"), r.number("p999_us"), BenchmarkPair.Outcome.perOp(m.clientCpuNanos(), answered),
                    BenchmarkPair.Outcome.perOp(m.serverCpuNanos(), answered), o.clientPeakRssKb(), o.serverPeakRssKb(),
                    r.text("transports", "unknown"), m.elapsedSeconds(), null));
        }
        if (!o.ok() && records.size() < plan.rates().size()) {
            records.add(LoadRecord.failed(rep, step.provider(), step.mode(), step.connections(), plan.length(),
                    plan.rates().get(records.size()), o.elapsedSeconds(), o.error()));
        }
        return records;
    }
}
