package io.hadronio.it.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.app.HadronioCommand;
import io.hadronio.it.ChildJvm;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The {@code hadronio netty ...} commands of the application, server and client in two
 * JVMs on hadroNIO: they finish, say what they ran on, and print their RESULT line.
 * Behaviour only; the numbers are not checked.
 */
@Tag("slow")
@Timeout(90)
class NettyCommandTest {
    private static ChildJvm hadronio(String... args) throws Exception {
        return ChildJvm.start(HadronioCommand.class, List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER),
                args);
    }

    /** Starts a server command on a free loopback port; returns it and the port it printed. */
    private static int listening(ChildJvm server) throws InterruptedException {
        // "listening on /127.0.0.1:PORT (provider io.hadronio.HadronioProvider...)"
        String line = server.expect("listening on ");
        assertTrue(line.contains("(provider " + ChildJvm.PROVIDER), server::report);
        return Integer.parseInt(line.substring(line.lastIndexOf(':', line.indexOf(' ')) + 1, line.indexOf(' ')));
    }

    private static String[] args(String first, String... rest) {
        List<String> all = new ArrayList<>(List.of(first.split(" ")));
        all.addAll(List.of(rest));
        return all.toArray(String[]::new);
    }

    @Test
    void helloShouldGreetBothWays() throws Exception {
        try (ChildJvm server = hadronio(args("netty hello -s -a 127.0.0.1:0"))) {
            int port = listening(server);
            try (ChildJvm client = hadronio(args("netty hello -r", "127.0.0.1:" + port))) {
                assertTrue(client.expect("received: ").startsWith("Hello from the server (hadronio, "), client::report);
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertTrue(server.expect("received: ").startsWith("Hello from the client (hadronio, "), server::report);
            assertEquals(0, server.awaitExit(), server::report);
        }
    }

    @Test
    void echoShouldEchoTheLinesOfStdin() throws Exception {
        try (ChildJvm server = hadronio(args("netty echo -s -a 127.0.0.1:0"))) {
            int port = listening(server);
            try (ChildJvm client = hadronio(args("netty echo -r", "127.0.0.1:" + port))) {
                client.expect("connected to ");
                client.send("first line");
                assertEquals("first line", client.expect("echo: "), client::report);
                client.send("second, longer line");
                assertEquals("second, longer line", client.expect("echo: "), client::report);
                client.process().getOutputStream().close();
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertEquals("first line", server.expect("echoing: "), server::report);
        }
    }

    @ParameterizedTest(name = "{0} {1}")
    @CsvSource({
        "latency, -m 2000 -t 200 -l 8 -c 2",
        "throughput, -m 2000 -t 200 -l 65536",
        // a warm-up long enough for the connections to move to UCX (the default mode starts them on
        // kernel TCP; the move takes a few ms, longer on a busy host) before the measured messages
        "throughput, -m 20000 -t 200000 -l 8 -c 2",
        "connection, -m 40 -t 10 -c 2",
    })
    void benchmarkShouldFinishAndReport(String kind, String options) throws Exception {
        try (ChildJvm server = hadronio(args("netty benchmark " + kind + " -s -a 127.0.0.1:0"))) {
            int port = listening(server);
            try (ChildJvm client = hadronio(args("netty benchmark " + kind + " -r 127.0.0.1:" + port + " " + options))) {
                String result = client.expect("RESULT ");
                assertTrue(result.startsWith("kind=netty-" + kind + " provider=hadronio "), client::report);
                // the UCX transports the connection used, e.g. cma,sysv: not the kernel's TCP (in upgrade
                // mode a connection shorter than hadronio.upgrade.delay stays on kernel TCP by design)
                String transports = result.substring(result.indexOf("transports=") + "transports=".length());
                boolean shortConnections = kind.equals("connection") && ChildJvm.UPGRADE_MODE;
                assertTrue(!transports.isEmpty() && (shortConnections
                                || !transports.equals("kernel-tcp") && !transports.equals("kernel-unix"))
                        && !transports.equals("unknown"), client::report);
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertEquals(0, server.awaitExit(), server::report);
        }
    }
}
