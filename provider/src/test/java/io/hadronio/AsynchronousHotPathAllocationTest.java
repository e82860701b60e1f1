package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * NIO.2's data path allocates nothing beyond what its API forces: 8-byte ping-pong between
 * two hadroNIO asynchronous channels through {@link CompletionHandler}s, each operation
 * started in the previous one's handler (no {@code Future} asked for; an {@code Integer} of 8
 * is the JDK's cached box). Both ends sit on the group's one loop, so every handler runs
 * on its thread; the bytes it allocated are counted by the JVM in windows after warm-up, and
 * the quietest window must allocate not a single byte (a rarely taken branch's first use may
 * allocate once).
 */
@Timeout(120)
class AsynchronousHotPathAllocationTest {
    private static final int WARMUP = 50_000;
    private static final int WINDOW = 25_000;
    private static final int WINDOWS = 4;
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    /** One side's handlers: the client sends i and reads it back; the server echoes. */
    private static final class PingPong implements CompletionHandler<Integer, Void> {
        private final AsynchronousSocketChannel ch;
        private final boolean client;
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(8);
        private final long[] windowStarts = new long[WINDOWS + 1];
        private final CompletableFuture<Void> done;
        private boolean writingNow;
        private int roundTrips;

        PingPong(AsynchronousSocketChannel ch, boolean client, CompletableFuture<Void> done) {
            this.ch = ch;
            this.client = client;
            this.done = done;
        }

        void start() {
            if (client) {
                buffer.clear().putLong(0, 0);
                writingNow = true;
                ch.write(buffer, null, this);
            } else {
                buffer.clear();
                ch.read(buffer, null, this);
            }
        }

        @Override
        public void completed(Integer n, Void a) {
            if (n < 0) {
                done.completeExceptionally(new AssertionError("end of stream"));
                return;
            }
            if (buffer.hasRemaining()) {
                if (writingNow) {
                    ch.write(buffer, null, this);
                } else {
                    ch.read(buffer, null, this);
                }
                return;
            }
            if (writingNow) {
                // sent: read the answer (client) or the next request (server)
                writingNow = false;
                buffer.clear();
                ch.read(buffer, null, this);
                return;
            }
            if (client) {
                if (buffer.getLong(0) != roundTrips) {
                    done.completeExceptionally(new AssertionError("round trip " + roundTrips + " got "
                            + buffer.getLong(0)));
                    return;
                }
                roundTrips++;
                int measured = roundTrips - WARMUP;
                if (measured >= 0 && measured % WINDOW == 0) {
                    windowStarts[measured / WINDOW] = THREADS.getCurrentThreadAllocatedBytes();
                    if (measured / WINDOW == WINDOWS) {
                        done.complete(null);
                        return;
                    }
                }
                buffer.clear().putLong(0, roundTrips);
            } else {
                buffer.flip();
            }
            writingNow = true;
            ch.write(buffer, null, this);
        }

        @Override
        public void failed(Throwable e, Void a) {
            done.completeExceptionally(e);
        }
    }

    @Test
    void shouldNotAllocateOnHandlerChainedReadsAndWrites() throws Exception {
        HadronioAsynchronousChannelProvider provider = AsynchronousContractTest.ASYNC;
        AsynchronousChannelGroup group = provider.openAsynchronousChannelGroup(1,
                AsynchronousContractTest.named("alloc"));
        try (AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(group)) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            AsynchronousSocketChannel client = provider.openAsynchronousSocketChannel(group);
            var accepted = listener.accept();
            client.connect(listener.getLocalAddress()).get(10, TimeUnit.SECONDS);
            AsynchronousSocketChannel server = accepted.get(10, TimeUnit.SECONDS);
            CompletableFuture<Void> done = new CompletableFuture<>();
            PingPong ping = new PingPong(client, true, done);
            new PingPong(server, false, done).start();
            ping.start();
            done.get(100, TimeUnit.SECONDS);
            long[] perWindow = new long[WINDOWS];
            for (int w = 0; w < WINDOWS; w++) {
                perWindow[w] = ping.windowStarts[w + 1] - ping.windowStarts[w];
            }
            String transport = client.getOption(HadronioSocketOptions.TRANSPORT);
            assertTrue(transport.startsWith("ucx:"), transport);
            assertEquals(0, Arrays.stream(perWindow).min().orElseThrow(),
                    () -> "bytes allocated per window of " + WINDOW + " round trips: " + Arrays.toString(perWindow));
            client.close();
            server.close();
        } finally {
            group.shutdownNow();
            assertTrue(group.awaitTermination(10, TimeUnit.SECONDS));
        }
    }
}
