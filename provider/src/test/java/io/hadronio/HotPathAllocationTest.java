package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The data path allocates nothing, its JFR events disabled (no recording): blocking 8-byte
 * ping-pong through the public API, with the bytes the client thread allocated counted by the JVM
 * ({@code ThreadMXBean.getCurrentThreadAllocatedBytes}) over many round trips after
 * warm-up. The two ends sit on separate workers (as in two processes). Allocation is
 * behaviour, not timing: the quietest window must allocate not a single byte.
 */
@Timeout(120)
class HotPathAllocationTest {
    private static final int WARMUP = 50_000;
    // measured in windows: the first use of a rarely taken branch (class loading, lambda
    // linkage) allocates once; the hot path must allocate nothing in the windows after it
    private static final int WINDOW = 25_000;
    private static final int WINDOWS = 4;
    private static final int MEASURED = WINDOW * WINDOWS;
    static HadronioProvider provider;

    @BeforeAll
    static void start() {
        System.setProperty("hadronio.workers", "2");
        System.setProperty("hadronio.polling", System.getProperty("alloc.polling", "adaptive"));
        try {
            provider = new HadronioProvider();
        } finally {
            System.clearProperty("hadronio.workers");
            System.clearProperty("hadronio.polling");
        }
        assertTrue(provider.isAccelerated());
        // no recording: what is measured below is the data path with its JFR events disabled
        // (one isEnabled() check each, observe/SocketEvents), as in a JVM nobody records
        assertTrue(!io.hadronio.observe.SocketEvents.readEnabled() && !io.hadronio.observe.SocketEvents.writeEnabled());
    }

    @AfterAll
    static void stop() {
        provider = null;
    }

    // looked up once: ManagementFactory.getThreadMXBean() itself allocates (792 bytes a call here)
    private static final com.sun.management.ThreadMXBean THREADS =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

    private static long allocatedBytes() {
        return THREADS.getCurrentThreadAllocatedBytes();
    }

    @Test
    void shouldNotAllocateOnBlockingReadAndWrite() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                try (SocketChannel peer = server.accept()) {
                    ByteBuffer b = ByteBuffer.allocateDirect(8);
                    for (int i = 0; i < WARMUP + MEASURED; i++) {
                        b.clear();
                        while (b.hasRemaining()) {
                            peer.read(b);
                        }
                        b.flip();
                        peer.write(b);
                    }
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            }, r -> {
                Thread t = new Thread(r);
                t.setDaemon(true);
                t.start();
            });
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                ByteBuffer heap = ByteBuffer.allocate(8);
                long[] perWindow = allocatedPerWindow(i -> {
                    heap.clear();
                    client.write(heap);
                    heap.clear();
                    while (heap.hasRemaining()) {
                        client.read(heap);
                    }
                });
                long quietest = java.util.Arrays.stream(perWindow).min().orElseThrow();
                System.out.println("allocated per window: " + java.util.Arrays.toString(perWindow));
                // the "1-2 bytes per round trip" once measured here were the 792 bytes each
                // ManagementFactory.getThreadMXBean() call allocates, once per window; a lock() that
                // queues allocates a node (WorkerGroup.acquire spins first), so a loaded machine may
                // spoil a window, hence the quietest of them
                assertEquals(0, quietest, "bytes allocated on the client thread per window of " + WINDOW
                        + " round trips: " + java.util.Arrays.toString(perWindow));
                echo.get(30, TimeUnit.SECONDS);
            }
        }
    }

    @Test
    void shouldNotAllocatePerKeyInSelectionsThroughTheSelectedKeySet() throws Exception {
        // eight writable keys: every selection puts all of them in the selected-key set, and the
        // loop takes them out as Netty's does when it cannot swap the set (iterator, next, remove)
        int pairs = 4;
        List<SocketChannel> channels = new java.util.ArrayList<>();
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             java.nio.channels.Selector selector = provider.openSelector()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try {
                for (int p = 0; p < pairs; p++) {
                    SocketChannel client = provider.openSocketChannel();
                    channels.add(client);
                    client.connect(server.getLocalAddress());
                    SocketChannel peer = server.accept();
                    channels.add(peer);
                }
                for (SocketChannel c : channels) {
                    c.configureBlocking(false);
                    c.register(selector, java.nio.channels.SelectionKey.OP_WRITE);
                }
                long[] keysHandled = {0};
                long[] perWindow = allocatedPerWindow(i -> {
                    if ((i & 1) == 0) {
                        selector.selectNow();
                    } else {
                        selector.select();
                    }
                    java.util.Iterator<java.nio.channels.SelectionKey> it = selector.selectedKeys().iterator();
                    while (it.hasNext()) {
                        it.next();
                        it.remove();
                        keysHandled[0]++;
                    }
                });
                System.out.println("allocated per window of selections through the set: " + java.util.Arrays.toString(perWindow));
                assertEquals(2L * pairs * (WARMUP + MEASURED), keysHandled[0]);
                long quietest = java.util.Arrays.stream(perWindow).min().orElseThrow();
                // at most the iterator each selection asks for; a node per key would be 2 * pairs * 32 bytes
                assertTrue(quietest <= 48L * WINDOW, "bytes allocated per window of " + WINDOW + " selections of "
                        + 2 * pairs + " keys: " + java.util.Arrays.toString(perWindow));
            } finally {
                for (SocketChannel c : channels) {
                    c.close();
                }
            }
        }
    }

    /** One step of a measured loop: its number (even and odd steps may differ). */
    private interface Step {
        void run(int i) throws IOException;
    }

    /**
     * Runs {@code step} {@link #WARMUP} times, then {@link #MEASURED} times, and returns the bytes
     * this thread allocated in each window of {@link #WINDOW} measured steps.
     */
    private static long[] allocatedPerWindow(Step step) throws IOException {
        long[] perWindow = new long[WINDOWS];
        long before = 0;
        for (int i = 0; i < WARMUP + MEASURED; i++) {
            if (i >= WARMUP && (i - WARMUP) % WINDOW == 0) {
                long now = allocatedBytes();
                if (i > WARMUP) {
                    perWindow[(i - WARMUP) / WINDOW - 1] = now - before;
                }
                before = now;
            }
            step.run(i);
        }
        perWindow[WINDOWS - 1] = allocatedBytes() - before;
        return perWindow;
    }

    // the action of the selections below: made once, as an event loop would
    private static long handed;
    private static final java.util.function.Consumer<java.nio.channels.SelectionKey> COUNT = k -> handed++;

    @Test
    void shouldNotAllocateInSelectionsWithAnAction() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel();
             java.nio.channels.Selector selector = provider.openSelector()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel peer = server.accept()) {
                    client.configureBlocking(false);
                    peer.configureBlocking(false);
                    // both writable: each selection hands two keys over and returns at once
                    client.register(selector, java.nio.channels.SelectionKey.OP_WRITE);
                    peer.register(selector, java.nio.channels.SelectionKey.OP_WRITE);
                    long[] perWindow = allocatedPerWindow(i -> {
                        if ((i & 1) == 0) {
                            selector.selectNow(COUNT);
                        } else {
                            selector.select(COUNT);
                        }
                    });
                    System.out.println("allocated per window of selections: " + java.util.Arrays.toString(perWindow));
                    assertEquals(2L * (WARMUP + MEASURED), handed);
                    assertTrue(selector.selectedKeys().isEmpty());
                    long quietest = java.util.Arrays.stream(perWindow).min().orElseThrow();
                    assertEquals(0, quietest, "bytes allocated per window of " + WINDOW + " selections: "
                            + java.util.Arrays.toString(perWindow));
                }
            }
        }
    }
}
