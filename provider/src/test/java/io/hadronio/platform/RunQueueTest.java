package io.hadronio.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
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
        // this process's affinity mask: at least one CPU, at most the online ones
        int allowed = RunQueue.allowedCpus();
        assertTrue(allowed >= 1 && allowed <= cpus, "allowed " + allowed + " of " + cpus);
        assertEquals(allowed < cpus, RunQueue.confined());
    }

    @Test
    void crowdedKnowsWhenEveryCoreIsWanted() throws Exception {
        assumeFalse(RunQueue.confined(), "this JVM may not run on every CPU: it is never crowded");
        int cpus = RunQueue.cpus();
        // more busy threads than cores: the run queue must say crowded while they run
        AtomicBoolean stop = new AtomicBoolean();
        Thread[] spinners = spin(cpus + 2, stop);
        try {
            boolean seen = false;
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (!seen && System.nanoTime() - deadline < 0) {
                Thread.sleep(1);
                seen = RunQueue.crowded(System.nanoTime());
            }
            assertTrue(seen, "never crowded with " + spinners.length + " spinning threads on " + cpus + " cpus");
        } finally {
            stop(spinners, stop);
        }
    }

    /**
     * A JVM that {@code taskset} confines to one CPU never reads itself as crowded, although its
     * own spinning threads make the machine-wide count exceed the cores: a process's threads on
     * other cores, or another process's, cannot use the core it would free by sleeping.
     */
    @Test
    void aProcessConfinedToOneCpuIsNeverCrowded() throws Exception {
        assumeTrue(RunQueue.cpus() > 1, "a machine of one CPU: every process may use all of it");
        File taskset = List.of("/usr/bin/taskset", "/bin/taskset").stream().map(File::new)
                .filter(File::canExecute).findFirst().orElse(null);
        assumeTrue(taskset != null, "no taskset(1) on this machine");
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(taskset.getPath(), "-c", "0", java, "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), ConfinedProbe.class.getName())
                .redirectErrorStream(true).start();
        assertTrue(p.waitFor(60, TimeUnit.SECONDS), "the probe JVM did not finish");
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertEquals(0, p.exitValue(), out);
        String last = out.substring(out.lastIndexOf('\n') + 1);
        // the count did exceed the cores (so an unconfined process would have been crowded) ...
        assertTrue(last.contains("sawMoreRunnableThanCpus=true"), out);
        // ... and the confined one knew it was confined and never said crowded
        assertTrue(last.contains("allowed=1 confined=true crowded=false"), out);
    }

    /** Run by {@link #aProcessConfinedToOneCpuIsNeverCrowded} in a JVM confined to one CPU. */
    public static final class ConfinedProbe {
        public static void main(String[] args) throws Exception {
            int cpus = RunQueue.cpus();
            AtomicBoolean stop = new AtomicBoolean();
            Thread[] spinners = spin(cpus + 2, stop);
            boolean crowded = false;
            boolean more = false;
            try {
                long deadline = System.nanoTime() + 2_000_000_000L;
                while (System.nanoTime() - deadline < 0) {
                    Thread.sleep(1);
                    more |= RunQueue.readRunning() > cpus;
                    crowded |= RunQueue.crowded(System.nanoTime());
                }
            } finally {
                stop(spinners, stop);
            }
            System.out.println("sawMoreRunnableThanCpus=" + more + " allowed=" + RunQueue.allowedCpus()
                    + " confined=" + RunQueue.confined() + " crowded=" + crowded);
        }
    }

    private static Thread[] spin(int count, AtomicBoolean stop) {
        Thread[] spinners = new Thread[count];
        for (int i = 0; i < spinners.length; i++) {
            spinners[i] = new Thread(() -> {
                while (!stop.get()) {
                    Thread.onSpinWait();
                }
            });
            spinners[i].setDaemon(true);
            spinners[i].start();
        }
        return spinners;
    }

    private static void stop(Thread[] spinners, AtomicBoolean stop) throws InterruptedException {
        stop.set(true);
        for (Thread t : spinners) {
            t.join();
        }
    }
}
