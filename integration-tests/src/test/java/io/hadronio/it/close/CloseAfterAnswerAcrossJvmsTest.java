package io.hadronio.it.close;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.hadronio.it.ChildJvm;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * An HTTP server's keep-alive limit across two JVMs (TomcatTest found it: Tomcat closes a
 * connection after its 100th answer): a selector-and-workers server answers a few requests on
 * each connection and closes it right after the last answer, while the connection moves to UCX
 * in the background. Every answer must arrive whole, then end-of-stream; no request may go
 * unanswered and no connection be reset, whichever directions had switched. Clients: blocking
 * threads, one selector with 16 connections at once (as the JDK's HttpClient), and blocking
 * threads that bind each connection to one of a few ports of their own, so that a port whose
 * connection the server just closed carries the next one at once (as a client that has gone
 * round the ephemeral range does: TomcatTest's 13,000 connections a run with 3 requests each).
 */
@Tag("slow")
@Timeout(240)
class CloseAfterAnswerAcrossJvmsTest {
    private static final int THREADS = 8;
    private static final int CONNECTIONS = 150;
    // connections one selector drives at once (the JDK's HttpClient in TomcatTest has 16 requests in flight)
    private static final int SELECTOR_CONCURRENCY = 16;
    // the first of the client ports the reusing client binds (8 threads x 4, below Linux's ephemeral range)
    private static final int PORT_BASE = 23_400;

    @ParameterizedTest(name = "upgrade delay {0} µs, {1}")
    @CsvSource({"0, client", "1000, client", "0, selector-client", "1000, selector-client", "0, client-reusing-ports"})
    void shouldAnswerEveryRequestThenEndTheStream(long delayMicros, String clientKind) throws Exception {
        List<String> options = List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER,
                "-Dhadronio.upgrade.delay=" + delayMicros);
        try (ChildJvm server = ChildJvm.start(CloseAfterAnswerPeer.class, options, "server");
             ChildJvm client = clientKind.startsWith("client")
                     ? ChildJvm.start(CloseAfterAnswerPeer.class, options, "client", "" + server.port(), "" + THREADS,
                             "" + CONNECTIONS, clientKind.equals("client-reusing-ports") ? "" + PORT_BASE : "0")
                     : ChildJvm.start(CloseAfterAnswerPeer.class, options, "selector-client", "" + server.port(),
                             "" + SELECTOR_CONCURRENCY, "" + THREADS * CONNECTIONS)) {
            String done = client.expect("DONE ", Duration.ofSeconds(180));
            assertEquals(0, client.awaitExit(), client::report);
            server.process().getOutputStream().close();
            server.expect("SERVED ");
            assertEquals(0, server.awaitExit(), server::report);
            assertFalse(client.printedErrors(), client::report);
            assertFalse(server.printedErrors(), server::report);
            System.out.println("delay " + delayMicros + " µs, " + clientKind + ": connections, on UCX at their end: " + done);
        }
    }
}
