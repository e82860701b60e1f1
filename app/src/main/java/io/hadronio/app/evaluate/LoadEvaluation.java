package io.hadronio.app.evaluate;

import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The load mode: for each server model (blocking, non-blocking, Netty), provider (JDK,
 * hadroNIO) and connection count, offered rates in increasing order until the server no
 * longer keeps up ({@link LoadRecord#keptUp()}); the run that saturated is kept, higher
 * rates are skipped. Providers alternate per step so that load from elsewhere hits both.
 */
final class LoadEvaluation {
    private static final List<Mode> MODES = List.of(Mode.BLOCKING, Mode.NONBLOCKING, Mode.NETTY);

    private final LoadPlan plan;
    private final Set<Mode> modes;
    private final Set<Provider> providers;

    LoadEvaluation(LoadPlan plan, Set<Mode> modes, Set<Provider> providers) {
        this.plan = plan;
        this.modes = Set.copyOf(modes);
        this.providers = Set.copyOf(providers);
    }

    /** The most runs there can be (fewer once servers saturate). */
    int maxRuns() {
        return (int) (MODES.stream().filter(modes::contains).count()
                * List.of(Provider.JDK, Provider.HADRONIO).stream().filter(providers::contains).count()
                * plan.connections().size() * plan.rates().size());
    }

    List<LoadRecord> run(BenchmarkPair pair, Path dir, PrintStream progressOut, boolean inPlace) {
        List<LoadRecord> records = new ArrayList<>();
        ProgressBar progress = new ProgressBar(progressOut, maxRuns(), inPlace);
        for (Mode mode : MODES) {
            if (!modes.contains(mode)) {
                continue;
            }
            for (int connections : plan.connections()) {
                for (Provider provider : List.of(Provider.JDK, Provider.HADRONIO)) {
                    if (!providers.contains(provider)) {
                        continue;
                    }
                    for (int i = 0; i < plan.rates().size(); i++) {
                        int rate = plan.rates().get(i);
                        progress.starting(String.format(Locale.ROOT, "load %s %s %d connections %,d/s", mode.id(),
                                provider.label(), connections, rate));
                        LoadRecord r = run(pair, provider, mode, connections, rate);
                        records.add(r);
                        progress.finished();
                        Results.writeLoadCsv(dir.resolve(Results.LOAD_CSV), records);
                        if (!r.keptUp()) {
                            if (!r.ok()) {
                                progressOut.println((inPlace ? "\n" : "") + "evaluation: load " + mode.id() + " "
                                        + provider.id() + " " + connections + " at " + rate + "/s failed: " + r.error());
                            }
                            // saturated (or failed): the higher rates are skipped, as if run
                            for (int k = i + 1; k < plan.rates().size(); k++) {
                                progress.finished();
                            }
                            break;
                        }
                    }
                }
            }
        }
        progress.close();
        return records;
    }

    private LoadRecord run(BenchmarkPair pair, Provider provider, Mode mode, int connections, int rate) {
        long started = System.nanoTime();
        try {
            BenchmarkPair.Outcome o = pair.runOnFreePort("load-" + mode.id() + "-" + provider.id() + "-c" + connections
                    + "-r" + rate, provider, port -> {
                        String address = "127.0.0.1:" + port;
                        return List.of(List.of("load", "-s", "-a", address, "--mode", mode.id()),
                                List.of("load", "-r", address, "--mode", mode.id(), "-c", Integer.toString(connections),
                                        "--rate", Integer.toString(rate), "-l", Integer.toString(plan.length()),
                                        "--warmup", Double.toString(plan.warmupSeconds()),
                                        "--duration", Double.toString(plan.seconds())));
                    });
            if (!o.ok()) {
                throw new java.io.IOException(o.error());
            }
            BenchmarkPair.Measurement m = o.measurements().getFirst();
            ResultLine r = m.result();
            long answered = (long) r.number("messages");
            return new LoadRecord(provider, mode, connections, plan.length(), rate, r.number("achieved_per_s"),
                    r.number("avg_us"), r.number("p50_us"), r.number("p99_us"), r.number("p999_us"),
                    BenchmarkPair.Outcome.perOp(m.clientCpuNanos(), answered),
                    BenchmarkPair.Outcome.perOp(m.serverCpuNanos(), answered), o.clientPeakRssKb(), o.serverPeakRssKb(),
                    r.text("transports", "unknown"), o.elapsedSeconds(), null);
        } catch (Exception e) {
            return LoadRecord.failed(provider, mode, connections, plan.length(), rate,
                    (System.nanoTime() - started) / 1e9, String.valueOf(e.getMessage()));
        }
    }
}
