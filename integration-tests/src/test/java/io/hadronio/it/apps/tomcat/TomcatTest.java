package io.hadronio.it.apps.tomcat;

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
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Embedded Tomcat's NIO connector as the server and the JDK's {@link java.net.http.HttpClient}
 * as the client, in two JVMs in every {@link Pairing}: bodies 0 B..10 MiB and many small
 * requests in flight, each answer checked byte for byte by the client, the server's request
 * count checked here.
 */
@Tag("slow")
@Timeout(120)
class TomcatTest {
    private static final int IN_FLIGHT = 16;
    private static final int SMALL_REQUESTS = 2000;

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldEchoEveryBodyByteForByte(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start("Tomcat (NIO connector) + JDK HttpClient (HTTP/1.1)", pairing);
             ChildJvm server = AppJvm.start(pairing.server(), TomcatEchoServer.class, List.of())) {
            echoEveryBody(pairing, record, server);
            record.pass();
        }
    }

    /**
     * The JDK's HttpClient against the Tomcat {@code server} started for {@code pairing}: every body
     * checked, the figures and the transport recorded, the connections kept alive, the path as the
     * pairing says (TomcatNio2Test runs the same client against the NIO.2 connector).
     */
    static void echoEveryBody(Pairing pairing, CompatRecord record, ChildJvm server) throws Exception {
        record.version("Tomcat " + server.expect("VERSION ") + ", JDK " + Runtime.version().feature());
        int port = server.port();
        record.exercised("POST echo servlet, bodies 0 B..10 MiB + " + SMALL_REQUESTS + " × 0..4 KiB, "
                + IN_FLIGHT + " in flight, keep-alive");
        try (ChildJvm client = AppJvm.start(pairing.client(), JdkHttpEchoClient.class, List.of(),
                String.valueOf(port), String.valueOf(IN_FLIGHT), String.valueOf(SMALL_REQUESTS))) {
            assertEquals(String.valueOf(EchoBodies.SIZES.length), client.expect("CHECKED ", Duration.ofSeconds(90)),
                    () -> client.report() + "\n" + server.report());
            assertEquals(String.valueOf(SMALL_REQUESTS), client.expect("CHECKED ", Duration.ofSeconds(90)),
                    () -> client.report() + "\n" + server.report());
            String[] result;
            try {
                result = client.expect("RESULT ").split(" ");
            } catch (AssertionError failed) {
                // the client's ERROR lines alone do not say which side ended the connection
                throw new AssertionError(pairing + ": " + failed.getMessage() + "\n" + server.report(), failed);
            }
            client.expect("DONE");
            record.figure("requests/s", result[0]).figure("p50 µs", result[1]).figure("p99 µs", result[2]);
            // the client keeps its connections while the server looks at them
            server.send("STATS");
            String[] stats = server.expect("STATS ").split(" ", 4);
            assertEquals(EchoBodies.SIZES.length + SMALL_REQUESTS, Long.parseLong(stats[0]), server::report);
            long connections = Long.parseLong(stats[1]);
            assertTrue(connections >= 1 && connections < SMALL_REQUESTS / 2, () -> "connections " + connections
                    + ": not kept alive\n" + server.report());
            assertTrue(Long.parseLong(stats[2]) >= Arrays.stream(EchoBodies.SIZES).asLongStream().sum(), server::report);
            record.transport(stats[3]);
            if (pairing.accelerated()) {
                assertTrue(stats[3].startsWith("ucx"), () -> stats[3] + "\n" + server.report());
            } else {
                assertEquals("tcp", stats[3], server::report);
            }
            client.process().getOutputStream().close();
            assertEquals(0, client.awaitExit(), client::report);
        }
    }
}
