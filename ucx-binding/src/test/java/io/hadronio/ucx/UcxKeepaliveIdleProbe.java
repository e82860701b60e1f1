package io.hadronio.ucx;

import com.sun.management.OperatingSystemMXBean;
import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * What UCX's keepalive costs an idle process: a worker with {@code N} endpoints in
 * {@link ErrorMode#PEER} (to a second worker of the same process) sleeps on its event fd
 * for five seconds; the probe counts how often it is woken and the CPU time used. For
 * {@code docs/crash-isolation.md}; not a test.
 *
 * <p>Arguments: {@code ENDPOINTS KEEPALIVE_MS} ({@code -1}: error mode NONE and no
 * {@link UcxContext.Builder#peerFailureDetection}; {@code 0}: PEER without keepalive).
 */
public final class UcxKeepaliveIdleProbe {
    private UcxKeepaliveIdleProbe() {
    }

    public static void main(String[] args) throws Exception {
        int endpoints = Integer.parseInt(args[0]);
        long keepaliveMillis = Long.parseLong(args[1]);
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP);
        if (keepaliveMillis >= 0) {
            builder.peerFailureDetection(Duration.ofMillis(keepaliveMillis));
        }
        ErrorMode mode = keepaliveMillis >= 0 ? ErrorMode.PEER : ErrorMode.NONE;
        try (UcxContext context = builder.open()) {
            UcxWorker idle = context.newWorker(ThreadMode.SINGLE, "idle");
            UcxWorker peer = context.newWorker(ThreadMode.SINGLE, "peer");
            for (int i = 0; i < endpoints; i++) {
                idle.connect(peer.address(), mode);
            }
            for (int i = 0; i < 1000; i++) {
                idle.progress();
                peer.progress();
            }
            ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
            OperatingSystemMXBean os = (OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
            long threadCpu = threads.getCurrentThreadCpuTime();
            long processCpu = os.getProcessCpuTime();
            long end = System.nanoTime() + 5_000_000_000L;
            int wakes = 0;
            while (System.nanoTime() < end) {
                while (idle.progress() != 0) {
                    // drain
                }
                if (idle.arm() && idle.waitForEvents(1000)) {
                    wakes++;
                }
            }
            threadCpu = threads.getCurrentThreadCpuTime() - threadCpu;
            processCpu = os.getProcessCpuTime() - processCpu;
            System.out.printf("endpoints=%d keepaliveMs=%d wakes/s=%.1f thread-cpu=%.2f%% process-cpu=%.2f%%%n",
                    endpoints, keepaliveMillis, wakes / 5.0, threadCpu / 5e9 * 100, processCpu / 5e9 * 100);
        }
    }
}
