package io.hadronio.it.apps.jetty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.AppJvm;
import io.hadronio.it.apps.CompatRecord;
import io.hadronio.it.apps.EchoBodies;
import io.hadronio.it.apps.Pairing;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Jetty 12, server and HTTP client in two JVMs, in every {@link Pairing}: request bodies
 * from 0 B to 10 MiB and many small requests in flight over a few keep-alive connections,
 * each answer checked byte for byte (by the client), and the server's count of requests and
 * connections checked here.
 */
@Tag("slow")
@Timeout(120)
class JettyTest {
    private static final int CONNECTIONS = 4;
    private static final int IN_FLIGHT = 32;
    private static final int SMALL_REQUESTS = 3000;

    static java.util.stream.Stream<Pairing> pairings() {
        return Pairing.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldEchoEveryBodyByteForByteOverKeepAliveConnections(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start("Jetty 12 (server + HttpClient, HTTP/1.1)", pairing);
             ChildJvm server = AppJvm.start(pairing.server(), JettyEchoServer.class, List.of())) {
            record.version(server.expect("VERSION "));
            int port = server.port();
            record.exercised("POST echo, bodies 0 B..10 MiB + " + SMALL_REQUESTS + " × 0..4 KiB, "
                    + IN_FLIGHT + " in flight on ≤ " + CONNECTIONS + " keep-alive connections");
            try (ChildJvm client = AppJvm.start(pairing.client(), JettyEchoClient.class, List.of(),
                    String.valueOf(port), String.valueOf(CONNECTIONS), String.valueOf(IN_FLIGHT),
                    String.valueOf(SMALL_REQUESTS))) {
                assertEquals(String.valueOf(EchoBodies.SIZES.length), client.expect("CHECKED ", Duration.ofSeconds(90)),
                        () -> client.report() + "\n" + server.report());
                assertEquals(String.valueOf(SMALL_REQUESTS), client.expect("CHECKED ", Duration.ofSeconds(90)),
                        () -> client.report() + "\n" + server.report());
                String[] result = client.expect("RESULT ").split(" ");
                client.expect("DONE");
                record.figure("requests/s", result[0]).figure("p50 µs", result[1]).figure("p99 µs", result[2]);
                // the client keeps its connections while the server looks at them
                server.send("STATS");
                String[] stats = server.expect("STATS ").split(" ", 4);
                long requests = Long.parseLong(stats[0]);
                long connections = Long.parseLong(stats[1]);
                long bytes = Long.parseLong(stats[2]);
                record.transport(stats[3]);
                assertEquals(EchoBodies.SIZES.length + SMALL_REQUESTS, requests, server::report);
                assertTrue(connections >= 1 && connections <= CONNECTIONS, () -> "connections: " + connections + "\n"
                        + server.report());
                assertTrue(bytes >= Arrays.stream(EchoBodies.SIZES).asLongStream().sum(), server::report);
                assertTransport(pairing, stats[3], server);
                client.process().getOutputStream().close();
                assertEquals(0, client.awaitExit(), client::report);
            }
            record.pass();
        }
    }

    /** Both sides on hadroNIO: UCX; hadroNIO on one side only: plain TCP. */
    static void assertTransport(Pairing pairing, String transport, ChildJvm server) {
        if (pairing.accelerated()) {
            // in upgrade mode a connection starts on TCP and moves with its traffic, which is plenty here
            assertTrue(transport.startsWith("ucx"), () -> "transport " + transport + "\n" + server.report());
        } else {
            assertEquals("tcp", transport, server::report);
        }
    }
}
