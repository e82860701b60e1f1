package io.hadronio.it.selector;

import static io.hadronio.it.selector.SelectorPeers.assertNoConnectionErrors;
import static io.hadronio.it.selector.SelectorPeers.client;
import static io.hadronio.it.selector.SelectorPeers.hadronio;
import static io.hadronio.it.selector.SelectorPeers.server;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hadronio.it.ChildJvm;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * 1,000 concurrent connections between two JVMs, each side on one selector: the client
 * connects all of them non-blocking, then each exchanges a small message, all while
 * every connection stays open. Reports what a connection costs each side (resident
 * memory and fds, from /proc, with all 1,000 open against none) and writes it to
 * {@code target/connection-scale.txt}; the numbers are reported, the behaviour asserted.
 *
 * <p>{@code -Dit.connections=N} changes the count, {@code -Dit.peerOptions="-Dhadronio.slice.count=4 ..."}
 * passes options to both peer JVMs, and {@code -Dit.jdk=true} runs both peers on the JDK's
 * provider instead, for comparison.
 */
@Timeout(180)
class ConnectionScaleTest {
    private static final int CONNECTIONS = Integer.getInteger("it.connections", 1000);
    private static final int MESSAGE = 100;

    @Test
    void shouldCarryAThousandConcurrentConnectionsOnOneSelectorEachSide() throws Exception {
        String[] extra = System.getProperty("it.peerOptions", "").isBlank() ? new String[0]
                : System.getProperty("it.peerOptions").trim().split("\\s+");
        List<String> options = Boolean.getBoolean("it.jdk") ? List.of(extra) : hadronio(extra);
        try (ChildJvm server = server(options)) {
            int port = server.port();
            server.send("STATS");
            ProcStats serverIdle = ProcStats.parse(server.expect("STATS "));
            try (ChildJvm client = client(options, "hold", port, CONNECTIONS, 1, MESSAGE)) {
                String[] config = client.expect("CONFIG ").split(" ");
                ProcStats clientIdle = ProcStats.parse(client.expect("BASELINE "));
                String connected = client.expect("CONNECTED ");
                assertEquals(CONNECTIONS, Integer.parseInt(connected.split(" ")[0]), client::report);
                ProcStats clientConnected = ProcStats.parse(connected);
                String[] exchanged = client.expect("EXCHANGED ").split(" ");
                assertEquals(CONNECTIONS, Integer.parseInt(exchanged[0]), client::report);
                assertEquals((long) CONNECTIONS * MESSAGE, Long.parseLong(exchanged[1]), client::report);
                assertEquals(0, Integer.parseInt(exchanged[2]), client::report);
                ProcStats clientExchanged = ProcStats.parse(client.expect("HOLDING "));

                // every echo came back, so the server accepted every connection; all are open now
                server.send("STATS");
                String stats = server.expect("STATS ");
                assertEquals(CONNECTIONS, Integer.parseInt(stats.split(" ")[0]), server::report);
                ProcStats serverConnected = ProcStats.parse(stats);

                long sliceSize = Long.parseLong(config[0]);
                long sliceCount = Long.parseLong(config[1]);
                List<String> report = new ArrayList<>();
                report.add("connections: " + CONNECTIONS + ", peer options: " + options);
                report.add("configured slice memory per connection: 2 x " + sliceSize + " x " + sliceCount + " = "
                        + 2 * sliceSize * sliceCount / 1024 + " KiB (address space; pages count once written)");
                report.add(line("server, all open, after the exchange", serverIdle, serverConnected));
                report.add(line("client, all open, before the exchange", clientIdle, clientConnected));
                report.add(line("client, all open, after the exchange", clientIdle, clientExchanged));
                report.forEach(System.out::println);
                Path out = Path.of("target", "connection-scale.txt");
                Files.createDirectories(out.getParent());
                Files.write(out, report);

                client.send("GO");
                client.expect("DONE");
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertNoConnectionErrors(server);
        }
    }

    private static String line(String side, ProcStats idle, ProcStats connected) {
        return String.format("%s: RSS %d -> %d KiB (%.1f KiB per connection), fds %d -> %d (%.2f per connection)",
                side, idle.rssKiB(), connected.rssKiB(), (double) (connected.rssKiB() - idle.rssKiB()) / CONNECTIONS,
                idle.fds(), connected.fds(), (double) (connected.fds() - idle.fds()) / CONNECTIONS);
    }
}
