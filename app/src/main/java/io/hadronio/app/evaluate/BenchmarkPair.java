package io.hadronio.app.evaluate;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.ProcessResources;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs one series once: a server JVM and a client JVM of the {@code hadronio} application
 * ({@code <mode> benchmark <metric>}), each pinned to its own core where there are two,
 * measuring every size of the series one after another ({@code -l 4,8,...} on the client,
 * {@code --sessions N} on the server) after one unmeasured pass, and turns what they print
 * into one {@link RunRecord} per size. One JVM pair for a whole size sweep is what keeps the evaluation short: a JVM
 * pair costs 2-5 s to start on a 2-core machine, a size's measurement a fraction of that.
 *
 * <p>CPU time comes from {@code /proc} ({@link ProcessCpu}), sampled for both processes
 * whenever the client opens a size's measured window ({@link MeasurementWindow}) and when it
 * prints that size's {@code RESULT} line, so that JVM start-up, warm-up and the other sizes
 * are not counted. Peak resident memory is each JVM's own {@code VmHWM} at exit
 * ({@link ProcessResources}): one figure per pair, the same for all its sizes.
 */
final class BenchmarkPair {
    // every server prints this once it listens
    private static final String LISTENING = "listening on";
    private static final long SERVER_START_SECONDS = 60;
    private static final long SERVER_EXIT_SECONDS = 20;

    private final List<String> java;
    private final Pinning pinning;
    private final Path logDir;
    private final long timeoutSeconds;

    /**
     * @param java           the command that starts a JVM running {@code io.hadronio.app.HadronioCommand}
     * @param pinning        which cores the two processes get
     * @param logDir         where every process's output is kept
     * @param timeoutSeconds longest a client may take
     */
    BenchmarkPair(List<String> java, Pinning pinning, Path logDir, long timeoutSeconds) {
        this.java = List.copyOf(java);
        this.pinning = pinning;
        this.logDir = logDir;
        this.timeoutSeconds = timeoutSeconds;
    }

    /** Where the two processes run: taskset cores, or no pinning (one core, or no taskset). */
    record Pinning(int serverCpu, int clientCpu) {
        static final Pinning NONE = new Pinning(-1, -1);

        boolean pinned() {
            return serverCpu >= 0;
        }

        List<String> prefix(int cpu) {
            return cpu < 0 ? List.of() : List.of("taskset", "-c", Integer.toString(cpu));
        }

        @Override
        public String toString() {
            return pinned() ? "server on core " + serverCpu + ", client on core " + clientCpu : "not pinned";
        }
    }

    /**
     * The arguments after {@code hadronio} for the server and the client of one series on
     * {@code port}: an unmeasured pass at the first point's size ({@code warmupPass}), then
     * {@code points} (one provider, mode and metric, in the order measured) with their sizings.
     */
    static List<List<String>> arguments(List<Point> points, RunSizing warmupPass, List<RunSizing> sizings, int port) {
        Point first = points.getFirst();
        List<Integer> sizes = new ArrayList<>(List.of(first.size()));
        points.forEach(p -> sizes.add(p.size()));
        List<RunSizing> all = new ArrayList<>(List.of(warmupPass));
        all.addAll(sizings);
        String address = "127.0.0.1:" + port;
        List<String> common = List.of(first.mode().command(), "benchmark", first.metric().id());
        List<String> server = new ArrayList<>(common);
        server.addAll(List.of("-s", "-a", address, "--sessions", Integer.toString(sizes.size())));
        List<String> client = new ArrayList<>(common);
        client.addAll(List.of("-r", address, "-l", join(sizes, s -> s), "-m", join(all, RunSizing::messages)));
        String warmups = join(all, RunSizing::warmup);
        if (first.mode() == Mode.RAW) {
            client.addAll(List.of("--warmup", warmups, "-n", "1"));
            if (first.metric() == Metric.THROUGHPUT) {
                // fresh data: the sender writes every message before it sends it, as an application
                // produces its bytes (and as a provider's copy into its send buffer does); without it
                // the binding sends one buffer nobody writes, whose clean lines the receiver copies at
                // about twice the rate (12-13 against 6-7 GB/s at 64 KiB here, docs/benchmarks/blocking.md)
                client.addAll(List.of("-w", "64", "--fresh"));
            }
        } else {
            client.addAll(List.of("-t", warmups));
        }
        return List.of(server, client);
    }

