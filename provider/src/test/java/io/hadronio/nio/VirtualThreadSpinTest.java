package io.hadronio.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static io.hadronio.nio.ThreadStates.awaitIn;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import io.hadronio.platform.CarrierCompensation;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A virtual thread waits in hadroNIO as a platform thread does: it spins for its window before
 * it sleeps, and the spin is a blocking call to the scheduler ({@code CarrierCompensation.beginSpin}),
 * which runs the other virtual threads on a carrier it adds. Until 2026-11-29 a virtual thread
 * slept after 2 us, since spinning on its carrier would have kept the other virtual threads off
 * it: every message to a virtual-thread selector loop (JGroups') waited for it to wake from
 * {@code poll(2)}.
 *
 * <p>One virtual thread per core may spin at a time; the others sleep at once. The providers
 * here spin 10 s without yielding ({@code hadronio.polling.yield=false}), so
 * that the machine's load (the crowd check) does not decide whether they spin.
 */
@Timeout(60)
class VirtualThreadSpinTest {
    /** How many virtual threads may spin at once: one per core. */
    private static final int CORES = Runtime.getRuntime().availableProcessors();
    /** More waiting virtual threads than the scheduler has carriers and than may spin. */
    private static final int WAITING = Math.max(CORES, Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
            CORES)) + 1;

    private HadronioProvider provider;
    private HadronioProvider peers;
    private ServerSocketChannel server;
    private final List<AutoCloseable> closeables = new ArrayList<>();

    @BeforeEach
    void providers() throws IOException {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.upgrade", "false");
        p.setProperty("hadronio.polling", "adaptive");
        p.setProperty("hadronio.polling.spin", "10000000");
        p.setProperty("hadronio.polling.yield", "false");
        provider = new HadronioProvider(HadronioConfig.from(p));
        // the peers on a worker of their own, spinning the default window
        p.remove("hadronio.polling.spin");
        p.remove("hadronio.polling.yield");
        peers = new HadronioProvider(HadronioConfig.from(p));
        server = peers.openServerSocketChannel();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        closeables.add(server);
    }

    @AfterEach
    void close() {
        for (AutoCloseable c : closeables) {
            try {
                c.close();
            } catch (Exception ignored) {
                // best effort
            }
        }
    }

    /** A connection of {@link #provider} and its peer's end. */
    private SocketChannel[] connect() throws IOException {
        SocketChannel ours = provider.openSocketChannel();
        closeables.add(ours);
        ours.connect(server.getLocalAddress());
        SocketChannel theirs = server.accept();
        closeables.add(theirs);
        return new SocketChannel[] {ours, theirs};
    }

    private static void assertAnotherVirtualThreadRuns() throws Exception {
        CompletableFuture<Boolean> ran = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> ran.complete(true));
        assertTrue(ran.get(10, TimeUnit.SECONDS), "no carrier left for another virtual thread");
    }

    @Test
    void aVirtualThreadInSelectShouldCatchAMessageSpinningNotSleeping() throws Exception {
        SocketChannel[] c = connect();
        HadronioSelector selector = (HadronioSelector) provider.openSelector();
        closeables.add(0, selector);
        c[0].configureBlocking(false).register(selector, SelectionKey.OP_READ);
        CompletableFuture<Integer> selected = new CompletableFuture<>();
        Thread t = Thread.ofVirtual().name("selecting").start(() -> {
            try {
                selected.complete(selector.select(30_000));
            } catch (Throwable e) {
                selected.completeExceptionally(e);
            }
        });
        awaitIn(t, "doSelect");
        assertEquals(1, c[1].write(ByteBuffer.wrap(new byte[] {42})));
        assertEquals(1, selected.get(20, TimeUnit.SECONDS));
        assertEquals(0, selector.wakeUps(), "the virtual thread slept in its spin window");
        ByteBuffer b = ByteBuffer.allocate(2);
        assertEquals(1, c[0].read(b));
        assertEquals(42, b.get(0));
    }

    @Test
    void virtualThreadsSpinningInSelectShouldLeaveCarriersToOthers() throws Exception {
        List<HadronioSelector> selectors = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < WAITING; i++) {
            SocketChannel[] c = connect();
            HadronioSelector selector = (HadronioSelector) provider.openSelector();
            closeables.add(0, selector);
            selectors.add(selector);
            c[0].configureBlocking(false).register(selector, SelectionKey.OP_READ);
            threads.add(Thread.ofVirtual().name("select-" + i).start(() -> {
                try {
                    selector.select(30_000);
                } catch (IOException e) {
                    // closed under it: ends the thread
                }
            }));
        }
        for (Thread t : threads) {
            awaitIn(t, "doSelect");
        }
        awaitSpinning(CORES);
        assertAnotherVirtualThreadRuns();
        assertEquals(CORES, CarrierCompensation.spinningVirtualThreads(), "one spinning virtual thread per core");
        for (HadronioSelector s : selectors) {
            s.wakeup();
        }
        for (Thread t : threads) {
            assertTrue(t.join(Duration.ofSeconds(10)), "still selecting: " + t);
        }
        assertEquals(0, CarrierCompensation.spinningVirtualThreads(), "a spin still counted after its wait");
    }

    private static void awaitSpinning(int n) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (CarrierCompensation.spinningVirtualThreads() != n) {
            assertTrue(System.nanoTime() < deadline, CarrierCompensation.spinningVirtualThreads()
                    + " virtual threads spin, not " + n);
            Thread.sleep(5);
        }
    }

    @Test
    void virtualThreadsSpinningInABlockingReadShouldLeaveCarriersToOthers() throws Exception {
        List<SocketChannel[]> connections = new ArrayList<>();
        List<CompletableFuture<Integer>> reads = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < WAITING; i++) {
            SocketChannel[] c = connect();
            connections.add(c);
            CompletableFuture<Integer> read = new CompletableFuture<>();
            reads.add(read);
            threads.add(Thread.ofVirtual().name("read-" + i).start(() -> {
                try {
                    read.complete(c[0].read(ByteBuffer.allocate(1)));
                } catch (Throwable e) {
                    read.completeExceptionally(e);
                }
            }));
        }
        for (Thread t : threads) {
            awaitIn(t, "await");
        }
        awaitSpinning(CORES);
        assertAnotherVirtualThreadRuns();
        assertEquals(CORES, CarrierCompensation.spinningVirtualThreads(), "one spinning virtual thread per core");
        // and the spinning readers get their bytes
        for (SocketChannel[] c : connections) {
            assertEquals(1, c[1].write(ByteBuffer.wrap(new byte[] {7})));
        }
        for (CompletableFuture<Integer> read : reads) {
            assertEquals(1, read.get(20, TimeUnit.SECONDS));
        }
        for (Thread t : threads) {
            assertTrue(t.join(Duration.ofSeconds(10)), "still reading: " + t);
        }
        assertEquals(0, CarrierCompensation.spinningVirtualThreads(), "a spin still counted after its wait");
    }
}
