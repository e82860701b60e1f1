package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.nio.HadronioSocketChannel;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** Both ends in one JVM, through the provider's public NIO API. */
@Timeout(60)
class InProcessEchoTest {
    static HadronioProvider provider;
    // dedicated threads: the common pool has one thread on two cores, and the ends block
    static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() {
        provider = new HadronioProvider();
        assertTrue(provider.isAccelerated());
    }

    @Test
    void shouldEchoAndSeeEndOfStreamAfterClose() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            int size = 3 * 1024 * 1024 + 17;
            CompletableFuture<Long> echoed = CompletableFuture.supplyAsync(() -> {
                try (SocketChannel peer = server.accept()) {
                    ByteBuffer buf = ByteBuffer.allocateDirect(100_000);
                    long total = 0;
                    while (peer.read(buf) >= 0) {
                        buf.flip();
                        total += buf.remaining();
                        while (buf.hasRemaining()) {
                            peer.write(buf);
                        }
                        buf.clear();
                    }
                    return total;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, THREADS);
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                assertTrue(client.isConnected());
                System.out.println("transports: " + ((HadronioSocketChannel) client).transports());
                byte[] data = new byte[size];
                new Random(1).nextBytes(data);
                CompletableFuture<byte[]> reader = CompletableFuture.supplyAsync(() -> {
                    try {
                        ByteBuffer in = ByteBuffer.allocate(size);
                        while (in.hasRemaining()) {
                            if (client.read(in) < 0) {
                                break;
                            }
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
                assertArrayEquals(data, reader.get(30, TimeUnit.SECONDS));
                client.shutdownOutput();
                assertEquals(size, echoed.get(30, TimeUnit.SECONDS));
                assertEquals(-1, client.read(ByteBuffer.allocate(1)));
            }
        }
    }
}