    private static <T> String join(List<T> values, java.util.function.ToIntFunction<T> f) {
        return String.join(",", values.stream().map(v -> Integer.toString(f.applyAsInt(v))).toList());
    }

    /**
     * Runs {@code points} (one series: same provider, mode and metric) on one JVM pair; one
     * record per point, in order. The pair first runs {@code warmupPass} at the first point's
     * size and throws its result away: without it, the first size a fresh pair measures comes
     * out slower than the next one in every series (measured: hadroNIO's 4-byte
     * blocking round trip 10.6 µs mean against 2.0 µs at 8 bytes; Netty's still falling over
     * the next three sizes), the JIT and the JVMs' start-up still busy. A failure is a record
     * with its reason, not an exception: the sizes measured before it keep their figures.
     */
    List<RunRecord> run(List<Point> points, RunSizing warmupPass, List<RunSizing> sizings, int repetition) {
        long started = System.nanoTime();
        Point first = points.getFirst();
        String tag = "r" + repetition + "-" + first.mode().id() + "-" + first.metric().id() + "-" + first.provider().id();
        Outcome o;
        try {
            o = runOnFreePort(tag, first.provider(), port -> arguments(points, warmupPass, sizings, port));
        } catch (Exception e) {
            o = new Outcome(List.of(), -1, -1, (System.nanoTime() - started) / 1e9, String.valueOf(e.getMessage()));
        }
        // the warm-up pass's result is not a point's
        List<Measurement> measured = o.measurements().isEmpty() ? List.of()
                : o.measurements().subList(1, o.measurements().size());
        List<RunRecord> records = new ArrayList<>();
        for (int i = 0; i < points.size(); i++) {
            Point p = points.get(i);
            if (i < measured.size()) {
                records.add(o.record(measured.get(i), p, repetition));
            } else {
                double elapsed = i == measured.size() ? o.elapsedSeconds() : 0;
                records.add(RunRecord.failed(repetition, p, elapsed, o.error() != null ? o.error()
                        : "the client printed no RESULT line for this size"));
            }
        }
        return records;
    }

    /**
     * What a client printed for one size, with the CPU both processes used in its window.
     *
     * @param result         the client's RESULT line
     * @param clientCpuNanos client CPU time in the measured window, or -1
     * @param serverCpuNanos server CPU time in the measured window, or -1
     * @param elapsedSeconds wall time from the previous RESULT line (the first, the warm-up pass's: from the
     *                       pair's start)
     */
    record Measurement(ResultLine result, long clientCpuNanos, long serverCpuNanos, double elapsedSeconds) {
    }

    /**
     * What one server/client pair reported.
     *
     * @param measurements    one per size the client finished, in order
     * @param clientPeakRssKb client's VmHWM at exit, or -1
     * @param serverPeakRssKb server's VmHWM at exit, or -1
     * @param elapsedSeconds  wall time of the pair
     * @param error           why the pair failed (after the sizes in {@code measurements}), or null
     */
    record Outcome(List<Measurement> measurements, long clientPeakRssKb, long serverPeakRssKb, double elapsedSeconds,
                   String error) {

        /** CPU µs per operation from a window's nanoseconds, NaN if unknown. */
        static double perOp(long nanos, long ops) {
            return nanos < 0 || ops <= 0 ? Double.NaN : nanos / 1e3 / ops;
        }

        boolean ok() {
            return error == null;
        }

        RunRecord record(Measurement m, Point point, int repetition) {
            ResultLine r = m.result();
            if (r.has("length") && (int) r.number("length") != point.size()) {
                return RunRecord.failed(repetition, point, m.elapsedSeconds(), "the client measured "
                        + (int) r.number("length") + " B where " + point.size() + " B was due");
            }
            long messages = (long) r.number("messages");
            double ops;
            double bytes;
            double mean = Double.NaN;
            double p50 = Double.NaN;
            double p99 = Double.NaN;
            double p999 = Double.NaN;
            if (point.metric() == Metric.LATENCY) {
                mean = r.number("avg_us");
                p50 = r.has("p50_us") ? r.number("p50_us") : r.number("median_us");
                p99 = r.number("p99_us");
                p999 = r.number("p999_us");
                ops = 1e6 / mean;
                bytes = ops * point.size();
            } else if (point.mode() == Mode.RAW) {
                // the binding prints both with 3 decimals: a slow run's M msg/s can read 0.000 where its GB/s
                // still has digits, a small message's GB/s 0.002 where its M msg/s reads 0.416; the larger
                // printed number has more significant digits, so both figures come from it
                double gb = r.number("gb_per_s");
                double mmsg = r.number("mmsg_per_s");
                bytes = mmsg >= gb ? mmsg * 1e6 * point.size() : gb * 1e9;
                ops = bytes / point.size();
            } else {
                ops = r.number("ops_per_s");
                bytes = r.number("mb_per_s") * 1e6;
            }
            return new RunRecord(repetition, point.provider(), point.mode(), point.metric(), point.size(), messages, ops,
                    bytes, mean, p50, p99, p999, perOp(m.clientCpuNanos(), messages),
                    perOp(m.serverCpuNanos(), messages), clientPeakRssKb, serverPeakRssKb, r.text("transports", "unknown"),
                    m.elapsedSeconds(), null);
        }
    }

