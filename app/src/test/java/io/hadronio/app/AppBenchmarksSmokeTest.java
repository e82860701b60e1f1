package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hadronio.ucx.Ucx;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code hadronio grpc benchmark}, {@code jetty benchmark} and {@code jgroups benchmark}
 * briefly, in real JVMs (a JVM's provider is fixed at its first use of NIO), on the JDK's
 * provider ({@code DISABLE_HADRONIO=true}) and on hadroNIO: every run completes, answers
 * calls, counts no failure and names the provider asked for and a transport. Behaviour only;
 * no figure is checked. The JVMs stop at C1, as the evaluation's smoke profile does.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AppBenchmarksSmokeTest {
    private static final Pattern LISTENING = Pattern.compile("listening on [^ ]*:(\\d+)");
    private static final List<String> SHORT = List.of("--warmup", "0.2", "-d", "0.5");

    private final List<Jvm> jvms = new ArrayList<>();

    @AfterEach
    void stopJvms() {
        jvms.forEach(Jvm::kill);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void grpcBenchmarkShouldAnswerCallsInFlightAndOneAtATime(String provider) throws Exception {
        clientAndServer(provider, "grpc", "4");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void jettyBenchmarkShouldAnswerRequestsInFlightAndOneAtATime(String provider) throws Exception {
        clientAndServer(provider, "jetty", "4");
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void jgroupsMembersShouldReceiveEveryMulticastAndAnswerRpcs(String provider) throws Exception {
        assumeProvider(provider);
        String ports = Arrays.stream(freePorts(3)).mapToObj(String::valueOf).collect(Collectors.joining(","));
        for (int m = 0; m < 3; m++) {
            start(provider, "jgroups", "benchmark", "-m", String.valueOf(m), "-p", ports, "--warmup", "0.2", "-d", "1");
        }
        for (int m = 0; m < 3; m++) {
            Jvm member = jvms.get(m);
            assertEquals(0, member.waitFor(90), member::output);
            List<String> lines = member.results();
            String multicast = only(lines, "mode=multicast", member);
            assertResult(multicast, provider, member);
            assertTrue(Long.parseLong(field(multicast, "received")) > 0, multicast);
            assertTrue(Long.parseLong(field(multicast, "sent")) > 0, multicast);
            if (m == 0) {
                String rpc = only(lines, "mode=rpc", member);
                assertResult(rpc, provider, member);
                assertTrue(Long.parseLong(field(rpc, "calls")) > 0, rpc);
            }
        }
    }

    /** A server and a client of {@code app benchmark}: both loops answered, nothing failed. */
    private void clientAndServer(String provider, String app, String inFlight) throws Exception {
        assumeProvider(provider);
        Jvm server = start(provider, app, "benchmark", "-s", "-a", "127.0.0.1:0");
        String port = server.await(LISTENING, 60);
        List<String> args = new ArrayList<>(List.of(app, "benchmark", "-r", "127.0.0.1:" + port, "-i", inFlight));
        args.addAll(SHORT);
        Jvm client = start(provider, args.toArray(String[]::new));
        assertEquals(0, client.waitFor(60), () -> client.output() + "\n--- server:\n" + server.output());
        List<String> lines = client.results();
        for (String mode : List.of("concurrent", "sequential")) {
            String line = only(lines, "mode=" + mode, client);
            assertResult(line, provider, client);
            assertTrue(Long.parseLong(field(line, "calls")) > 0, line);
            assertEquals(mode.equals("concurrent") ? inFlight : "1", field(line, "in_flight"), line);
        }
        assertTrue(server.isAlive(), server::output);
    }

    private static void assumeProvider(String provider) {
        if (provider.equals("hadronio")) {
            assumeTrue(Ucx.isAvailable(), () -> "UCX not available: " + Ucx.unavailableReason());
        }
    }

    private static void assertResult(String line, String provider, Jvm jvm) {
        assertEquals(provider, field(line, "provider"), jvm::output);
        assertEquals("0", field(line, "failures"), jvm::output);
        assertTrue(Double.parseDouble(field(line, "per_s")) > 0, line);
        assertFalse(field(line, "transport").isEmpty(), line);
    }

    private static String only(List<String> lines, String mode, Jvm jvm) {
        List<String> matching = lines.stream().filter(l -> l.contains(" " + mode + " ")).toList();
        assertEquals(1, matching.size(), () -> "one RESULT line with " + mode + " expected:\n" + jvm.output());
        return matching.getFirst();
    }

    private static String field(String line, String key) {
        return Arrays.stream(line.split(" ")).filter(f -> f.startsWith(key + "=")).map(f -> f.substring(key.length() + 1))
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + " in " + line));
    }

    /** Ports free on 127.0.0.1 now (JGroups' TCPPING needs every member's before any starts). */
    private static int[] freePorts(int n) throws IOException {
        return io.hadronio.app.jgroups.MemberPorts.free(n);
    }

    /** {@code hadronio args} in a JVM of this class path on {@code provider}. */
    private Jvm start(String provider, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), HadronioCommand.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("DISABLE_HADRONIO", Boolean.toString(provider.equals("jdk")));
        Jvm jvm = new Jvm(String.join(" ", args), pb.start());
        jvms.add(jvm);
        return jvm;
    }

    /** A child JVM whose output is collected as it comes. */
    private static final class Jvm {
        private final String name;
        private final Process process;
        private final StringBuilder output = new StringBuilder();
        private final Thread reader;

        Jvm(String name, Process process) {
            this.name = name;
            this.process = process;
            this.reader = Thread.ofPlatform().daemon().start(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = r.readLine()) != null) {
                        synchronized (output) {
                            output.append(line).append('\n');
                            output.notifyAll();
                        }
                    }
                } catch (IOException e) {
                    // the process was killed
                }
            });
        }

        /** The first group of the first line matching {@code pattern}, waiting up to {@code seconds}. */
        String await(Pattern pattern, long seconds) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
            synchronized (output) {
                while (true) {
                    Matcher m = pattern.matcher(output);
                    if (m.find()) {
                        return m.group(1);
                    }
                    long left = deadline - System.nanoTime();
                    if (left <= 0 || !process.isAlive()) {
                        fail("no '" + pattern + "' from " + name + ":\n" + output);
                    }
                    output.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(left, TimeUnit.SECONDS.toNanos(1)))));
                }
            }
        }

        int waitFor(long seconds) throws InterruptedException {
            if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
                fail(name + " still running after " + seconds + " s:\n" + output());
            }
            reader.join(5000);
            return process.exitValue();
        }

        boolean isAlive() {
            return process.isAlive();
        }

        List<String> results() {
            return output().lines().filter(l -> l.startsWith("RESULT ")).toList();
        }

        String output() {
            synchronized (output) {
                return "--- " + name + ":\n" + output;
            }
        }

        /** Stops the JVM as the bench script does (TERM), forcibly if it does not exit. */
        void kill() {
            process.destroy();
            try {
                if (!process.waitFor(10, TimeUnit.SECONDS)) {
                    process.destroyForcibly();
                }
            } catch (InterruptedException e) {
                process.destroyForcibly();
                Thread.currentThread().interrupt();
            }
        }
    }
}
