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
 * Runs one point once: a server JVM and a client JVM of the {@code hadronio} application
 * ({@code <mode> benchmark <metric>}), each pinned to its own core where there are two,
 * and turns what they print into a {@link RunRecord}.
 *
 * <p>CPU time comes from {@code /proc} ({@link ProcessCpu}), sampled for both processes when
 * the client opens its measured window ({@link MeasurementWindow}) and when it prints its
 * {@code RESULT} line, so that JVM start-up and warm-up are not counted. Peak resident memory
 * is each JVM's own {@code VmHWM} at exit ({@link ProcessResources}).
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

    /** The arguments after {@code hadronio} for the server and the client of {@code point} on {@code port}. */
    static List<List<String>> arguments(Point point, RunSizing sizing, int port) {
        String address = "127.0.0.1:" + port;
        List<String> common = List.of(point.mode().command(), "benchmark", point.metric().id());
        List<String> server = new ArrayList<>(common);
        server.addAll(List.of("-s", "-a", address));
        List<String> client = new ArrayList<>(common);
        client.addAll(List.of("-r", address, "-l", Integer.toString(point.size()),
                "-m", Integer.toString(sizing.messages())));
        if (point.mode() == Mode.RAW) {
            client.addAll(List.of("--warmup", Integer.toString(sizing.warmup()), "-n", "1"));
            if (point.metric() == Metric.THROUGHPUT) {
                client.addAll(List.of("-w", "64"));
            }
        } else {
            client.addAll(List.of("-t", Integer.toString(sizing.warmup())));
        }
        return List.of(server, client);
    }

    /** Runs {@code point} once; a failure is a record with its reason, not an exception. */
    RunRecord run(Point point, RunSizing sizing, int repetition) {
        long started = System.nanoTime();
        try {
            Outcome o = runOnFreePort("r" + repetition + "-" + point.tag(), point.provider(),
                    port -> arguments(point, sizing, port));
            return o.record(point, repetition);
        } catch (Exception e) {
            return RunRecord.failed(repetition, point, (System.nanoTime() - started) / 1e9, String.valueOf(e.getMessage()));
        }
    }

    /**
     * What one server/client pair reported.
     *
     * @param result          the client's RESULT line
     * @param clientCpuNanos  client CPU time in the measured window, or -1
     * @param serverCpuNanos  server CPU time in the measured window, or -1
     * @param clientPeakRssKb client's VmHWM at exit
     * @param serverPeakRssKb server's VmHWM at exit
     * @param elapsedSeconds  wall time of the pair
     */
    record Outcome(ResultLine result, long clientCpuNanos, long serverCpuNanos, long clientPeakRssKb,
                   long serverPeakRssKb, double elapsedSeconds) {

        /** CPU µs per operation from a window's nanoseconds, NaN if unknown. */
        static double perOp(long nanos, long ops) {
            return nanos < 0 || ops <= 0 ? Double.NaN : nanos / 1e3 / ops;
        }

        RunRecord record(Point point, int repetition) {
            ResultLine r = result;
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
                    bytes, mean, p50, p99, p999, perOp(clientCpuNanos, messages), perOp(serverCpuNanos, messages),
                    clientPeakRssKb, serverPeakRssKb, r.text("transports", "unknown"), elapsedSeconds, null);
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
            throws Exception {
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
     * listens the client ({@code hadronio <clientArgs>}) on its own; both must exit 0 and the
     * client must print a RESULT line. Output goes to {@code <tag>-server.log} and
     * {@code <tag>-client.log}.
     *
     * @throws Exception why the pair failed
     */
    Outcome run(String tag, Provider provider, List<String> serverArgs, List<String> clientArgs) throws Exception {
        long started = System.nanoTime();
        Process server = null;
        Process client = null;
        try {
            Path serverLog = logDir.resolve(tag + "-server.log");
            Path clientLog = logDir.resolve(tag + "-client.log");
            ServerWatch serverWatch = new ServerWatch();
            server = start(provider, pinning.serverCpu(), serverArgs, serverLog, serverWatch);
            // the client starts once the server listens: a hadroNIO client that connects while the server
            // is still being set up may find no local rendezvous yet and stay on kernel TCP
            awaitListening(server, serverWatch, serverLog);
            ClientWatch clientWatch = new ClientWatch(server);
            client = start(provider, pinning.clientCpu(), clientArgs, clientLog, clientWatch);
            clientWatch.self = client;
            clientWatch.startSamplingServer();
            Files.writeString(logDir.resolve(tag + "-command.txt"), String.join(" ", command(pinning.clientCpu(),
                    clientArgs)) + "\n", StandardCharsets.UTF_8);
            if (!client.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                throw new IOException("client took longer than " + timeoutSeconds + " s (" + clientLog + ")");
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
            if (clientWatch.result == null) {
                throw new IOException("the client printed no RESULT line (" + clientLog + ")");
            }
            return new Outcome(clientWatch.result, clientWatch.clientCpu, clientWatch.serverCpu, clientWatch.peakRssKb,
                    serverWatch.peakRssKb, (System.nanoTime() - started) / 1e9);
        } finally {
            destroy(client);
            destroy(server);
        }
    }

    private static void awaitListening(Process server, ServerWatch watch, Path log) throws Exception {
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
     * The client's output: samples both processes' CPU at the window's open and at the RESULT
     * line. A server often ends before the client has printed its result (it has answered
     * everything), so the server's CPU is also sampled every {@link #SAMPLE_MILLIS} ms from
     * {@code /proc/PID/stat}; when the server is gone at the end, its window is measured from
     * those samples instead (10 ms ticks, and up to one interval of its last work missing).
     */
    static final class ClientWatch extends OutputWatch {
        static final long SAMPLE_MILLIS = 10;
        private final Process server;
        volatile Process self;
        volatile ResultLine result;
        // CPU nanoseconds of each process in the window, -1 until known
        volatile long clientCpu = -1;
        volatile long serverCpu = -1;
        private volatile Map<Long, Long> clientAtOpen;
        private volatile Map<Long, Long> serverAtOpen;
        // the same window from /proc/PID/stat, for a server that ended before the client's result
        private volatile long serverTicksAtOpen = -1;
        private volatile long serverTicksLast = -1;

        ClientWatch(Process server) {
            this.server = server;
        }

        void startSamplingServer() {
            Thread.ofPlatform().daemon().name("server-cpu-" + server.pid()).start(() -> {
                while (result == null && server.isAlive()) {
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
            if (l.equals(MeasurementWindow.OPEN_LINE)) {
                clientAtOpen = self == null ? null : ProcessCpu.threads(self.pid());
                serverAtOpen = ProcessCpu.threads(server.pid());
                serverTicksAtOpen = ProcessCpu.tickNanos(server.pid());
            } else if (l.startsWith(ResultLine.PREFIX)) {
                clientCpu = self == null ? -1 : ProcessCpu.window(clientAtOpen, ProcessCpu.threads(self.pid()));
                serverCpu = ProcessCpu.window(serverAtOpen, ProcessCpu.threads(server.pid()));
                if (serverCpu < 0 && serverTicksAtOpen >= 0 && serverTicksLast >= 0) {
                    // the server is gone: its window from the periodic samples
                    serverCpu = serverTicksLast - serverTicksAtOpen;
                }
                result = new ResultLine(l);
            }
        }

    }
}