    /** The server's port was taken between {@link #freePort()} and its bind. */
    static final class PortTaken extends IOException {
        PortTaken(String message) {
            super(message);
        }
    }

    /**
     * {@link #run} on a port picked free just before; once more on another port if the server
     * found it taken (the pick and the server's bind cannot be atomic).
     *
     * @param arguments server and client arguments for a port
     */
    Outcome runOnFreePort(String tag, Provider provider, java.util.function.IntFunction<List<List<String>>> arguments)
            throws IOException {
        for (int attempt = 1; ; attempt++) {
            List<List<String>> args = arguments.apply(freePort());
            try {
                return run(tag, provider, args.get(0), args.get(1));
            } catch (PortTaken e) {
                if (attempt == 2) {
                    throw e;
                }
            }
        }
    }

    /**
     * Runs one pair: the server ({@code hadronio <serverArgs>}) on its core, and once it
     * listens the client ({@code hadronio <clientArgs>}) on its own; both must exit 0. The
     * client must print a RESULT line at least every {@code timeoutSeconds} (one per size).
     * Output goes to {@code <tag>-server.log} and {@code <tag>-client.log}. A pair that
     * fails after its client printed some RESULT lines keeps them, with the reason.
     *
     * @throws PortTaken the server could not bind its port (nothing was measured)
     */
    Outcome run(String tag, Provider provider, List<String> serverArgs, List<String> clientArgs) throws PortTaken {
        long started = System.nanoTime();
        Process server = null;
        Process client = null;
        ServerWatch serverWatch = new ServerWatch();
        ClientWatch clientWatch = null;
        try {
            Path serverLog = logDir.resolve(tag + "-server.log");
            Path clientLog = logDir.resolve(tag + "-client.log");
            server = start(provider, pinning.serverCpu(), serverArgs, serverLog, serverWatch);
            // a hadroNIO client starts once the server listens: one that connects while the server is still
            // being set up may find no local rendezvous yet and stay on kernel TCP. The JDK's and the binding's
            // clients have no rendezvous to miss: they start with the server (both retry connecting until it
            // listens), which saves a JVM start-up per pair
            boolean startTogether = provider != Provider.HADRONIO;
            if (!startTogether) {
                awaitListening(server, serverWatch, serverLog);
            }
            clientWatch = new ClientWatch(server, started);
            client = start(provider, pinning.clientCpu(), clientArgs, clientLog, clientWatch);
            clientWatch.self = client;
            if (startTogether) {
                awaitListening(server, serverWatch, serverLog);
            }
            clientWatch.startSamplingServer();
            Files.writeString(logDir.resolve(tag + "-command.txt"), String.join(" ", command(pinning.clientCpu(),
                    clientArgs)) + "\n", StandardCharsets.UTF_8);
            // a stuck size fails the pair, however many sizes came before it
            while (!client.waitFor(200, TimeUnit.MILLISECONDS)) {
                if (System.nanoTime() - clientWatch.lastResultNanos > TimeUnit.SECONDS.toNanos(timeoutSeconds)) {
                    // a stuck pair is a finding: keep what both JVMs were doing
                    dumpThreads(client, logDir.resolve(tag + "-client-threads.txt"));
                    dumpThreads(server, logDir.resolve(tag + "-server-threads.txt"));
                    throw new IOException("client printed no RESULT line for " + timeoutSeconds + " s (" + clientLog
                            + "; thread dumps beside it: " + tag + "-client-threads.txt, " + tag + "-server-threads.txt)");
                }
            }
            clientWatch.output.get(10, TimeUnit.SECONDS);
            if (client.exitValue() != 0) {
                throw new IOException("client exited with " + client.exitValue() + " (" + clientLog + ")");
            }
            if (!server.waitFor(SERVER_EXIT_SECONDS, TimeUnit.SECONDS)) {
                throw new IOException("server did not exit after its client finished (" + serverLog + ")");
            }
            serverWatch.output.get(10, TimeUnit.SECONDS);
            if (server.exitValue() != 0) {
                throw new IOException("server exited with " + server.exitValue() + " (" + serverLog + ")");
            }
            if (clientWatch.measurements.isEmpty()) {
                throw new IOException("the client printed no RESULT line (" + clientLog + ")");
            }
            return new Outcome(List.copyOf(clientWatch.measurements), clientWatch.peakRssKb, serverWatch.peakRssKb,
                    (System.nanoTime() - started) / 1e9, null);
        } catch (PortTaken e) {
            throw e;
        } catch (Exception e) {
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
            List<Measurement> done = clientWatch == null ? List.of() : List.copyOf(clientWatch.measurements);
            return new Outcome(done, clientWatch == null ? -1 : clientWatch.peakRssKb, serverWatch.peakRssKb,
                    (System.nanoTime() - started) / 1e9, String.valueOf(e.getMessage()));
        } finally {
            destroy(client);
            destroy(server);
        }
    }

