package io.hadronio.app.grpc.ycsb;

import io.grpc.ManagedChannel;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.grpc.GrpcTransport;
import io.hadronio.app.grpc.kvs.KvsClient;
import io.hadronio.app.grpc.ycsb.KeyGenerators.Chooser;
import io.hadronio.app.grpc.ycsb.KeyGenerators.InsertCounter;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hadronio grpc kvs benchmark}: YCSB's core workloads against a {@code grpc kvs}
 * server. The load phase inserts the records, the run phase performs the workload's mix of
 * operations; client threads share gRPC channels; an optional target rate is spread over
 * the threads as YCSB does. Prints status lines while it runs, YCSB's summary and a
 * {@code RESULT} line per phase, and optionally writes everything as JSON.
 *
 * <p>The workloads, key choosers and measurements are reimplemented from YCSB's definitions
 * (not YCSB's code: its client expects its own DB bindings and command line): every
 * operation is checked (reads find a whole record, updates and read-modify-writes find their
 * key, inserts create a new one, scans return records), and failures are counted.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = "YCSB workloads A-F against a 'grpc kvs' server (DISABLE_HADRONIO=true: on the JDK's provider).")
public final class KvsBenchmark implements Callable<Integer> {
    @Option(names = {"-r", "--remote"}, required = true, paramLabel = "HOST:PORT",
            converter = SocketAddressConverter.class, description = "The kvs server.")
    InetSocketAddress remote;

    @Option(names = {"-w", "--workload"}, defaultValue = "A", description = "YCSB workload A-F (default: ${DEFAULT-VALUE}).")
    Workload workload;

    @Option(names = "--phase", defaultValue = "both", description = "load, run or both (default: ${DEFAULT-VALUE}).")
    String phase;

    @Option(names = {"-n", "--records"}, defaultValue = "10000", description = "Records to load / loaded (default: ${DEFAULT-VALUE}).")
    long records;

    @Option(names = {"-o", "--operations"}, defaultValue = "100000", description = "Operations of the run phase (default: ${DEFAULT-VALUE}).")
    long operations;

