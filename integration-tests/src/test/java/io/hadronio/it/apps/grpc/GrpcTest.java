package io.hadronio.it.apps.grpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.CompatRecord;
import io.hadronio.it.apps.HadronioCommandJvm;
import io.hadronio.it.apps.Pairing;
import io.hadronio.it.apps.Side;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code hadronio grpc echo|kvs} (gRPC-java on Netty's NIO transport), server and client in
 * two JVMs, in every {@link Pairing}: the JDK side runs the same command with
 * {@code DISABLE_HADRONIO=true}, as the README says. Echoes come back unchanged, the store
 * answers what it holds, and the YCSB client's operations all succeed.
 */
@Tag("slow")
@Timeout(120)
class GrpcTest {
    private static final String APPLICATION = "gRPC-java (grpc-netty on Netty NIO)";
    private static final String VERSION = io.grpc.internal.GrpcUtil.IMPLEMENTATION_VERSION;
    private static final boolean UPGRADE = io.hadronio.it.ChildJvm.UPGRADE_MODE;

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    /** The hadronio command on {@code side}: with the provider property, or with DISABLE_HADRONIO=true. */
    static ChildJvm hadronio(Side side, String... args) throws Exception {
        return HadronioCommandJvm.start(side, args);
    }

    static String[] words(String command, String... more) {
        List<String> all = new ArrayList<>(List.of(command.split(" ")));
        all.addAll(List.of(more));
        return all.toArray(String[]::new);
    }

    static int listening(ChildJvm server, Side side) throws InterruptedException {
        return HadronioCommandJvm.listening(server, side);
    }

    /** What carried the connection: UCX when both sides run hadroNIO, the kernel's TCP otherwise. */
    static void assertTransport(Pairing pairing, String transport, ChildJvm jvm) {
        if (pairing.accelerated()) {
            assertTrue(transport.equals("ucx") || UPGRADE && transport.equals("kernel-tcp"), jvm::report);
        } else {
            assertEquals("kernel-tcp", transport, jvm::report);
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void echoShouldAnswerEveryLineOfStdin(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": hadronio grpc echo", pairing);
             ChildJvm server = hadronio(pairing.server(), words("grpc echo -s -a 127.0.0.1:0"))) {
            record.version(VERSION).exercised("unary calls, one per line of stdin, answered unchanged");
            int port = listening(server, pairing.server());
            try (ChildJvm client = hadronio(pairing.client(), words("grpc echo -r", "127.0.0.1:" + port))) {
                client.expect("calling ");
                String transport = "";
                for (String line : List.of("first line", "second, longer line ✓", "x".repeat(10_000))) {
                    client.send(line);
                    String echo = client.expect("echo: ");
                    assertTrue(echo.startsWith(line + " (over "), client::report);
                    transport = echo.substring(line.length() + " (over ".length(), echo.length() - 1);
                    assertEquals(line, server.expect("echoing: "), server::report);
                }
                client.process().getOutputStream().close();
                assertEquals(0, client.awaitExit(), client::report);
                assertTransport(pairing, transport, client);
                record.transport(transport);
            }
            record.pass();
        }
    }

    @Test
    void kvsShouldRunTheCommandsOfStdin() throws Exception {
        try (ChildJvm server = hadronio(Side.HADRONIO, words("grpc kvs -s -a 127.0.0.1:0"))) {
            int port = listening(server, Side.HADRONIO);
            try (ChildJvm client = hadronio(Side.HADRONIO, words("grpc kvs -r", "127.0.0.1:" + port))) {
                client.expect("connected to ");
                // each command of stdin and the line that must answer it, in order
                String[][] sequence = {
                    {"insert k1 one", "inserted k1"}, {"insert k2 two", "inserted k2"}, {"get k1", "value: one"},
                    {"update k1 uno", "updated k1"}, {"get k1", "value: uno"}, {"scan k1 5", "scan: [uno, two]"},
                    {"delete k1", "deleted k1"}, {"update k1 again", "not found: k1"}, {"get k9", "not found: k9"},
                };
                for (String[] step : sequence) {
                    client.send(step[0]);
                    assertEquals(step[1], client.poll(ChildJvm.LINE_TIMEOUT), () -> step[0] + "\n" + client.report());
                }
                client.process().getOutputStream().close();
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertEquals("k1", server.expect("insert: "), server::report);
        }
    }

    /** Runs the YCSB client against a fresh store; returns the run phase's RESULT fields. */
    static Map<String, String> ycsb(Pairing pairing, String workload, int records, int operations) throws Exception {
        try (ChildJvm server = hadronio(pairing.server(), words("grpc kvs -s -q -a 127.0.0.1:0"))) {
            int port = listening(server, pairing.server());
            Path json = Path.of("target", "compat", "ycsb-" + workload + "-" + pairing.server().label() + "-"
                    + pairing.client().label() + ".json").toAbsolutePath();
            Files.createDirectories(json.getParent());
            try (ChildJvm client = hadronio(pairing.client(), words("grpc kvs benchmark -r", "127.0.0.1:" + port,
                    "-w", workload, "-n", String.valueOf(records), "-o", String.valueOf(operations), "-T", "4",
                    "--status", "1", "--export", json.toString()))) {
                Map<String, String> load = fields(client.expect("RESULT ", Duration.ofSeconds(90)));
                assertEquals("load", load.get("phase"), client::report);
                assertEquals(String.valueOf(records), load.get("operations"), client::report);
                assertEquals("0", load.get("failures"), client::report);
                Map<String, String> run = fields(client.expect("RESULT ", Duration.ofSeconds(90)));
                assertEquals("run", run.get("phase"), client::report);
                assertEquals(String.valueOf(operations), run.get("operations"), client::report);
                assertEquals("0", run.get("failures"), client::report);
                assertEquals(0, client.awaitExit(), client::report);
                assertTrue(client.output().contains(" current ops/sec;"), () -> "no status line\n" + client.report());
                String exported = Files.readString(json);
                assertTrue(exported.contains("\"phase\": \"run\"") && exported.contains("\"p99_us\""), exported);
                assertTransport(pairing, run.get("transport"), client);
                return run;
            }
        }
    }

    static Map<String, String> fields(String result) {
        return HadronioCommandJvm.fields(result);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void ycsbWorkloadAShouldSucceedEveryOperation(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": hadronio grpc kvs benchmark -w A", pairing)) {
            record.version(VERSION).exercised("YCSB A (read/update 50/50, zipfian): load 500 records, run 2000 ops, 4 threads, 1 channel");
            Map<String, String> run = ycsb(pairing, "A", 500, 2000);
            record.transport(run.get("transport")).figure("ops/s", run.get("ops_per_s"))
                    .figure("read p50/p99 µs", run.get("read_p50_us") + "/" + run.get("read_p99_us"))
                    .figure("update p50/p99 µs", run.get("update_p50_us") + "/" + run.get("update_p99_us"));
            record.pass();
        }
    }

    static Stream<String> otherWorkloads() {
        return Stream.of("B", "C", "D", "E", "F");
    }

    @ParameterizedTest(name = "workload {0}")
    @MethodSource("otherWorkloads")
    void ycsbWorkloadsBToFShouldSucceedEveryOperationOnHadronio(String workload) throws Exception {
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": hadronio grpc kvs benchmark -w " + workload,
                Pairing.HADRONIO)) {
            record.version(VERSION).exercised("YCSB " + workload + ": load 200 records, run 600 ops, 4 threads");
            Map<String, String> run = ycsb(Pairing.HADRONIO, workload, 200, 600);
            record.transport(run.get("transport")).figure("ops/s", run.get("ops_per_s"));
            record.pass();
        }
    }
}
