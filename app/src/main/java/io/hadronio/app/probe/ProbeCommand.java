package io.hadronio.app.probe;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio probe}: what a fresh JVM's first connections cost, from outside. For each jar
 * under test and each pairing of providers (the JDK's or hadroNIO, client and server), it starts
 * a fresh server JVM ({@link ColdPeer}, which writes a greeting on accept) pinned to one core and
 * a fresh client JVM pinned to the other, which times its first {@code SocketChannel.open(address)}
 * (from just before the call, and from the probe's clock at the JVM's launch) and the median time
 * from connect to the whole greeting over its first connections. Rounds are interleaved (each
 * round runs every jar and pairing once, starting one further on), and the table shows the
 * medians over the rounds, jars side by side. Results: docs/benchmarks/connections.md ("The first
 * connection").
 *
 * <p>Both sides of a pairing run the same jar on the class path; a JDK side only lacks the
 * {@code java.nio.channels.spi.SelectorProvider} property, so that the JDK's figures pay for the
 * same class path.
 */
@Command(name = "probe", mixinStandardHelpOptions = true,
        description = {"Times a fresh JVM's first connections (cold start), JDK and hadroNIO, client and server,",
            "each side a fresh JVM pinned to its own core; jars side by side (--jar NAME=PATH, repeatable)."})
public final class ProbeCommand implements Callable<Integer> {
    private static final String PROVIDER = "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider";
    // client/server, in the order of the table
    private static final List<String> PAIRINGS = List.of("jdk/jdk", "hadronio/hadronio", "hadronio/jdk", "jdk/hadronio");

    @Spec
    CommandSpec spec;

    @Option(names = "--jar", paramLabel = "NAME=PATH",
            description = "A jar under test (an app jar: hadroNIO and its class path), named; repeatable. "
                    + "Default: this one, named 'this'.")
    Map<String, Path> jars = new LinkedHashMap<>();

    @Option(names = {"-r", "--runs"}, paramLabel = "N", defaultValue = "5",
            description = "Interleaved rounds: fresh JVMs per jar and pairing (default: ${DEFAULT-VALUE}).")
    int runs;

    @Option(names = {"-n", "--connections"}, paramLabel = "N", defaultValue = "21",
            description = "Connections each client makes, whose connect-to-greeting median is shown (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--pairings", split = ",", paramLabel = "CLIENT/SERVER",
            description = "Which pairings (default: jdk/jdk,hadronio/hadronio,hadronio/jdk,jdk/hadronio).")
    List<String> pairings = new ArrayList<>(PAIRINGS);

    @Option(names = "--server-cpu", defaultValue = "0", description = "Core of the server JVMs (default: ${DEFAULT-VALUE}).")
    int serverCpu;

    @Option(names = "--client-cpu", defaultValue = "1", description = "Core of the client JVMs (default: ${DEFAULT-VALUE}).")
    int clientCpu;

    @Option(names = "--jvm-option", paramLabel = "OPTION",
            description = "An extra JVM option for both sides (repeatable), e.g. --jvm-option=-Dhadronio.upgrade=false.")
    List<String> jvmOptions = new ArrayList<>();

    @Option(names = "--timeout", defaultValue = "60", description = "Seconds one JVM may take (default: ${DEFAULT-VALUE}).")
    int timeoutSeconds;

    /** One client JVM's RESULT line, or why there was none. */
    private record Run(long firstConnectMicros, long fromLaunchMicros, double greetingMedianMicros, String channel,
                       String failure) {
    }

    @Override
    public Integer call() throws Exception {
        for (String p : pairings) {
            if (!PAIRINGS.contains(p)) {
                throw new CommandLine.ParameterException(spec.commandLine(),
                        "pairing '" + p + "' is not one of " + PAIRINGS);
            }
        }
        if (runs < 1 || connections < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--runs and --connections must be at least 1");
        }
        if (jars.isEmpty()) {
            jars.put("this", Path.of(ProbeCommand.class.getProtectionDomain().getCodeSource().getLocation().toURI()));
        }
        Path peerDir = extractPeer();
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        // jar -> pairing -> runs
        Map<String, Map<String, List<Run>>> results = new LinkedHashMap<>();
        List<String[]> order = new ArrayList<>();
        for (String jar : jars.keySet()) {
            for (String pairing : pairings) {
                order.add(new String[] {jar, pairing});
                results.computeIfAbsent(jar, k -> new LinkedHashMap<>()).put(pairing, new ArrayList<>());
            }
        }
        for (int round = 0; round < runs; round++) {
            for (int k = 0; k < order.size(); k++) {
                String[] o = order.get((k + round) % order.size());
                Run r = runPair(java, peerDir, jars.get(o[0]), o[1]);
                results.get(o[0]).get(o[1]).add(r);
                System.err.printf(Locale.ROOT, "probe: round %d, %s, %s: %s%n", round + 1, o[0], o[1],
                        r.failure != null ? "FAILED " + r.failure : String.format(Locale.ROOT,
                                "first %d us, from launch %d us, greeting median %.1f us", r.firstConnectMicros,
                                r.fromLaunchMicros, r.greetingMedianMicros));
            }
        }
        print(results);
        return 0;
    }

    /** Writes ColdPeer's class file into a temporary directory, to go in front of each jar under test. */
    private static Path extractPeer() throws IOException {
        Path dir = Files.createTempDirectory("hadronio-probe");
        String name = ColdPeer.class.getName().replace('.', '/') + ".class";
        Path file = dir.resolve(name);
        Files.createDirectories(file.getParent());
        try (InputStream in = ColdPeer.class.getClassLoader().getResourceAsStream(name)) {
            if (in == null) {
                throw new IOException("cannot find " + name);
            }
            Files.copy(in, file);
        }
        file.toFile().deleteOnExit();
        file.getParent().toFile().deleteOnExit();
        return dir;
    }

    private List<String> command(String java, int cpu, boolean hadronio, Path peerDir, Path jar, String... args) {
        List<String> c = new ArrayList<>(List.of("taskset", "-c", Integer.toString(cpu), java,
                "--enable-native-access=ALL-UNNAMED"));
        if (hadronio) {
            c.add(PROVIDER);
        }
        c.addAll(jvmOptions);
        c.addAll(List.of("-cp", peerDir + File.pathSeparator + jar, ColdPeer.class.getName()));
        c.addAll(List.of(args));
        return c;
    }

    private Run runPair(String java, Path peerDir, Path jar, String pairing) throws Exception {
        boolean hadronioClient = pairing.startsWith("hadronio/");
        boolean hadronioServer = pairing.endsWith("/hadronio");
        Process server = new ProcessBuilder(command(java, serverCpu, hadronioServer, peerDir, jar, "server"))
                .redirectErrorStream(true).start();
        try {
            BufferedReader serverOut = new BufferedReader(new InputStreamReader(server.getInputStream(),
                    StandardCharsets.UTF_8));
            String port = null;
            StringBuilder serverLog = new StringBuilder();
            for (String line; (line = serverOut.readLine()) != null; ) {
                if (line.startsWith("PORT ")) {
                    port = line.substring(5).trim();
                    break;
                }
                serverLog.append(line).append('\n');
            }
            if (port == null) {
                return failed("the server printed no port: " + firstLine(serverLog.toString()));
            }
            // drain the server's output (its log lines) so that it never blocks on a full pipe
            Thread drain = new Thread(() -> {
                try {
                    serverOut.transferTo(Writer.nullWriter());
                } catch (IOException e) {
                    // the server is gone
                }
            });
            drain.setDaemon(true);
            drain.start();
            Instant launched = Instant.now();
            long launchedMicros = launched.getEpochSecond() * 1_000_000L + launched.getNano() / 1_000;
            Process client = new ProcessBuilder(command(java, clientCpu, hadronioClient, peerDir, jar, "client", port,
                    Integer.toString(connections), Long.toString(launchedMicros))).redirectErrorStream(true).start();
            String out = new String(client.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!client.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
                client.destroyForcibly();
                return failed("the client took longer than " + timeoutSeconds + " s");
            }
            String result = out.lines().filter(l -> l.startsWith("RESULT ")).findFirst().orElse(null);
            if (client.exitValue() != 0 || result == null) {
                return failed("client exit " + client.exitValue() + ": " + firstLine(out));
            }
            Run r = parse(result);
            boolean ours = r.channel.startsWith("io.hadronio.");
            if (ours != hadronioClient) {
                return failed("the client's channel is " + r.channel + ", not the " + (hadronioClient ? "hadroNIO" : "JDK")
                        + " provider's");
            }
            return r;
        } finally {
            server.getOutputStream().close();
            if (!server.waitFor(5, TimeUnit.SECONDS)) {
                server.destroyForcibly();
            }
        }
    }

    private static Run parse(String line) {
        Map<String, String> f = new LinkedHashMap<>();
        for (String kv : line.substring("RESULT ".length()).split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                f.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return new Run(Long.parseLong(f.get("first_connect_us")), Long.parseLong(f.get("from_launch_us")),
                Double.parseDouble(f.get("greeting_median_us")), f.getOrDefault("channel", "?"), null);
    }

    private static Run failed(String why) {
        return new Run(0, 0, 0, "", why);
    }

    private static String firstLine(String s) {
        String t = s.strip();
        int nl = t.indexOf('\n');
        return nl < 0 ? t : t.substring(0, nl);
    }

    private void print(Map<String, Map<String, List<Run>>> results) {
        System.out.println();
        System.out.printf(Locale.ROOT, "Cold start (hadronio probe): fresh JVMs, 127.0.0.1, server on core %d, client on core %d;"
                + " medians of %d interleaved rounds%n", serverCpu, clientCpu, runs);
        System.out.printf(Locale.ROOT, "first connect: the JVM's first SocketChannel.open(address), from just before the call"
                + " and from the JVM's launch; greeting: median over the first %d connections, connect to the server's"
                + " 8-byte greeting%n%n", connections);
        System.out.println("| jar | client | server | first connect ms | from launch ms | greeting median ms | runs |");
        System.out.println("|---|---|---|---:|---:|---:|---|");
        for (String pairing : pairings) {
            for (Map.Entry<String, Map<String, List<Run>>> e : results.entrySet()) {
                List<Run> ok = e.getValue().get(pairing).stream().filter(r -> r.failure == null).toList();
                long failed = e.getValue().get(pairing).size() - ok.size();
                String[] cs = pairing.split("/");
                System.out.printf(Locale.ROOT, "| %s | %s | %s | %s | %s | %s | %s |%n", e.getKey(), cs[0], cs[1],
                        ms(median(ok.stream().mapToDouble(r -> r.firstConnectMicros).toArray())),
                        ms(median(ok.stream().mapToDouble(r -> r.fromLaunchMicros).toArray())),
                        ms2(median(ok.stream().mapToDouble(r -> r.greetingMedianMicros).toArray())),
                        ok.size() + " ok" + (failed > 0 ? ", " + failed + " FAILED" : ""));
            }
        }
        System.out.println();
    }

    private static double median(double[] v) {
        if (v.length == 0) {
            return Double.NaN;
        }
        double[] s = v.clone();
        java.util.Arrays.sort(s);
        int n = s.length;
        return n % 2 == 1 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    }

    private static String ms(double micros) {
        return Double.isNaN(micros) ? "-" : String.format(Locale.ROOT, "%.1f", micros / 1000);
    }

    private static String ms2(double micros) {
        return Double.isNaN(micros) ? "-" : String.format(Locale.ROOT, "%.2f", micros / 1000);
    }
}
