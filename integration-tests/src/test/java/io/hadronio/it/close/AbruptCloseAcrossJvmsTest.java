package io.hadronio.it.close;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A server in one JVM closes each accepted connection while its client, in another JVM,
 * still writes: the client's writes fail, as against the kernel's reset, and afterwards both
 * JVMs have freed every connection's memory and still use one UCX endpoint to each other.
 * Regressions: the closing side let go of its receives at once, so the client's last message
 * (a rendezvous) never completed and the client kept each connection's memory for ever
 * (docs/RELIABILITY.md); and after an abortive close the server took the client's end of the
 * control connection for its death and closed the endpoint the next connections shared; an
 * upgraded connection whose server closed before its own output moved left the client's writes
 * over UCX held back for ever (one connection in about a thousand); and an endpoint UCX reported
 * failed (the peer's forced close of its end) stayed open in the worker, one more per such close.
 */
@Tag("slow")
@Timeout(180)
class AbruptCloseAcrossJvmsTest {
    private static final int CONNECTIONS = 30;

    @ParameterizedTest(name = "{0}-byte writes, abortive {1}, upgrade {2}")
    @CsvSource({
        "1024, false, false",
        "262144, false, false",
        "1024, true, false",
        "1024, false, true",
        "262144, false, true",
        "1024, true, true",
    })
    void shouldFreeEverythingWhenClosingWhileThePeerWrites(int size, boolean abortive, boolean upgrade)
            throws Exception {
        List<String> options = new ArrayList<>();
        options.add("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER);
        options.add("-Dhadronio.upgrade=" + upgrade);
        try (ChildJvm server = ChildJvm.start(AbruptClosePeer.class, options, "server", "" + CONNECTIONS, "" + abortive);
             ChildJvm client = ChildJvm.start(AbruptClosePeer.class, options, "client", "" + server.port(),
                     "" + CONNECTIONS, "" + size)) {
            assertEquals("" + CONNECTIONS, client.expect("FAILED ", java.time.Duration.ofSeconds(120)), client::report);
            for (ChildJvm side : List.of(client, server)) {
                String resources = side.expect("RESOURCES ");
                // one endpoint to the other JVM (none if no connection ever moved to UCX)
                assertTrue(resources.matches("memory=0 retained=0 endpoints=[01] requests=0"),
                        () -> resources + "\n" + side.report());
            }
            assertEquals(0, client.awaitExit(), client::report);
            assertEquals(0, server.awaitExit(), server::report);
        }
    }
}
