package io.hadronio.it.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * hadroNIO's JFR events in a recording made as an operator makes one: a child JVM doing blocking
 * and Netty I/O ({@link ObservedWorkload}) with {@code -XX:StartFlightRecording} and the JDK's
 * default settings, read back with {@link RecordingFile} ({@code jfr print} fails on FFM frames).
 * A second recording in the same JVM sets our socket events' threshold to 0, as a settings
 * override would, so that Netty's non-blocking reads (microseconds each) are all there and their
 * bytes add up.
 */
@Timeout(120)
class JfrEventsTest {
    @TempDir
    Path dir;

    private static List<RecordedEvent> events(Path file, String name) throws Exception {
        return RecordingFile.readAllEvents(file).stream().filter(e -> e.getEventType().getName().equals(name))
                .collect(Collectors.toList());
    }

    /** The bytes of the events whose remote port is {@code port}. */
    private static long bytes(List<RecordedEvent> events, int port, String field) {
        return events.stream().filter(e -> e.getInt("port") == port).mapToLong(e -> e.getLong(field)).sum();
    }

    /** Field {@code field} of what followed a line's prefix ({@link ChildJvm#expect}). */
    private static int port(String line, int field) {
        return Integer.parseInt(line.split(" ")[field]);
    }

    private static boolean ofClientPort(RecordedEvent e, int port, String field) {
        String address = e.getString(field);
        return address != null && address.endsWith(":" + port);
    }