    @Option(names = {"-T", "--threads"}, defaultValue = "4", description = "Client threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = {"-c", "--channels"}, defaultValue = "1", description = "gRPC channels (connections) the threads share (default: ${DEFAULT-VALUE}).")
    int channels;

    @Option(names = "--target", defaultValue = "0", description = "Target operations/s over all threads, 0: as fast as possible (default: ${DEFAULT-VALUE}).")
    double target;

    @Option(names = "--status", defaultValue = "10", description = "Seconds between status lines, 0: none (default: ${DEFAULT-VALUE}).")
    int statusSeconds;

    @Option(names = "--export", paramLabel = "FILE", description = "Write the measurements as JSON to FILE.")
    Path export;

    @Override
    public Integer call() throws Exception {
        ProviderSelection.apply();
        if (!List.of("load", "run", "both").contains(phase)) {
            throw new picocli.CommandLine.ParameterException(new picocli.CommandLine(this), "--phase: load, run or both");
        }
        List<String> json = new ArrayList<>();
        long failures = 0;
        try (GrpcTransport transport = new GrpcTransport(Math.max(1, Math.min(channels, 4)))) {
            List<ManagedChannel> open = new ArrayList<>();
            for (int i = 0; i < channels; i++) {
                open.add(transport.channel(remote));
            }
            List<KvsClient> clients = open.stream().map(KvsClient::new).toList();
            System.out.printf("YCSB workload %s (%s) against %s: %d records, %d operations, %d threads, %d channels, "
                    + "target %s, provider %s%n", workload, workload.describe(), remote, records, operations, threads,
                    channels, target > 0 ? target + " ops/s" : "none", GrpcTransport.provider());
            InsertCounter inserts = new InsertCounter(0);
            if (!phase.equals("run")) {
                PhaseResult load = runPhase("load", clients, records, inserts, null);
                failures += load.failures;
                json.add(load.json);
            } else {
                for (long i = 0; i < records; i++) {
                    inserts.next();
                    inserts.acknowledge(i);
                }
            }
            if (!phase.equals("load")) {
                Chooser chooser = KeyGenerators.chooser(workload.distribution, inserts);
                PhaseResult run = runPhase("run", clients, operations, inserts, chooser);
                failures += run.failures;
                json.add(run.json);
            }
            for (ManagedChannel c : open) {
                c.shutdown().awaitTermination(5, TimeUnit.SECONDS);
            }
        }
        if (export != null) {
            Files.writeString(export, "{\"workload\": \"" + workload + "\", \"provider\": \"" + GrpcTransport.provider()
                    + "\", \"records\": " + records + ", \"threads\": " + threads + ", \"channels\": " + channels
                    + ", \"target_ops_per_s\": " + target + ", \"phases\": [" + String.join(", ", json) + "]}\n",
                    StandardCharsets.UTF_8);
            System.out.println("exported to " + export);
        }
        return failures == 0 ? 0 : 1;
    }

    private record PhaseResult(long failures, String json) {
    }

    /** One phase: {@code total} operations (load: inserts of records 0..total-1) over the threads. */
    private PhaseResult runPhase(String name, List<KvsClient> clients, long total, InsertCounter inserts,
                                 Chooser chooser) throws InterruptedException {
        Latencies latencies = new Latencies();
        List<Map<Operation, Latencies.Samples>> samples = new ArrayList<>();
        List<Thread> workers = new ArrayList<>();
        long intervalNanos = target > 0 ? (long) (threads * 1e9 / target) : 0;
        long start = System.nanoTime();
        for (int t = 0; t < threads; t++) {
            Map<Operation, Latencies.Samples> mine = new EnumMap<>(Operation.class);
            for (Operation op : Operation.values()) {
                mine.put(op, new Latencies.Samples());
            }
            samples.add(mine);
            KvsClient kvs = clients.get(t % clients.size());
            long share = total / threads + (t < total % threads ? 1 : 0);
            Thread worker = new Thread(() -> {
                long next = System.nanoTime();
                for (long i = 0; i < share; i++) {
                    if (intervalNanos > 0) {
                        next += intervalNanos;
                        long wait = next - System.nanoTime();
                        if (wait > 0) {
                            LockSupport.parkNanos(wait);
                        }
                    }
                    Operation op = chooser == null ? Operation.INSERT : workload.operation(ThreadLocalRandom.current().nextDouble());
                    long began = System.nanoTime();
                    boolean ok;
                    try {
                        ok = perform(kvs, op, inserts, chooser);
                    } catch (RuntimeException e) {
                        ok = false;
                    }
                    latencies.record(op, mine.get(op), System.nanoTime() - began, ok);
                }
            }, "ycsb-" + name + "-" + t);
            workers.add(worker);
            worker.start();
        }
        Status status = new Status(name, latencies, start);
        Thread statusThread = statusSeconds > 0 ? Thread.ofPlatform().daemon().start(() -> status.every(statusSeconds)) : null;
        for (Thread w : workers) {
            w.join();
        }
        long elapsed = System.nanoTime() - start;
        // the connections are still up: what carried them
        String transport = GrpcTransport.transport();
        if (statusThread != null) {
            statusThread.interrupt();
            statusThread.join();
            status.print();
        }
        return report(name, latencies, samples, elapsed, transport);
    }

    /** One operation of the workload; true when its answer is what the store must give. */
    private static boolean perform(KvsClient kvs, Operation op, InsertCounter inserts, Chooser chooser) {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        return switch (op) {
            case INSERT -> {
                long n = inserts.next();
                boolean created = kvs.insert(KeyGenerators.key(n), record(random));
                inserts.acknowledge(n);
                yield created;
            }
            case READ -> isRecord(kvs.read(KeyGenerators.key(chooser.next())));
            case UPDATE -> kvs.update(KeyGenerators.key(chooser.next()), random.nextInt(Workload.FIELD_COUNT), field(random));
            case SCAN -> !kvs.scan(KeyGenerators.key(chooser.next()), 1 + random.nextInt(Workload.MAX_SCAN_LENGTH)).isEmpty();
            case READ_MODIFY_WRITE -> {
                String key = KeyGenerators.key(chooser.next());
                yield isRecord(kvs.read(key)) && kvs.update(key, random.nextInt(Workload.FIELD_COUNT), field(random));
            }
        };
    }

    private static boolean isRecord(byte[] value) {
        return value != null && value.length == Workload.FIELD_COUNT * Workload.FIELD_LENGTH;
    }

    private static byte[] record(ThreadLocalRandom random) {
        byte[] b = new byte[Workload.FIELD_COUNT * Workload.FIELD_LENGTH];
        random.nextBytes(b);
        return b;
    }

    private static byte[] field(ThreadLocalRandom random) {
        byte[] b = new byte[Workload.FIELD_LENGTH];
        random.nextBytes(b);
        return b;
    }

    /**
     * YCSB's status lines: operations so far, the rate since the line before, and the mean
     * latency per operation since then. One every {@code statusSeconds} while a phase runs, and
     * a last one at its end (as YCSB's status thread does), so even a short phase has one.
     */
    private static final class Status {
        private static final DateTimeFormatter CLOCK = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss:SSS", Locale.ROOT);
        private final String phase;
        private final Latencies latencies;
        private final long start;
        private final Map<Operation, long[]> last = new EnumMap<>(Operation.class);
        private long lastCount;
        private long lastTime;

        Status(String phase, Latencies latencies, long start) {
            this.phase = phase;
            this.latencies = latencies;
            this.start = start;
            this.lastTime = start;
        }

        /** Prints lines every {@code seconds} until interrupted. */
        void every(int seconds) {
            while (true) {
                try {
                    Thread.sleep(seconds * 1000L);
                } catch (InterruptedException e) {
                    return;
                }
                print();
            }
        }

        synchronized void print() {
            long now = System.nanoTime();
            long count = latencies.total();
            StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "%s %s %d sec: %d operations; %.1f current ops/sec;",
                    LocalDateTime.now().format(CLOCK), phase, (now - start) / 1_000_000_000L, count,
                    (count - lastCount) * 1e9 / Math.max(1, now - lastTime)));
            for (Operation op : Operation.values()) {
                long c = latencies.count(op);
                long s = latencies.sumNanos(op);
                long[] before = last.getOrDefault(op, new long[2]);
                if (c > before[0]) {
                    line.append(String.format(Locale.ROOT, " [%s: Count=%d, Avg=%.1f us]", op.label(), c - before[0],
                            (s - before[1]) / 1e3 / (c - before[0])));
                }
                last.put(op, new long[] {c, s});
            }
            System.out.println(line);
            System.out.flush();
            lastCount = count;
            lastTime = now;
        }
    }

    /** YCSB's summary lines, the RESULT line, and the phase as JSON. */
    private PhaseResult report(String phase, Latencies latencies, List<Map<Operation, Latencies.Samples>> samples,
                               long elapsedNanos, String transport) {
        long count = latencies.total();
        double throughput = count * 1e9 / elapsedNanos;
        System.out.printf(Locale.ROOT, "[%s] [OVERALL], RunTime(ms), %d%n", phase, elapsedNanos / 1_000_000);
        System.out.printf(Locale.ROOT, "[%s] [OVERALL], Throughput(ops/sec), %.1f%n", phase, throughput);
        StringBuilder result = new StringBuilder(String.format(Locale.ROOT,
                "RESULT kind=grpc-kvs workload=%s phase=%s provider=%s threads=%d channels=%d operations=%d ops_per_s=%.0f failures=%d",
                workload, phase, GrpcTransport.provider(), threads, channels, count, throughput, latencies.totalFailures()));
        StringBuilder json = new StringBuilder(String.format(Locale.ROOT,
                "{\"phase\": \"%s\", \"operations\": %d, \"runtime_ms\": %d, \"throughput_ops_per_s\": %.1f, "
                        + "\"transport\": \"%s\", \"latency\": {", phase, count, elapsedNanos / 1_000_000, throughput, transport));
        boolean first = true;
        for (Operation op : Operation.values()) {
            if (latencies.count(op) == 0) {
                continue;
            }
            Latencies.Summary s = latencies.summary(op, samples.stream().map(m -> m.get(op)).toList());
            String label = op.label();
            System.out.printf(Locale.ROOT, "[%s] [%s], Operations, %d%n", phase, label, s.count());
            System.out.printf(Locale.ROOT, "[%s] [%s], AverageLatency(us), %.1f%n", phase, label, s.meanUs());
            System.out.printf(Locale.ROOT, "[%s] [%s], 50thPercentileLatency(us), %.1f%n", phase, label, s.p50Us());
            System.out.printf(Locale.ROOT, "[%s] [%s], 95thPercentileLatency(us), %.1f%n", phase, label, s.p95Us());
            System.out.printf(Locale.ROOT, "[%s] [%s], 99thPercentileLatency(us), %.1f%n", phase, label, s.p99Us());
            System.out.printf(Locale.ROOT, "[%s] [%s], MaxLatency(us), %.1f%n", phase, label, s.maxUs());
            System.out.printf(Locale.ROOT, "[%s] [%s], Failures, %d%n", phase, label, s.failures());
            String key = label.toLowerCase(Locale.ROOT).replace('-', '_');
            result.append(String.format(Locale.ROOT, " %s_p50_us=%.0f %s_p99_us=%.0f", key, s.p50Us(), key, s.p99Us()));
            json.append(first ? "" : ", ").append('"').append(label).append("\": ").append(s.json());
            first = false;
        }
        result.append(" transport=").append(transport);
        System.out.println(result);
        System.out.flush();
        return new PhaseResult(latencies.totalFailures(), json.append("}}").toString());
    }
}
