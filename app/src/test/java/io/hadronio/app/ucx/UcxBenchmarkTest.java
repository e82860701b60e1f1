package io.hadronio.app.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hadronio.app.HadronioCommand;
import io.hadronio.app.ucx.BenchmarkReport.LatencyRun;
import io.hadronio.app.ucx.BenchmarkReport.ThroughputRun;
import io.hadronio.app.ucx.BenchmarkSettings.Kind;
import io.hadronio.ucx.Ucx;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The binding benchmarks between two threads of one JVM (each with its own UCX
 * context, connected through the TCP bootstrap): they complete, report every run and
 * name a transport. Behaviour only; the numbers are not checked.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class UcxBenchmarkTest {
    private static final InetSocketAddress ANY_LOOPBACK_PORT = new InetSocketAddress(InetAddress.getLoopbackAddress(), 0);

    private ExecutorService serverThread;
    private final ByteArrayOutputStream serverOutput = new ByteArrayOutputStream();
    private final ByteArrayOutputStream clientOutput = new ByteArrayOutputStream();

    @BeforeEach
    void setUp() {
        assumeTrue(Ucx.isAvailable(), () -> "UCX not available: " + Ucx.unavailableReason());
        serverThread = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void tearDown() {
        if (serverThread != null) {
            serverThread.shutdownNow();
        }
    }

    private PrintStream log(ByteArrayOutputStream sink) {
        return new PrintStream(sink, true, StandardCharsets.UTF_8);
    }

    @ParameterizedTest(name = "{0} {1} B")
    @CsvSource({"LATENCY, 8", "LATENCY, 65536", "THROUGHPUT, 8", "THROUGHPUT, 1048576", "THROUGHPUT, 0"})
    void shouldCompleteEveryRunAndReportTheTransport(Kind kind, int length) throws Exception {
        BenchmarkSettings settings = new BenchmarkSettings(kind, length, 200, 50, kind == Kind.THROUGHPUT ? 8 : 1, 2);
        try (UcxBenchmark.Server server = UcxBenchmark.Server.open(kind, ANY_LOOPBACK_PORT)) {
            Future<BenchmarkReport> served = serverThread.submit(() -> server.serve(log(serverOutput)));
            BenchmarkReport report = UcxBenchmark.runClient(settings, server.localAddress(), Duration.ofSeconds(10),
                    log(clientOutput));
            BenchmarkReport serverReport = served.get(60, TimeUnit.SECONDS);

            assertEquals(settings, serverReport.settings(), "the server runs the client's settings");
            assertEquals(2, report.runs().size(), clientOutput.toString(StandardCharsets.UTF_8));
            assertFalse(report.transports().isEmpty(), "no transport reported");
            assertFalse(report.lanes().isEmpty(), "no lanes reported");
            assertEquals(report.transports(), serverReport.transports());
            for (BenchmarkReport.Run run : report.runs()) {
                if (kind == Kind.LATENCY) {
                    LatencyRun r = (LatencyRun) run;
                    assertTrue(r.minUs() > 0 && r.minUs() <= r.medianUs() && r.medianUs() <= r.p99Us(), r.describe());
                } else {
                    ThroughputRun r = (ThroughputRun) run;
                    assertTrue(r.seconds() > 0 && r.mmsgPerS() > 0, r.describe());
                }
            }
            String line = report.resultLine();
            assertTrue(line.startsWith("RESULT kind=" + kind.label() + " length=" + length + " "), line);
            assertTrue(line.contains(" transports=" + String.join(",", report.transports().stream().sorted().toList())),
                    line);
            assertTrue(line.contains(kind == Kind.LATENCY ? " median_us=" : " gb_per_s="), line);
            assertTrue(serverOutput.toString(StandardCharsets.UTF_8).contains("transport: "));
        }
    }

    @Test
    void shouldStreamFreshlyWrittenBuffersWhenAsked() throws Exception {
        BenchmarkSettings settings = new BenchmarkSettings(Kind.THROUGHPUT, 65536, 200, 50, 8, 2);
        try (UcxBenchmark.Server server = UcxBenchmark.Server.open(Kind.THROUGHPUT, ANY_LOOPBACK_PORT)) {
            Future<BenchmarkReport> served = serverThread.submit(() -> server.serve(log(serverOutput)));
            BenchmarkReport report = UcxBenchmark.runClient(settings, server.localAddress(), Duration.ofSeconds(10),
                    log(clientOutput), true);
            served.get(60, TimeUnit.SECONDS);
            assertEquals(2, report.runs().size(), clientOutput.toString(StandardCharsets.UTF_8));
            assertTrue(clientOutput.toString(StandardCharsets.UTF_8).contains("fresh data"));
            for (BenchmarkReport.Run run : report.runs()) {
                ThroughputRun r = (ThroughputRun) run;
                assertTrue(r.seconds() > 0 && r.mmsgPerS() > 0, r.describe());
            }
        }
    }

    @Test
    void shouldRefuseAClientAskingForTheOtherBenchmark() throws Exception {
        try (UcxBenchmark.Server server = UcxBenchmark.Server.open(Kind.THROUGHPUT, ANY_LOOPBACK_PORT)) {
            Future<BenchmarkReport> served = serverThread.submit(() -> server.serve(log(serverOutput)));
            BenchmarkSettings latency = new BenchmarkSettings(Kind.LATENCY, 8, 10, 0, 1, 1);
            IOException refused = assertThrows(IOException.class, () ->
                    UcxBenchmark.runClient(latency, server.localAddress(), Duration.ofSeconds(10), log(clientOutput)));
            assertTrue(refused.getMessage().contains("server refused"), refused.getMessage());
            Exception serverFailure = assertThrows(Exception.class, () -> served.get(30, TimeUnit.SECONDS));
            assertTrue(serverFailure.getCause() instanceof IOException, String.valueOf(serverFailure.getCause()));
        }
    }

    @Test
    void shouldRunFromTheCommandLine() throws Exception {
        try (UcxBenchmark.Server server = UcxBenchmark.Server.open(Kind.LATENCY, ANY_LOOPBACK_PORT)) {
            Future<BenchmarkReport> served = serverThread.submit(() -> server.serve(log(serverOutput)));
            InetSocketAddress at = server.localAddress();
            int exit = HadronioCommand.commandLine().execute("ucx", "benchmark", "latency",
                    "-r", at.getHostString() + ":" + at.getPort(), "-l", "64", "-m", "100", "--warmup", "10", "-n", "1");
            assertEquals(0, exit);
            assertEquals(64, served.get(60, TimeUnit.SECONDS).settings().length());
        }
    }

    @Test
    void shouldRejectAMissingRole() {
        assertEquals(2, HadronioCommand.commandLine().execute("ucx", "benchmark", "latency"));
        assertEquals(2, HadronioCommand.commandLine().execute("ucx", "benchmark", "throughput", "-s", "-r", "h:1"));
        assertEquals(2, HadronioCommand.commandLine().execute("ucx", "benchmark", "throughput", "-s", "-w", "0"));
    }
}