    @Test
    void shouldRecordSocketAndConnectionEventsWithTheirBytes() throws Exception {
        Path defaults = dir.resolve("default.jfr");
        Path all = dir.resolve("all.jfr");
        long blockingRead;
        int blockingPort;
        int nettyPort;
        int nettyServerPort;
        long nettyBytes;
        int plainPort;
        // the workload's connections make tens of writes: they move at their second
        // (hadronio.upgrade.writes), so that the recording has moves beside plain connections
        try (ChildJvm child = ChildJvm.start(ObservedWorkload.class, List.of(
                "-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER, "-Dhadronio.upgrade.writes=1",
                "-XX:StartFlightRecording:filename=" + defaults + ",settings=default",
                "-XX:StartFlightRecording:filename=" + all + ",settings=default,"
                        + "+io.hadronio.SocketRead#threshold=0 ms,+io.hadronio.SocketWrite#threshold=0 ms"))) {
            String blocking = child.expect("BLOCKING ");
            blockingPort = port(blocking, 0);
            blockingRead = Long.parseLong(blocking.split(" ")[1]);
            String netty = child.expect("NETTY ");
            nettyPort = port(netty, 0);
            nettyServerPort = port(netty, 1);
            nettyBytes = Long.parseLong(netty.split(" ")[2]);
            plainPort = port(child.expect("PLAIN "), 0);
            child.expect("DONE");
            assertEquals(0, child.awaitExit(), child.output());
        }
        assertEquals((long) ObservedWorkload.ROUNDS * ObservedWorkload.REQUEST, blockingRead);

        // default settings: the blocking client's slow reads are there (each waited SLOW_MILLIS)
        List<RecordedEvent> reads = events(defaults, "io.hadronio.SocketRead");
        long slowReads = 0;
        long slowBytes = 0;
        for (RecordedEvent e : reads) {
            if (e.getDuration().compareTo(Duration.ofMillis(ObservedWorkload.SLOW_MILLIS - 5)) >= 0
                    && e.getString("address").equals("127.0.0.1")) {
                slowReads++;
                slowBytes += e.getLong("bytesRead");
                assertFalse(e.getBoolean("endOfStream"));
                assertTrue(e.getInt("port") > 0);
                assertFalse(e.getString("host").isEmpty());
                assertTrue(e.getString("path").startsWith("kernel-") || e.getString("path").equals("ucx"));
                assertEquals("hadroNIO", e.getEventType().getCategoryNames().get(0));
                assertTrue(e.getStackTrace() != null, "a stack trace, as jdk.SocketRead has");
            }
        }
        assertTrue(slowReads >= ObservedWorkload.ROUNDS - 1, "slow reads in " + reads);
        assertTrue(slowBytes >= (long) (ObservedWorkload.ROUNDS - 1) * ObservedWorkload.REQUEST
                && slowBytes <= blockingRead, "bytes of the slow reads: " + slowBytes);

        // connection events, all on by default: every connection opened and closed with its bytes
        List<RecordedEvent> opened = events(defaults, "io.hadronio.ConnectionOpened");
        List<RecordedEvent> closed = events(defaults, "io.hadronio.ConnectionClosed");
        RecordedEvent blockingClosed = closed.stream().filter(e -> ofClientPort(e, blockingPort, "local"))
                .findFirst().orElseThrow(() -> new AssertionError("no close of the blocking client in " + closed));
        assertEquals(blockingRead, blockingClosed.getLong("bytesIn"));
        assertEquals(blockingRead, blockingClosed.getLong("bytesOut"));
        assertTrue(opened.stream().anyMatch(e -> ofClientPort(e, blockingPort, "local")), opened.toString());
        RecordedEvent nettyClosed = closed.stream().filter(e -> ofClientPort(e, nettyPort, "local"))
                .findFirst().orElseThrow(() -> new AssertionError("no close of the Netty client in " + closed));
        assertEquals(nettyBytes, nettyClosed.getLong("bytesIn"));
        assertEquals((long) ObservedWorkload.NETTY_BYTES, nettyClosed.getLong("bytesOut"));
        if (ChildJvm.UPGRADE_MODE) {
            // the blocking pair moved to UCX at its second write (both sides report it)
            List<RecordedEvent> upgraded = events(defaults, "io.hadronio.ConnectionUpgraded");
            assertTrue(upgraded.stream().filter(e -> ofClientPort(e, blockingPort, "remote")).count() == 1,
                    "the blocking pair's server side moved to UCX: " + upgraded);
        }
        List<RecordedEvent> fellBack = events(defaults, "io.hadronio.ConnectionFellBack");
        assertTrue(fellBack.stream().anyMatch(e -> "peer-plain".equals(e.getString("reasonCode"))),
                "the connection to java.net.ServerSocket fell back: " + fellBack);
        RecordedEvent plainClosed = closed.stream().filter(e -> ofClientPort(e, plainPort, "local"))
                .findFirst().orElseThrow();
        assertEquals("kernel-tcp", plainClosed.getString("path"));
        assertEquals(200, plainClosed.getLong("bytesOut"));
        assertEquals(0, plainClosed.getLong("bytesIn"), "the 10 bytes the server sent were never read");

        // threshold 0: every read and write of the Netty connection, whose bytes add up (the
        // client's are those whose remote port is the server's, and the other way round)
        List<RecordedEvent> allReads = events(all, "io.hadronio.SocketRead");
        List<RecordedEvent> allWrites = events(all, "io.hadronio.SocketWrite");
        assertEquals(nettyBytes, bytes(allReads, nettyServerPort, "bytesRead"), "the Netty client's reads");
        assertEquals(ObservedWorkload.NETTY_BYTES, bytes(allReads, nettyPort, "bytesRead"), "the Netty server's reads");
        assertEquals(ObservedWorkload.NETTY_BYTES, bytes(allWrites, nettyServerPort, "bytesWritten"),
                "the Netty client's writes");
        assertEquals(nettyBytes, bytes(allWrites, nettyPort, "bytesWritten"), "the Netty server's writes");
        assertTrue(allReads.stream().anyMatch(e -> e.getInt("port") == nettyServerPort && e.getLong("bytesRead") == 0
                && !e.getBoolean("endOfStream")), "Netty's reads that found nothing are there too");
    }
}
