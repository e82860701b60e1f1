package io.hadronio.it.netty;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.Data;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Unmodified Netty (NIO transport) in two JVMs on hadroNIO: {@link NettyPeer} servers and
 * clients, each started with {@code -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider}
 * and checked to really run on it (provider class, channel class, UCX transports).
 */
@Tag("slow")
@Timeout(90)
class NettyTest {
    // the HadronioSocketChannel that FileChannel.transferTo trusts (SocketChannelFactory): every channel is one
    // once java.base let it load, which it must in a plain application JVM
    private static final String HADRONIO_CHANNEL = "io.hadronio.nio.TrustedSocketChannel";

    private static ChildJvm peer(String... args) throws Exception {
        ChildJvm jvm = ChildJvm.start(NettyPeer.class,
                List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER), args);
        assertEquals(ChildJvm.PROVIDER, jvm.expect("PROVIDER "), jvm::report);
        return jvm;
    }

    // the suite's connection mode: with hadronio.upgrade a connection starts on kernel TCP and
    // moves to UCX with its traffic, so one these tests look at early may not have moved yet
    private static final boolean UPGRADE = ChildJvm.UPGRADE_MODE;

    /** "nioClass transports": the NIO channel under Netty's is hadroNIO's, carried by UCX transports. */
    private static void assertHadronioChannel(String channel, ChildJvm jvm) {
        String[] f = channel.split(" ", 2);
        assertEquals(HADRONIO_CHANNEL, f[0], jvm::report);
        assertTrue(f.length == 2 && f[1].startsWith("[") && (UPGRADE || !f[1].equals("[]")),
                () -> "no UCX transports: " + channel);
    }

    /** "count crc mismatch channel": the stream's first {@code expectedCount} bytes, unchanged, on hadroNIO. */
    private static void assertStream(long expectedCount, String received, ChildJvm jvm) {
        String[] f = received.split(" ", 4);
        assertEquals(expectedCount, Long.parseLong(f[0]), () -> "byte count: " + received + "\n" + jvm.report());
        assertEquals(-1, Long.parseLong(f[2]), () -> "first wrong byte: " + received + "\n" + jvm.report());
        assertEquals(Data.crc(expectedCount), Long.parseLong(f[1]), () -> "crc: " + received + "\n" + jvm.report());
        assertHadronioChannel(f[3], jvm);
    }

    @Test
    void shouldEchoMessagesFromOneByteToOneMebibyteOverSeveralConnections() throws Exception {
        int connections = 4;
        int[] sizes = {1, 2, 100, 1000, 65_535, 65_536, 65_537, 300_001, 1 << 20};
        long total = Arrays.stream(sizes).asLongStream().sum();
        try (ChildJvm server = peer("echo-server")) {
            int port = server.port();
            String[] clientArgs = IntStream.concat(IntStream.of(port, connections), Arrays.stream(sizes))
                    .mapToObj(String::valueOf).toArray(String[]::new);
            List<String> args = new ArrayList<>(List.of("echo-client"));
            args.addAll(List.of(clientArgs));
            try (ChildJvm client = peer(args.toArray(String[]::new))) {
                for (int i = 0; i < connections; i++) {
                    // what came back to the client, and what the server saw on its way
                    assertStream(total, client.expect("RECEIVED "), client);
                    assertStream(total, server.expect("ECHOED "), server);
                }
                client.expect("DONE");
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertFalse(server.printedErrors(), server::report);
        }
    }

    /**
     * {@code channel.writeAndFlush(msg); channel.close()} with nothing in between: the
     * server still receives the whole message, then end-of-stream (the original hadroNIO
     * lost it). Netty drops only what the channel did not take before close, and a fresh
     * hadroNIO channel takes these sizes in one write.
     */
    private static void writeAndCloseAtOnce(String where, String then) throws Exception {
        int[] sizes = {1, 1000, 65_536, 65_537, 131_073};
        try (ChildJvm server = peer("sink-server")) {
            int port = server.port();
            List<String> args = new ArrayList<>(List.of("write-close-client", String.valueOf(port), where, then));
            Arrays.stream(sizes).mapToObj(String::valueOf).forEach(args::add);
            try (ChildJvm client = peer(args.toArray(String[]::new))) {
                List<Long> counts = new ArrayList<>();
                for (int size : sizes) {
                    assertHadronioChannel(client.expect("CHANNEL "), client);
                    assertEquals(String.valueOf(size), client.expect("CLOSED "), client::report);
                    String received = server.expect("RECEIVED ");
                    // a connection's bytes, in full and unchanged: the stream's first 'size' bytes
                    long count = Long.parseLong(received.split(" ")[0]);
                    assertStream(count, received, server);
                    counts.add(count);
                }
                counts.sort(null);
                assertEquals(Arrays.stream(sizes).asLongStream().sorted().boxed().toList(), counts, server::report);
                if (then.equals("exit")) {
                    assertEquals(0, client.awaitExit(), client::report);
                } else {
                    client.expect("DONE");
                }
            }
            assertFalse(server.printedErrors(), server::report);
        }
    }

    @Test
    void shouldHalfCloseAndStillReceiveTheReply() throws Exception {
        int size = 700_001;
        try (ChildJvm server = peer("reply-server")) {
            int port = server.port();
            try (ChildJvm client = peer("half-close-client", String.valueOf(port), String.valueOf(size))) {
                // the server saw end-of-stream after all bytes (ChannelInputShutdownEvent), not a reset
                assertStream(size, server.expect("RECEIVED "), server);
                assertStream(size, client.expect("RECEIVED "), client);
                assertEquals(0, client.awaitExit(), client::report);
            }
            assertFalse(server.printedErrors(), server::report);
        }
    }

    @Test
    void shouldDeliverAMessageWrittenRightBeforeCloseFromOutsideTheEventLoop() throws Exception {
        writeAndCloseAtOnce("outside", "stay");
    }

    @Test
    void shouldDeliverAMessageWrittenRightBeforeCloseInsideTheEventLoopWhenTheClientExitsAtOnce() throws Exception {
        writeAndCloseAtOnce("inside", "exit");
    }
}
