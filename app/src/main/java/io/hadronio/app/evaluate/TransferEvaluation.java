package io.hadronio.app.evaluate;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The file transfers (issue 39's broker shape): {@code hadronio patterns --pattern file} serving
 * one connection, against a client that fetches the file ({@code transferTo} on the server) or
 * uploads as many bytes ({@code transferFrom}). Providers alternate within each repetition (the
 * JDK first in odd ones). The file lives in {@code /dev/shm} where it fits, so that the disk is not
 * what is measured, and is removed afterwards.
 */
final class TransferEvaluation {
    static final List<String> PATTERNS = List.of("fetch", "upload");

    private final TransferPlan plan;
    private final List<Provider> providers;

    TransferEvaluation(TransferPlan plan, Set<Provider> providers) {
        this.plan = plan;
        this.providers = List.of(Provider.JDK, Provider.HADRONIO).stream().filter(providers::contains).toList();
    }

    /** JVM pairs the transfers start. */
    int pairs() {
        return PATTERNS.size() * providers.size() * plan.repetitions();
    }

    List<TransferRecord> run(BenchmarkPair pair, Path dir, PrintStream progressOut, boolean inPlace) throws IOException {
        List<TransferRecord> records = new ArrayList<>();
        if (providers.isEmpty()) {
            return records;
        }
        Path file = place(dir).resolve("hadronio-evaluate-" + ProcessHandle.current().pid() + ".dat");
        ProgressBar progress = new ProgressBar(progressOut, pairs(), inPlace);
        try {
            for (int rep = 1; rep <= plan.repetitions(); rep++) {
                List<Provider> order = new ArrayList<>(providers);
                if (rep % 2 == 0) {
                    Collections.reverse(order);
                }
                for (String pattern : PATTERNS) {
                    for (Provider provider : order) {
                        progress.starting(String.format(Locale.ROOT, "transfers rep %d/%d: %s %s", rep,
                                plan.repetitions(), pattern, provider.label()));
                        TransferRecord r = run(pair, file, pattern, provider, rep);
                        records.add(r);
                        progress.finished();
                        Results.writeTransfersCsv(dir.resolve(Results.TRANSFERS_CSV), records);
                        if (!r.ok()) {
                            progressOut.println((inPlace ? "\n" : "") + "evaluation: " + pattern + " " + provider.id()
                                    + " failed: " + r.error());
                        }
                    }
                }
            }
        } finally {
            progress.close();
            Files.deleteIfExists(file);
            Files.deleteIfExists(file.resolveSibling(file.getFileName() + ".upload"));
        }
        return records;
    }

    /**
     * {@code /dev/shm} when it holds the file and an upload's copy with room to spare (a
     * container's is often 64 MiB), else {@code dir}: the page cache keeps the file there too.
     */
    private Path place(Path dir) {
        Path shm = Path.of("/dev/shm");
        try {
            if (Files.isDirectory(shm) && Files.isWritable(shm)
                    && Files.getFileStore(shm).getUsableSpace() > 3 * plan.bytes()) {
                return shm;
            }
        } catch (IOException e) {
            // not usable: the results directory
        }
        return dir;
    }

    private TransferRecord run(BenchmarkPair pair, Path file, String pattern, Provider provider, int rep) {
        long started = System.nanoTime();
        String bytes = Long.toString(plan.bytes());
        try {
            BenchmarkPair.Outcome o = pair.runOnFreePort("transfer-r" + rep + "-" + pattern + "-" + provider.id(),
                    provider, port -> {
                        String address = "127.0.0.1:" + port;
                        return List.of(List.of("patterns", "-s", "--pattern", "file", "-a", address, "--file",
                                        file.toString(), "--bytes", bytes, "--connections", "1"),
                                List.of("patterns", "-r", address, "--pattern", pattern, "--bytes", bytes,
                                        "--warmup-passes", Integer.toString(plan.warmupPasses()),
                                        "--passes", Integer.toString(plan.passes())));
                    });
            double elapsed = (System.nanoTime() - started) / 1e9;
            if (!o.ok() || o.measurements().isEmpty()) {
                return failed(rep, provider, pattern, elapsed, o.ok() ? "no result" : o.error());
            }
            ResultLine r = o.measurements().getLast().result();
            if (r.number("failures") != 0) {
                return failed(rep, provider, pattern, elapsed, "the client found wrong bytes");
            }
            return new TransferRecord(rep, provider, pattern, plan.bytes(), r.number("mb_per_s"),
                    r.text("transport", "unknown"), elapsed, null);
        } catch (Exception e) {
            return failed(rep, provider, pattern, (System.nanoTime() - started) / 1e9, String.valueOf(e.getMessage()));
        }
    }

    private TransferRecord failed(int rep, Provider provider, String pattern, double elapsed, String error) {
        return new TransferRecord(rep, provider, pattern, plan.bytes(), Double.NaN, "", elapsed, error);
    }
}
