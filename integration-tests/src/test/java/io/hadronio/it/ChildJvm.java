package io.hadronio.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running {@link Peer} (or another main class of the test class path) with
 * the same java binary and class path as the test JVM. Its stdout and stderr are merged
 * and read line by line: tests wait for the lines a peer prints ({@code PORT 1234},
 * {@code CLOSED}, ...) and send it commands on its stdin. {@link #close()} kills it
 * (SIGKILL) if it still runs, so no test leaves a process behind.
 */
public final class ChildJvm implements AutoCloseable {
    public static final String PROVIDER_PROPERTY = "java.nio.channels.spi.SelectorProvider";
    public static final String PROVIDER = "io.hadronio.HadronioProvider";
    // how long a peer may take to print an expected line (a hang guard, not a measurement)
    public static final Duration LINE_TIMEOUT = Duration.ofSeconds(30);
    // every child JVM we started and did not close yet, killed at shutdown as a last resort
    private static final List<Process> LIVE = new ArrayList<>();

    static {
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            synchronized (LIVE) {
                LIVE.forEach(Process::destroyForcibly);
            }
        }));
    }

    private final Process process;
    private final String description;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final StringBuffer output = new StringBuffer();
    private final OutputStream stdin;

    private ChildJvm(Process process, String description) {
        this.process = process;
        this.description = description;
        this.stdin = process.getOutputStream();
        Thread pump = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    output.append(line).append('\n');
                    lines.add(line);
                }
            } catch (IOException e) {
                output.append("(output closed: ").append(e).append(")\n");
            }
        }, "child-output-" + process.pid());
        pump.setDaemon(true);
        pump.start();
    }

    /** A child with hadroNIO enabled, plus these JVM options (e.g. {@code -Dhadronio.ucx.TLS=tcp}). */
    static ChildJvm withProvider(List<String> jvmOptions, String... args) throws IOException {
        List<String> options = new ArrayList<>();
        options.add("-D" + PROVIDER_PROPERTY + "=" + PROVIDER);
        options.addAll(jvmOptions);
        return start(Peer.class, options, args);
    }

    static ChildJvm withProvider(String... args) throws IOException {
        return withProvider(List.of(), args);
    }

    /** A child on the JDK's own provider (the property is not set at all). */
    static ChildJvm withoutProvider(String... args) throws IOException {
        return start(Peer.class, List.of(), args);
    }

    /**
     * The suite's connection mode, as the provider reads it: true in the default upgrade mode
     * (connections start on kernel TCP and move to UCX), false with -Dhadronio.upgrade=false
     * (connections on UCX from connect on). Children run in it unless a test says otherwise.
     */
    public static final boolean UPGRADE_MODE = io.hadronio.config.HadronioConfig.fromSystemProperties().upgrade();
    /** Local hadroNIO pairs open over a Unix stream, not TCP ({@code hadronio.local.stream}, with the upgrade mode). */
    public static final boolean LOCAL_STREAM = UPGRADE_MODE
            && io.hadronio.config.HadronioConfig.fromSystemProperties().localStream();

    public static ChildJvm start(Class<?> main, List<String> jvmOptions, String... args) throws IOException {
        return start(main, System.getProperty("java.class.path"), jvmOptions, args);
    }

    /** A child with its own class path (e.g. the shaded hadronio.jar and no SLF4J). */
    public static ChildJvm start(Class<?> main, String classPath, List<String> jvmOptions, String... args)
            throws IOException {
        return start(List.of(), main, classPath, jvmOptions, args);
    }

    /** A child started through {@code prefix} (e.g. {@code setpriv} to run it as another user). */
    public static ChildJvm start(List<String> prefix, Class<?> main, String classPath, List<String> jvmOptions,
                                 String... args) throws IOException {
        return start(prefix, main, classPath, jvmOptions, Map.of(), args);
    }

    /** A child with variables added to its environment (e.g. {@code DISABLE_HADRONIO=true} for the application). */
    public static ChildJvm start(List<String> prefix, Class<?> main, String classPath, List<String> jvmOptions,
                                 Map<String, String> environment, String... args) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>(prefix);
        command.add(java);
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-ea");
        command.add("-Xmx256m");
        // two cores shared by two JVMs: keep the children's JIT and GC threads cheap
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        // the suite runs in the connection mode of the JVM that runs it (-Dtest.jvm.flags=... -Dhadronio.upgrade=true)
        String upgrade = System.getProperty("hadronio.upgrade");
        if (upgrade != null && jvmOptions.stream().noneMatch(o -> o.startsWith("-Dhadronio.upgrade="))) {
            command.add("-Dhadronio.upgrade=" + upgrade);
        }
        command.addAll(jvmOptions);
        command.add("-cp");
        command.add(classPath);
        command.add(main.getName());
        command.addAll(List.of(args));
        ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
        builder.environment().putAll(environment);
        Process process = builder.start();
        synchronized (LIVE) {
            LIVE.add(process);
        }
        return new ChildJvm(process, main.getSimpleName() + " " + String.join(" ", args) + " " + jvmOptions);
    }

    public Process process() {
        return process;
    }

    /**
     * Waits for the next line starting with {@code prefix} (other lines, e.g. logging,
     * are skipped) and returns what follows the prefix, trimmed.
     */
    public String expect(String prefix) throws InterruptedException {
        return expect(prefix, LINE_TIMEOUT);
    }

    /** {@link #expect(String)} with another hang guard, for a line that follows long work. */
    public String expect(String prefix, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left > 0 ? lines.poll(Math.min(left, 100_000_000L), TimeUnit.NANOSECONDS) : null;
            if (line != null) {
                if (line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
                continue;
            }
            if (left <= 0 || (!process.isAlive() && lines.isEmpty() && pumpDone())) {
                throw new AssertionError("no line '" + prefix + "...' within " + timeout + " from " + report());
            }
        }
    }

    /**
     * The next line the child printed, whatever it is, or null when none came within
     * {@code timeout} (or the child ended and every line of it was taken).
     */
    public String poll(Duration timeout) throws InterruptedException {
        return lines.poll(timeout.toNanos(), TimeUnit.NANOSECONDS);
    }

    private boolean pumpDone() throws InterruptedException {
        // the process is gone: give the pump a moment to deliver its last lines
        Thread.sleep(200);
        return lines.isEmpty();
    }

    /** The port a server peer printed ({@code PORT n}). */
    public int port() throws InterruptedException {
        return Integer.parseInt(expect("PORT "));
    }

    /** Sends a line to the child's stdin. */
    public void send(String line) throws IOException {
        stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        stdin.flush();
    }

    /** Waits for the child to exit (a hang guard) and returns its exit code. */
    public int awaitExit() throws InterruptedException {
        if (!process.waitFor(LINE_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new AssertionError("child still running: " + report());
        }
        return process.exitValue();
    }

    /** SIGKILL, and wait until it is gone. */
    public void kill() throws InterruptedException {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
    }

    public String output() {
        return output.toString();
    }

    /**
     * True when the child printed an error: a peer's own {@code ERROR ...} line, an SLF4J
     * record at ERROR (Netty's, through slf4j-simple), or a {@code SEVERE} record of
     * java.util.logging (where hadroNIO's {@link System.Logger} ERROR records go by default).
     */
    public boolean printedErrors() {
        String out = output();
        return out.contains("ERROR") || out.lines().anyMatch(l -> l.startsWith("SEVERE: "));
    }

    public String report() {
        return "child JVM (" + description + ")" + (process.isAlive() ? " running" : " exited with "
                + process.exitValue()) + ", output:\n" + output;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        synchronized (LIVE) {
            LIVE.remove(process);
        }
    }
}
