package io.hadronio.app.blocking;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.app.HadronioCommand;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.blocking.BlockingConnections.Report;
import io.hadronio.app.blocking.BlockingConnections.Server;
import io.hadronio.app.blocking.BlockingConnections.Settings;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * The connection benchmark with server and client in this JVM, on the JDK's provider: it
 * completes, serves concurrent clients, survives clients that close early and reports a
 * positive count. Behaviour only; no timing is checked.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class BlockingConnectionsTest {
    private static final InetSocketAddress ANY_LOOPBACK_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private ExecutorService serverThread;
    private final StringWriter serverLog = new StringWriter();

    @BeforeAll
    static void onTheJdkProvider() {
        // the first use of NIO fixes the JVM's provider; nothing in this JVM asks for hadroNIO
        assertFalse(SelectorProvider.provider() instanceof HadronioProvider,
                "this test runs on the JDK's provider, not " + SelectorProvider.provider());
    }

    @BeforeEach
    void setUp() {
        serverThread = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void tearDown() {
        serverThread.shutdownNow();
    }

    private Server openServer() throws Exception {
        return Server.open(ANY_LOOPBACK_PORT, new PrintWriter(serverLog, true));
    }

    @Test
    void shouldServeEightConcurrentClientsAndCountEveryConnection() throws Exception {
        try (Server server = openServer()) {
            Future<Server.Counts> served = serverThread.submit(server::serve);
            Report report = BlockingConnections.run(server.localAddress(), new Settings(8, 50, 0, 400, 0));
            Server.Counts counts = served.get(60, TimeUnit.SECONDS);

            assertEquals(400, report.connections(), report.describe());
            assertEquals(8, report.clients());
            assertTrue(report.connectionsPerSecond() > 0, report.describe());
            assertTrue(report.percentileUs(0.50) > 0 && report.percentileUs(0.50) <= report.percentileUs(0.99),
                    report.describe());
            assertEquals("jdk", report.provider());
            assertEquals("kernel-tcp", report.transport());
            // the first connection (waits for the server), the warm-up, the measured ones, the stop request
            assertEquals(new Server.Counts(1 + 50 + 400 + 1, 0, 0), counts, serverLog.toString());
        }
    }

    @Test
    void shouldMeasureForADuration() throws Exception {
        try (Server server = openServer()) {
            Future<Server.Counts> served = serverThread.submit(server::serve);
            Report report = BlockingConnections.run(server.localAddress(), new Settings(1, 0, 0.05, 0, 0.2));
            Server.Counts counts = served.get(60, TimeUnit.SECONDS);

            assertTrue(report.connections() > 0, report.describe());
            assertTrue(report.connectionsPerSecond() > 0, report.describe());
            assertEquals(0, counts.failed(), serverLog.toString());
            assertTrue(counts.served() >= report.connections() + 2, counts.describe());
        }
    }

    @Test
    void shouldSurviveClientsThatCloseBeforeTheirRequest() throws Exception {
        try (Server server = openServer()) {
            Future<Server.Counts> served = serverThread.submit(server::serve);
            InetSocketAddress at = server.localAddress();
            try (SocketChannel silent = SocketChannel.open(at)) {
                silent.shutdownOutput();
            }
            try (SocketChannel partial = SocketChannel.open(at)) {
                partial.write(ByteBuffer.wrap(new byte[] {1, 2, 3}));
            }
            Report report = BlockingConnections.run(at, new Settings(2, 0, 0, 20, 0));
            Server.Counts counts = served.get(60, TimeUnit.SECONDS);

            assertEquals(20, report.connections());
            assertEquals(new Server.Counts(1 + 20 + 1, 2, 0), counts, serverLog.toString());
        }
    }

    @Test
    void shouldPrintAResultLineFromTheCommandLine() throws Exception {
        String before = System.getProperty(ProviderSelection.PROPERTY);
        try (Server server = openServer()) {
            Future<Server.Counts> served = serverThread.submit(server::serve);
            InetSocketAddress at = server.localAddress();
            StringWriter out = new StringWriter();
            CommandLine command = HadronioCommand.commandLine();
            command.setOut(new PrintWriter(out, true));
            int exit = command.execute("blocking", "benchmark", "connections", "-r",
                    at.getHostString() + ":" + at.getPort(), "--clients", "8", "-m", "200", "-t", "20");

            assertEquals(0, exit, out.toString());
            String line = Arrays.stream(out.toString().split("\n")).filter(l -> l.startsWith("RESULT ")).findFirst()
                    .orElseThrow(() -> new AssertionError("no RESULT line in:\n" + out));
            assertTrue(line.startsWith("RESULT kind=blocking-connection provider=jdk length=8 connections=200 parallel=8 "),
                    line);
            assertTrue(Double.parseDouble(field(line, "conn_per_s")) > 0, line);
            assertTrue(Double.parseDouble(field(line, "p99_us")) > 0, line);
            assertEquals("kernel-tcp", field(line, "transports"));
            assertEquals(0, served.get(60, TimeUnit.SECONDS).failed(), serverLog.toString());
        } finally {
            // ProviderSelection.apply() named hadroNIO (too late to matter: the provider was already chosen)
            if (before == null) {
                System.clearProperty(ProviderSelection.PROPERTY);
            } else {
                System.setProperty(ProviderSelection.PROPERTY, before);
            }
        }
    }

    @Test
    void shouldRejectBadOptions() {
        CommandLine command = HadronioCommand.commandLine();
        command.setErr(new PrintWriter(new StringWriter()));
        assertEquals(2, command.execute("blocking", "benchmark", "connection"));
        assertEquals(2, command.execute("blocking", "benchmark", "connection", "-r", "127.0.0.1:1", "-c", "0"));
        assertEquals(2, command.execute("blocking", "benchmark", "connection", "-r", "127.0.0.1:1", "-m", "0"));
        assertEquals(2, command.execute("blocking", "benchmark", "connection", "-r", "127.0.0.1:1", "-d", "-1"));
    }

    private static String field(String line, String key) {
        return Arrays.stream(line.split(" ")).filter(f -> f.startsWith(key + "=")).map(f -> f.substring(key.length() + 1))
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + " in " + line));
    }
}
