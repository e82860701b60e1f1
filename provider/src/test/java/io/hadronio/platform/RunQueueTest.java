package io.hadronio.platform;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

class RunQueueTest {
    @Test
    void readsTheKernelsRunnableCountAndTheOnlineCpus() throws Exception {
        int cpus = RunQueue.cpus();
        // the machine's online CPUs: at least what this process may use
        assertTrue(cpus >= Runtime.getRuntime().availableProcessors(), "cpus " + cpus);
        int running = RunQueue.readRunning();
        // this thread is running while it asks
        assertTrue(running >= 1, "running " + running);
        String loadavg = Files.readString(Path.of("/proc/loadavg"));
        assertTrue(loadavg.split(" ")[3].contains("/"), loadavg);
    }

    @Test
    void crowdedKnowsWhenEveryCoreIsWanted() throws Exception {
        int cpus = RunQueue.cpus();
        // more busy threads than cores: the run queue must say crowded while they run
        Thread[] spinners = new Thread[cpus + 2];
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        for (int i = 0; i < spinners.length; i++) {
            spinners[i] = new Thread(() -> {
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            });
            spinners[i].setDaemon(true);
            spinners[i].start();
        }
        try {
            boolean seen = false;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!seen && System.nanoTime() - deadline < 0) {
                Thread.sleep(1);
                seen = RunQueue.crowded(System.nanoTime());
            }
            assertTrue(seen, "never crowded with " + spinners.length + " spinning threads on " + cpus + " cpus");
        } finally {
            stop.set(true);
            for (Thread t : spinners) {
                t.join();
            }
        }
    }
}
