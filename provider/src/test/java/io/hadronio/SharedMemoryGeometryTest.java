package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Properties;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two processes whose shared-memory transports are laid out differently ({@code hadronio.ucx.MM_FIFO_SIZE}
 * on one of them) must not share a UCX endpoint: UCX's {@code mm} sender writes into the receiver's
 * FIFO with its own sizes, and would overwrite messages the receiver has not read. Their endpoint
 * profiles differ, so the connection stays on TCP with every byte; ends that agree still move to UCX.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class SharedMemoryGeometryTest {
    private static HadronioProvider provider(String fifoSize) {
        return provider(fifoSize, false);
    }

    private static HadronioProvider provider(String fifoSize, boolean upgrade) {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.upgrade", Boolean.toString(upgrade));
        // a moving connection moves at its second write
        p.setProperty("hadronio.upgrade.writes", "1");
        if (fifoSize != null) {
            p.setProperty("hadronio.ucx.MM_FIFO_SIZE", fifoSize);
        }
        return new HadronioProvider(HadronioConfig.from(p));
    }

    /** Streams a MiB client to server, checks every byte, and returns the client's transport (waiting for a move when {@code move}). */
    private static String exchange(HadronioProvider serverSide, HadronioProvider clientSide, boolean move)
            throws IOException {
        byte[] sent = new byte[256 * 1024];
        ThreadLocalRandom.current().nextBytes(sent);
        try (ServerSocketChannel server = serverSide.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = clientSide.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel peer = server.accept()) {
                    // one thread writes and reads, so neither may block
                    client.configureBlocking(false);
                    peer.configureBlocking(false);
                    // many messages, more than a FIFO of 64 holds
                    for (int round = 0; round < 4; round++) {
                        ByteBuffer out = ByteBuffer.wrap(sent);
                        ByteBuffer in = ByteBuffer.allocate(sent.length);
                        while (out.hasRemaining() || in.hasRemaining()) {
                            if (out.hasRemaining()) {
                                ByteBuffer chunk = out.slice(out.position(), Math.min(out.remaining(), 512));
                                int n = client.write(chunk);
                                out.position(out.position() + n);
                            }
                            if (in.hasRemaining()) {
                                peer.read(in);
                            }
                        }
                        assertArrayEquals(sent, in.array(), "round " + round);
                    }
                    // a move runs in the background: wait a while for one that may come
                    String transport = client.getOption(HadronioSocketOptions.TRANSPORT);
                    for (int i = 0; move && i < 200 && !transport.startsWith("ucx:"); i++) {
                        sleep(50);
                        transport = client.getOption(HadronioSocketOptions.TRANSPORT);
                    }
                    return transport;
                }
            }
        }
    }

    private static void sleep(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    @Test
    void shouldKeepMovingConnectionsBetweenEndsWithAnotherFifoSizeOnTheirFirstPath() throws IOException {
        HadronioProvider defaults = provider(null, true);
        HadronioProvider larger = provider("128", true);
        HadronioProvider alsoLarger = provider("128", true);
        String mismatched = exchange(defaults, larger, false);
        assertTrue(!mismatched.startsWith("ucx:"), "ends with different FIFO sizes: " + mismatched);
        String agreeing = exchange(larger, alsoLarger, true);
        assertTrue(agreeing.startsWith("ucx:"), "ends with the same FIFO size: " + agreeing);
    }

    @Test
    void shouldKeepEndsWithAnotherFifoSizeOnTcpAndEndsThatAgreeOnUcx() throws IOException {
        HadronioProvider defaults = provider(null);
        HadronioProvider larger = provider("128");
        HadronioProvider alsoLarger = provider("128");
        assertTrue(defaults.isAccelerated() && larger.isAccelerated());
        String mismatched = exchange(defaults, larger, false);
        assertEquals("tcp", mismatched, "ends with different FIFO sizes");
        assertEquals("tcp", exchange(larger, defaults, false), "ends with different FIFO sizes, the other way");
        String agreeing = exchange(larger, alsoLarger, true);
        assertTrue(agreeing.startsWith("ucx:"), "ends with the same FIFO size: " + agreeing);
    }
}
