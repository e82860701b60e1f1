package io.hadronio.it.selector;

import static io.hadronio.it.selector.SelectorPeers.assertNoConnectionErrors;
import static io.hadronio.it.selector.SelectorPeers.client;
import static io.hadronio.it.selector.SelectorPeers.hadronio;
import static io.hadronio.it.selector.SelectorPeers.server;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hadronio.it.ChildJvm;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A non-blocking echo server with one selector in one JVM, and a client JVM with 128
 * connections on one selector, exchanging messages of 1 B to 1 MiB, every byte and a
 * CRC32 per connection checked.
 */
@Timeout(120)
class SelectorEchoAcrossJvmsTest {
    private static final int CONNECTIONS = 128;
    private static final int MESSAGES = 3;
    private static final int[] SIZES = {1, 2, 100, 1023, 4096, 65_535, 65_536, 65_537, 300_001, 1 << 20};

    @Test
    void shouldEchoEveryByteOfMessagesFromOneByteToOneMebibyteOverManyConnectionsOnOneSelector() throws Exception {
        long expected = IntStream.range(0, CONNECTIONS)
                .mapToLong(i -> IntStream.range(0, MESSAGES).mapToLong(k -> SIZES[(i + k) % SIZES.length]).sum())
                .sum();
        Object[] args = new Object[4 + SIZES.length];
        try (ChildJvm server = server(hadronio())) {
            args[0] = "echo";
            args[1] = server.port();
            args[2] = CONNECTIONS;
            args[3] = MESSAGES;
            for (int i = 0; i < SIZES.length; i++) {
                args[4 + i] = SIZES[i];
            }
            try (ChildJvm client = client(hadronio(), args)) {
                assertEquals(CONNECTIONS, Integer.parseInt(client.expect("CONNECTED ").split(" ")[0]), client::report);
                String[] exchanged = client.expect("EXCHANGED ").split(" ");
                assertEquals(CONNECTIONS, Integer.parseInt(exchanged[0]), client::report);
                assertEquals(expected, Long.parseLong(exchanged[1]), client::report);
                assertEquals(0, Integer.parseInt(exchanged[2]), client::report);
                client.expect("DONE");
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertNoConnectionErrors(server);
        }
    }
}