    private static void awaitListening(Process server, ServerWatch watch, Path log) throws Exception {
        // PortTaken is an IOException: the caller tells it apart
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SERVER_START_SECONDS);
        while (!watch.listening.isDone()) {
            if (!server.isAlive()) {
                watch.output.get(10, TimeUnit.SECONDS);
                String message = "server exited with " + server.exitValue() + " before listening (" + log + ")";
                throw watch.portTaken ? new PortTaken(message) : new IOException(message);
            }
            if (System.nanoTime() > deadline) {
                throw new IOException("server did not listen within " + SERVER_START_SECONDS + " s (" + log + ")");
            }
            try {
                watch.listening.get(50, TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException e) {
                // look again
            }
        }
    }

    private List<String> command(int cpu, List<String> args) {
        List<String> cmd = new ArrayList<>(pinning.prefix(cpu));
        cmd.addAll(java);
        cmd.addAll(args);
        return cmd;
    }

    private Process start(Provider provider, int cpu, List<String> args, Path log, OutputWatch watch) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(command(cpu, args)).redirectErrorStream(true);
        pb.environment().put("DISABLE_HADRONIO", Boolean.toString(provider == Provider.JDK));
        pb.environment().put(ProcessResources.VARIABLE, "true");
        Process p = pb.start();
        Thread reader = new Thread(() -> watch.drain(p, log), "output-" + log.getFileName());
        reader.setDaemon(true);
        reader.start();
        return p;
    }

    /** Writes {@code jcmd <pid> Thread.print} of a live JVM to {@code file}; best effort, at most 20 s. */
    private static void dumpThreads(Process p, Path file) {
        if (p == null || !p.isAlive()) {
            return;
        }
        Path jcmd = Path.of(System.getProperty("java.home"), "bin", "jcmd");
        try {
            Process dump = new ProcessBuilder(jcmd.toString(), Long.toString(p.pid()), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(file.toFile()).start();
            if (!dump.waitFor(20, TimeUnit.SECONDS)) {
                dump.destroyForcibly();
            }
        } catch (IOException e) {
            // no jcmd, or the JVM went away: the log has to do
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void destroy(Process p) {
        if (p != null && p.isAlive()) {
            p.destroy();
            try {
                if (!p.waitFor(2, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
            } catch (InterruptedException e) {
                p.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A TCP port that nobody listens on now (the server binds it a moment later). */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    /** Copies a process's output to its log and hands every line to {@link #line}. */
    abstract static class OutputWatch implements Consumer<String> {
        final CompletableFuture<Void> output = new CompletableFuture<>();
        volatile long peakRssKb = -1;

        void drain(Process p, Path log) {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                    PrintWriter out = new PrintWriter(Files.newBufferedWriter(log, StandardCharsets.UTF_8))) {
                String l;
                while ((l = in.readLine()) != null) {
                    accept(l);
                    out.println(l);
                }
                output.complete(null);
            } catch (IOException | RuntimeException e) {
                output.completeExceptionally(e);
            }
        }

        @Override
        public void accept(String l) {
            if (l.startsWith(ProcessResources.PREFIX)) {
                for (String w : l.substring(ProcessResources.PREFIX.length()).split(" ")) {
                    if (w.startsWith("peak_rss_kb=")) {
                        peakRssKb = Long.parseLong(w.substring("peak_rss_kb=".length()));
                    }
                }
            }
            line(l);
        }

        abstract void line(String l);
    }

    /** The server's output: when it listens, whether its port was taken, and its peak memory. */
    static final class ServerWatch extends OutputWatch {
        final CompletableFuture<Void> listening = new CompletableFuture<>();
        volatile boolean portTaken;

        @Override
        void line(String l) {
            if (l.contains(LISTENING)) {
                listening.complete(null);
            } else if (l.contains("BindException: Address already in use")) {
                portTaken = true;
            }
        }
    }

    /**
     * The client's output: samples both processes' CPU at each size's window open and at its
     * RESULT line. A server often ends before the client has printed its last result (it has
     * answered everything), so the server's CPU is also sampled every {@link #SAMPLE_MILLIS}
     * ms from {@code /proc/PID/stat}; when the server is gone at a window's end, its window is
     * measured from those samples instead (10 ms ticks, and up to one interval of its last
     * work missing).
     */
    static final class ClientWatch extends OutputWatch {
        static final long SAMPLE_MILLIS = 10;
        private final Process server;
        volatile Process self;
        // appended by the output thread, read by the driver once the client has exited (or failed)
        final List<Measurement> measurements = new java.util.concurrent.CopyOnWriteArrayList<>();
        volatile long lastResultNanos;
        private volatile Map<Long, Long> clientAtOpen;
        private volatile Map<Long, Long> serverAtOpen;
        // the same window from /proc/PID/stat, for a server that ended before the client's result
        private volatile long serverTicksAtOpen = -1;
        private volatile long serverTicksLast = -1;
        private volatile boolean done;

        /** @param pairStarted when the pair started ({@link System#nanoTime()}): the first size's elapsed time counts from it */
        ClientWatch(Process server, long pairStarted) {
            this.server = server;
            this.lastResultNanos = pairStarted;
        }

        void startSamplingServer() {
            Thread.ofPlatform().daemon().name("server-cpu-" + server.pid()).start(() -> {
                while (!done && server.isAlive()) {
                    long t = ProcessCpu.tickNanos(server.pid());
                    if (t >= 0) {
                        serverTicksLast = t;
                    }
                    try {
                        Thread.sleep(SAMPLE_MILLIS);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
            });
        }

        @Override
        void line(String l) {
            if (l.startsWith(MeasurementWindow.OPEN_LINE)) {
                // the client's CPU as it opened the window, from its line: sampled here, it could be
                // read after the window if this thread got to the line late
                clientAtOpen = ProcessCpu.parse(MeasurementWindow.threadsIn(l));
                serverAtOpen = ProcessCpu.threads(server.pid());
                serverTicksAtOpen = ProcessCpu.tickNanos(server.pid());
            } else if (l.startsWith(ResultLine.PREFIX)) {
                long clientCpu = self == null ? -1 : ProcessCpu.window(clientAtOpen, ProcessCpu.threads(self.pid()));
                long serverCpu = ProcessCpu.window(serverAtOpen, ProcessCpu.threads(server.pid()));
                if (serverCpu < 0 && serverTicksAtOpen >= 0 && serverTicksLast >= 0) {
                    // the server is gone: its window from the periodic samples
                    serverCpu = serverTicksLast - serverTicksAtOpen;
                }
                long now = System.nanoTime();
                measurements.add(new Measurement(new ResultLine(l), clientCpu, serverCpu, (now - lastResultNanos) / 1e9));
                lastResultNanos = now;
                clientAtOpen = null;
                serverAtOpen = null;
                serverTicksAtOpen = -1;
            }
        }

        @Override
        void drain(Process p, Path log) {
            try {
                super.drain(p, log);
            } finally {
                done = true;
            }
        }
    }
}
