package io.hadronio.it.apps.patterns;

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
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code hadronio patterns} - the I/O shapes of NIO frameworks and brokers as plain NIO programs
 * (docs/benchmarks/patterns.md) - with server and client in two JVMs, in every {@link Pairing}:
 * a caller's thread handing its request to a selector thread and taking the answer back from
 * a queue, against a server that hands each request to an application thread; bulk writes queued
 * by an application thread and echoed; a file sent with {@code FileChannel.transferTo} and one
 * stored with {@code transferFrom}. Every answer and byte is checked by the client (failures=0),
 * the stored file has the size sent, and the connection is on UCX exactly when both sides run
 * hadroNIO. CI-sized: the figures show each pattern working, they are not benchmarks.
 */
@Tag("slow")
@Timeout(120)
class PatternsTest {
    private static final String APPLICATION = "NIO patterns (hadronio patterns)";
    private static final String VERSION = "this build";
    private static final boolean UPGRADE = ChildJvm.UPGRADE_MODE;

    @TempDir
    Path dir;

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void handoffThroughAServerThatDispatchesShouldGetEveryAnswer(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": handoff against dispatch", pairing);
             ChildJvm server = server(pairing, "dispatch")) {
            record.version(VERSION).exercised("8-byte requests written from a caller's thread (queued, Selector.wakeup()), "
                    + "answers handed back through a queue; the server's I/O thread hands each request to an "
                    + "application thread, which queues the answer and wakes its selector");
            int port = HadronioCommandJvm.listening(server, pairing.server());
            Map<String, String> r = client(pairing, port, "--pattern", "handoff", "--warmup", "0.3", "-d", "0.5");
            assertTrue(Double.parseDouble(r.get("per_s")) > 0, r::toString);
            record.transport(r.get("transport")).figure("round trips/s", r.get("per_s"))
                    .figure("p50/p99 µs", r.get("p50_us") + "/" + r.get("p99_us"));
            record.pass();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void bulkWritesQueuedByAnApplicationThreadShouldComeBackUnchanged(Pairing pairing) throws Exception {
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": bulk", pairing);
             ChildJvm server = server(pairing, "echo")) {
            record.version(VERSION).exercised("4 sessions x 8 MiB of 64-KiB writes queued by an application thread, "
                    + "flushed by the selector thread, echoed and checked");
            int port = HadronioCommandJvm.listening(server, pairing.server());
            Map<String, String> r = client(pairing, port, "--pattern", "bulk", "--sessions", "4",
                    "--bytes", String.valueOf(8 << 20), "--warmup", "0", "--passes", "2");
            record.transport(r.get("transport")).figure("MB/s echoed", r.get("mb_per_s"));
            record.pass();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void aFileSentWithTransferToAndStoredWithTransferFromShouldArriveWhole(Pairing pairing) throws Exception {
        long bytes = (32L << 20) + 12_345;
        Path file = dir.resolve("served.dat");
        try (CompatRecord record = CompatRecord.start(APPLICATION + ": fetch and upload", pairing);
             ChildJvm server = server(pairing, "file", "--file", file.toString(), "--bytes", String.valueOf(bytes))) {
            record.version(VERSION).exercised("a 32 MiB file served with FileChannel.transferTo into the accepted "
                    + "channel and checked by the client; as many bytes sent back and stored with transferFrom");
            int port = HadronioCommandJvm.listening(server, pairing.server());
            Map<String, String> fetch = client(pairing, port, "--pattern", "fetch", "--bytes", String.valueOf(bytes),
                    "--warmup-passes", "1", "--passes", "2");
            assertEquals(String.valueOf(bytes), fetch.get("bytes"), fetch::toString);
            Map<String, String> upload = client(pairing, port, "--pattern", "upload", "--bytes", String.valueOf(bytes),
                    "--warmup-passes", "1", "--passes", "2");
            assertEquals(String.valueOf(bytes), upload.get("bytes"), upload::toString);
            assertEquals(bytes, Files.size(file));
            record.transport(fetch.get("transport")).figure("transferTo MB/s", fetch.get("mb_per_s"))
                    .figure("transferFrom MB/s", upload.get("mb_per_s"));
            record.pass();
        }
    }

    /** A server of {@code pattern} (and {@code more} options) on the pairing's server side, on a free port. */
    private static ChildJvm server(Pairing pairing, String pattern, String... more) throws Exception {
        List<String> args = new ArrayList<>(List.of("patterns", "-s", "--pattern", pattern, "-a", "127.0.0.1:0"));
        args.addAll(List.of(more));
        return HadronioCommandJvm.start(pairing.server(), args.toArray(String[]::new));
    }

    /**
     * One client run: exits 0 with a RESULT line that reports nothing wrong, from the provider of
     * the client's side, on UCX exactly when both sides run hadroNIO; returns the line's fields.
     */
    private static Map<String, String> client(Pairing pairing, int port, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("patterns", "-r", "127.0.0.1:" + port));
        all.addAll(List.of(args));
        try (ChildJvm client = HadronioCommandJvm.start(pairing.client(), all.toArray(String[]::new))) {
            Map<String, String> r = HadronioCommandJvm.fields(client.expect("RESULT ", Duration.ofSeconds(90)));
            assertEquals(0, client.awaitExit(), client::report);
            assertEquals("0", r.get("failures"), client::report);
            assertEquals(pairing.client() == Side.HADRONIO ? "hadronio" : "jdk", r.get("provider"), client::report);
            String transport = r.get("transport");
            if (pairing.accelerated()) {
                // with the upgrade, a connection may still be on kernel TCP or its local stream
                assertTrue(transport.startsWith("ucx")
                        || UPGRADE && (transport.startsWith("tcp") || transport.startsWith("unix")), client::report);
            } else {
                assertTrue(transport.startsWith("tcp"), client::report);
            }
            return r;
        }
    }
}
