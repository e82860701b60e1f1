package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A connection's send and receive areas stay in ordinary pages (resident as written) while it
 * carries small messages, and move into huge pages with their bytes when it carries a large one
 * (platform/HugePagePool, path/ConnectionMemory): memory for the idle and the chatty, speed for
 * the bulky.
 */
@Timeout(60)
class AreaPromotionTest {
    private static final String PROMOTED = "connections.memory.hugepages.promoted.bytes";
    // dedicated threads: the common pool has one thread on two cores, and the ends block
    private static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    @Test
    void shouldKeepSmallMessagesInOrdinaryPagesAndMoveAreasIntoHugePagesAtTheFirstLargeOne() throws Exception {
        assumeTrue(transparentHugePages(), "the kernel gives no transparent huge pages on request");
        HadronioProvider provider = new HadronioProvider();
        assertTrue(provider.isAccelerated());
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            // echoes whatever comes, in direct and heap buffers alike, until the end of the stream
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                try (SocketChannel peer = server.accept()) {
                    ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                    while (peer.read(buf) >= 0) {
                        buf.flip();
                        while (buf.hasRemaining()) {
                            peer.write(buf);
                        }
                        buf.clear();
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, THREADS);
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                ByteBuffer small = ByteBuffer.allocateDirect(8);
                for (long i = 0; !client.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"); i++) {
                    assertTrue(i < 200_000, "not on UCX after " + i + " round trips: "
                            + client.getOption(HadronioSocketOptions.TRANSPORT));
                    roundTrip(client, small, i);
                }
                for (long i = 0; i < 1000; i++) {
                    roundTrip(client, small, i);
                }
                assertEquals(0L, provider.resources().get(PROMOTED), "8-byte messages keep ordinary pages");

                byte[] data = new byte[(1 << 20) + 17];
                new Random(7).nextBytes(data);
                CompletableFuture<byte[]> reader = CompletableFuture.supplyAsync(() -> {
                    try {
                        ByteBuffer in = ByteBuffer.allocate(data.length);
                        while (in.hasRemaining() && client.read(in) >= 0) {
                            // until all came back
                        }
                        return in.array();
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                ByteBuffer out = ByteBuffer.wrap(data);
                while (out.hasRemaining()) {
                    client.write(out);
                }
                assertArrayEquals(data, reader.get(30, TimeUnit.SECONDS), "the large message came back intact");
                assertTrue(provider.resources().get(PROMOTED) > 0, "a large message moves the areas into huge pages: "
                        + provider.resources());
                // and small ones still go through them
                for (long i = 0; i < 1000; i++) {
                    roundTrip(client, small, i);
                }
                client.shutdownOutput();
                echo.get(30, TimeUnit.SECONDS);
            }
        }
    }

    private static void roundTrip(SocketChannel channel, ByteBuffer buf, long value) throws Exception {
        buf.clear();
        buf.putLong(0, value);
        while (buf.hasRemaining()) {
            channel.write(buf);
        }
        buf.clear();
        while (buf.hasRemaining()) {
            assertTrue(channel.read(buf) >= 0, "end of stream");
        }
        assertEquals(value, buf.getLong(0));
    }

    private static boolean transparentHugePages() {
        try {
            String mode = Files.readString(Path.of("/sys/kernel/mm/transparent_hugepage/enabled"));
            return mode.contains("[always]") || mode.contains("[madvise]");
        } catch (Exception e) {
            return false;
        }
    }
}
