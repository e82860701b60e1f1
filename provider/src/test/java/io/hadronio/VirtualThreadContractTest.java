package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Virtual threads that block in NIO leave the scheduler's carrier threads to the others.
 * The JDK parks a virtual thread in {@code select()} or a blocking {@code read()} (or tells
 * the scheduler to add a carrier for the time); a native wait that pins its carrier instead
 * lets as few virtual threads as there are cores stop every other virtual thread. JGroups 5
 * runs its TCP_NIO2 selector loops on virtual threads: on hadroNIO, with two cores, its two
 * selectors held both carriers and a cluster barely moved (docs/COMPATIBILITY.md).
 */
@Timeout(60)
class VirtualThreadContractTest extends ContractSupport {
    /** As many virtual threads as the scheduler has carriers, plus one: enough to take them all. */
    private static final int BLOCKED = Integer.getInteger("jdk.virtualThreadScheduler.parallelism",
            Runtime.getRuntime().availableProcessors()) + 1;

    private static Thread virtual(String name, ThrowingRunnable body) {
        return Thread.ofVirtual().name(name).start(() -> {
            try {
                body.run();
            } catch (Exception e) {
                // closing the selector or channel under the blocked thread ends it: expected here
            }
        });
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** Waits until every thread shows a frame {@code frame} matches: it is blocked in it, not about to. */
    private static void awaitBlocked(List<Thread> threads, Predicate<StackTraceElement> frame) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        for (Thread t : threads) {
            while (Arrays.stream(t.getStackTrace()).noneMatch(frame)) {
                assertTrue(t.isAlive() && System.nanoTime() < deadline, "thread " + t + " did not block");
                Thread.sleep(5);
            }
        }
    }

    /** A fresh virtual thread runs while the others are blocked: the scheduler still has a carrier. */
    private static void assertAnotherVirtualThreadRuns() throws Exception {
        CompletableFuture<Boolean> ran = new CompletableFuture<>();
        Thread.ofVirtual().start(() -> ran.complete(true));
        assertTrue(ran.get(10, TimeUnit.SECONDS), "no carrier left for another virtual thread");
    }

    @ParameterizedTest
    @MethodSource("providers")
    void virtualThreadsInSelectShouldLeaveCarriersToOthers(SelectorProvider provider) throws Exception {
        List<Selector> selectors = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < BLOCKED; i++) {
                Selector selector = provider.openSelector();
                selectors.add(selector);
                threads.add(virtual("select-" + i, selector::select));
            }
            awaitBlocked(threads, e -> e.getMethodName().equals("select"));
            assertAnotherVirtualThreadRuns();
        } finally {
            for (Selector s : selectors) {
                s.wakeup();
                s.close();
            }
            for (Thread t : threads) {
                assertTrue(t.join(java.time.Duration.ofSeconds(10)), "still selecting: " + t);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void virtualThreadsInABlockingReadShouldLeaveCarriersToOthers(SelectorProvider provider) throws Exception {
        List<Connected> connections = new ArrayList<>();
        List<Thread> threads = new ArrayList<>();
        try {
            for (int i = 0; i < BLOCKED; i++) {
                Connected c = connect(provider);
                connections.add(c);
                threads.add(virtual("read-" + i, () -> c.server().read(ByteBuffer.allocate(1))));
            }
            awaitBlocked(threads, e -> e.getMethodName().equals("read"));
            assertAnotherVirtualThreadRuns();
            // and the blocked readers still get their bytes
            for (Connected c : connections) {
                assertEquals(1, c.client().write(ByteBuffer.wrap(new byte[] {7})));
            }
            for (Thread t : threads) {
                assertTrue(t.join(java.time.Duration.ofSeconds(10)), "still reading: " + t);
            }
        } finally {
            for (Connected c : connections) {
                c.close();
            }
        }
    }
}
