package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hadronio.ucx.Ucx;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code hadronio grpc benchmark}, {@code jetty benchmark}, {@code tomcat benchmark} (its NIO.2
 * connector on both providers, its NIO connector on hadroNIO), {@code jgroups benchmark} (both
 * providers) and {@code kafka benchmark} briefly, in real JVMs (a JVM's provider is fixed at its
 * first use of NIO), on the JDK's provider ({@code DISABLE_HADRONIO=true}) and on hadroNIO:
 * every run completes, answers calls, counts no failure and names the provider asked for and a
 * transport. Behaviour only; no figure is checked. The JVMs stop at C1, as the evaluation's smoke profile does.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class AppBenchmarksSmokeTest {
    private static final Pattern LISTENING = Pattern.compile("listening on [^ ]*:(\\d+)");
    private static final List<String> SHORT = List.of("--warmup", "0.2", "-d", "0.5");

    private final List<ChildJvm> jvms = new ArrayList<>();

    @AfterEach
    void stopJvms() {
        jvms.forEach(ChildJvm::kill);
    }

    // (on hadroNIO: DISABLE_HADRONIO is the same code in every command, checked by tomcat's and
    // jgroups' JDK runs here, and scripts/bench-apps.sh refuses a run whose provider is not the one asked for)
    @Test
    void grpcBenchmarkShouldAnswerCallsInFlightAndOneAtATime() throws Exception {
        clientAndServer("hadronio", "grpc", "4");
    }

    @Test
    void jettyBenchmarkShouldAnswerRequestsInFlightAndOneAtATime() throws Exception {
        clientAndServer("hadronio", "jetty", "4");
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({"jdk, nio2", "hadronio, nio2", "hadronio, nio"})
    void tomcatBenchmarkShouldAnswerRequestsInFlightAndOneAtATime(String provider, String protocol) throws Exception {
        ChildJvm server = clientAndServer(provider, "tomcat", "4", "--protocol", protocol);
        if (protocol.equals("nio2")) {
            // the connector's channels are the asynchronous provider's: hadroNIO's beside its SelectorProvider
            boolean hadronio = server.output()
                    .contains("AsynchronousChannelProvider io.hadronio.HadronioAsynchronousChannelProvider");
            assertEquals(provider.equals("hadronio"), hadronio, server::output);
        }
    }

    @Test
    void kafkaBenchmarkShouldProduceInFlightAndOneAtATimeAndFetchEveryRecord() throws Exception {
        ChildJvm server = clientAndServer("hadronio", "kafka", "4", List.of("--fetch-mib", "1", "--fetch-passes", "2"));
        ChildJvm client = jvms.get(1);
        String fetch = only(client.results(), "mode=fetch", client);
        assertEquals("hadronio", field(fetch, "provider"), client::output);
        assertEquals("0", field(fetch, "failures"), client::output);
        assertEquals(String.valueOf(1 << 20), field(fetch, "bytes"), fetch);
        assertTrue(Double.parseDouble(field(fetch, "mb_s")) > 0, fetch);
        assertTrue(server.isAlive(), server::output);
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
            ChildJvm member = jvms.get(m);
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

    /**
     * A server ({@code serverOptions} added) and a client of {@code app benchmark}: both loops
     * answered, nothing failed. Returns the server, still running.
     */
    private ChildJvm clientAndServer(String provider, String app, String inFlight, String... serverOptions)
            throws Exception {
        return clientAndServer(provider, app, inFlight, List.of(), serverOptions);
    }

    /** {@link #clientAndServer(String, String, String, String...)} with {@code clientOptions} added to the client's. */
    private ChildJvm clientAndServer(String provider, String app, String inFlight, List<String> clientOptions,
                                     String... serverOptions) throws Exception {
        assumeProvider(provider);
        List<String> serverArgs = new ArrayList<>(List.of(app, "benchmark", "-s", "-a", "127.0.0.1:0"));
        serverArgs.addAll(List.of(serverOptions));
        ChildJvm server = start(provider, serverArgs.toArray(String[]::new));
        String port = server.await(LISTENING, 60);
        List<String> args = new ArrayList<>(List.of(app, "benchmark", "-r", "127.0.0.1:" + port, "-i", inFlight));
        args.addAll(SHORT);
        args.addAll(clientOptions);
        ChildJvm client = start(provider, args.toArray(String[]::new));
        assertEquals(0, client.waitFor(60), () -> client.output() + "\n--- server:\n" + server.output());
        List<String> lines = client.results();
        for (String mode : List.of("concurrent", "sequential")) {
            String line = only(lines, "mode=" + mode, client);
            assertResult(line, provider, client);
            assertTrue(Long.parseLong(field(line, "calls")) > 0, line);
            assertEquals(mode.equals("concurrent") ? inFlight : "1", field(line, "in_flight"), line);
        }
        assertTrue(server.isAlive(), server::output);
        return server;
    }

    private static void assumeProvider(String provider) {
        if (provider.equals("hadronio")) {
            assumeTrue(Ucx.isAvailable(), () -> "UCX not available: " + Ucx.unavailableReason());
        }
    }

    private static void assertResult(String line, String provider, ChildJvm jvm) {
        assertEquals(provider, field(line, "provider"), jvm::output);
        assertEquals("0", field(line, "failures"), jvm::output);
        assertTrue(Double.parseDouble(field(line, "per_s")) > 0, line);
        assertFalse(field(line, "transport").isEmpty(), line);
    }

    private static String only(List<String> lines, String mode, ChildJvm jvm) {
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
    private ChildJvm start(String provider, String... args) throws IOException {
        ChildJvm jvm = ChildJvm.start(provider, args);
        jvms.add(jvm);
        return jvm;
    }
}
