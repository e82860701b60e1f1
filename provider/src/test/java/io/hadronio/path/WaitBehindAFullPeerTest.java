package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A thread that waits while a send of its own waits in UCX for the peer sleeps; it does not
 * burn its core. UCX's shared memory refuses to arm the worker while a send waits for room in
 * the peer's FIFO, and nothing signals when the room comes; a waiter that looked again at once
 * after every refusal spun for as long as the peer did not drain its FIFO (seen in the eager
 * soak's hang, docs/RELIABILITY.md). It now naps between looks (AdaptiveSpin.napAfterRefusal).
 *
 * <p>Two providers, as two JVMs would have. The test holds the peer's worker still (its lock)
 * and fills its FIFO with small messages, so that the last of them wait in UCX; then a thread
 * waits for input that does not come, in a blocking read and in a selection. Its CPU time over
 * a second says whether it slept: a spinning waiter uses the whole second.
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(120)
class WaitBehindAFullPeerTest {
    // more than UCX's shared-memory FIFO holds (64 elements by default): the rest wait in UCX
    private static final int FILLERS = 80;
    private static final long WATCHED_NANOS = TimeUnit.SECONDS.toNanos(1);


    /** What the waiting side does while the peer stands still; returns when it waits. */
    private interface Wait {
        void run(SocketChannel waiting) throws Exception;
    }

    @Test
    void shouldSleepInABlockingReadWhileItsSendsWaitForThePeer() throws Exception {
        runWithStillPeer(waiting -> {
            ByteBuffer b = ByteBuffer.allocate(16);
            int n = waiting.read(b);
            assertEquals(1, n, "the peer's one byte");
        });
    }

    @Test
    void shouldSleepInASelectionWhileItsSendsWaitForThePeer() throws Exception {
        runWithStillPeer(waiting -> {
            waiting.configureBlocking(false);
            try (Selector selector = waiting.provider().openSelector()) {
                waiting.register(selector, SelectionKey.OP_READ);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (selector.select(5_000) == 0) {
                    assertTrue(System.nanoTime() < deadline, "the peer's byte never made the key ready");
                }
                ByteBuffer b = ByteBuffer.allocate(16);
                assertEquals(1, waiting.read(b), "the peer's one byte");
            }
        });
    }

    private static void runWithStillPeer(Wait wait) throws Exception {
        // the still side takes 4 x 32 messages: the fillers all leave our window at once
        HadronioProvider stillSide = EagerProviders.eager(32);
        HadronioProvider waitingSide = EagerProviders.eager(8);
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assertTrue(threads.isCurrentThreadCpuTimeSupported());
        try (ServerSocketChannel server = waitingSide.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel still = stillSide.openSocketChannel()) {
                still.connect(server.getLocalAddress());
                try (SocketChannel waiting = server.accept()) {
                    assertTrue(still.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"),
                            still.getOption(HadronioSocketOptions.TRANSPORT));
                    ReentrantLock stillWorker = ChannelInternals.workerLockOf(still);
                    long cpu;
                    CompletableFuture<Void> waited;
                    stillWorker.lock();
                    try {
                        ByteBuffer filler = ByteBuffer.allocate(8);
                        for (int i = 0; i < FILLERS; i++) {
                            filler.clear().putLong(0, i);
                            while (filler.hasRemaining()) {
                                waiting.write(filler);
                            }
                        }
                        Thread[] waiter = new Thread[1];
                        waited = CompletableFuture.runAsync(() -> {
                            waiter[0] = Thread.currentThread();
                            try {
                                wait.run(waiting);
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });
                        // let it get past its spin window into its wait, then watch it for a second
                        Thread.sleep(200);
                        long id = waiter[0].threadId();
                        long before = threads.getThreadCpuTime(id);
                        Thread.sleep(TimeUnit.NANOSECONDS.toMillis(WATCHED_NANOS));
                        cpu = threads.getThreadCpuTime(id) - before;
                    } finally {
                        stillWorker.unlock();
                    }
                    // the peer moves again: it answers, and everything the fillers carried arrives
                    still.write(ByteBuffer.wrap(new byte[] {42}));
                    waited.get(30, TimeUnit.SECONDS);
                    ByteBuffer in = ByteBuffer.allocate(FILLERS * 8);
                    while (in.hasRemaining()) {
                        assertTrue(still.read(in) >= 0, "end of stream after " + in.position() + " bytes");
                    }
                    for (int i = 0; i < FILLERS; i++) {
                        assertEquals(i, in.getLong(i * 8), "filler " + i);
                    }
                    assertTrue(cpu < WATCHED_NANOS / 2, "the waiting thread used " + cpu / 1_000_000
                            + " ms of CPU in " + WATCHED_NANOS / 1_000_000 + " ms of waiting: it spun");
                }
            }
        }
    }
}
