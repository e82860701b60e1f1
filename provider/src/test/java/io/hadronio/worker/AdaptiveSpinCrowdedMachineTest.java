package io.hadronio.worker;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * An adaptive waiter on a machine whose every core is wanted keeps its spin past its first
 * pauses, yielding: how many threads are runnable machine-wide (the waiter itself, the threads it
 * hands work to, the peer process's waiters) does not end it. Unpinned on 2 cores, ending the
 * spin there made every hand-off sleep: a framework's round trip at 1.01x the JDK's instead of
 * 2.10x (docs/benchmarks/patterns.md).
 */
class AdaptiveSpinCrowdedMachineTest {
    private static final long WINDOW = 100_000;

    @Test
    void shouldKeepYieldingPastItsPausesWhileEveryCoreIsBusy() throws Exception {
        int busy = Runtime.getRuntime().availableProcessors() + 2;
        AtomicBoolean stop = new AtomicBoolean();
        CountDownLatch running = new CountDownLatch(busy);
        Thread[] spinners = new Thread[busy];
        for (int i = 0; i < busy; i++) {
            spinners[i] = Thread.ofPlatform().daemon().start(() -> {
                running.countDown();
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            });
        }
        try {
            running.await();
            // long enough for the kernel's count of runnable threads to show them all
            Thread.sleep(20);
            AdaptiveSpin spin = new AdaptiveSpin(WINDOW, true);
            long t0 = System.nanoTime();
            spin.start(t0);
            assertTrue(spin.turn(t0 + AdaptiveSpin.SPIN_BEFORE_YIELD_NANOS),
                    "past its pauses, with " + busy + " busy threads, a waiter yields and looks again");
            spin.stop();
        } finally {
            stop.set(true);
            for (Thread t : spinners) {
                t.join();
            }
        }
    }
}
