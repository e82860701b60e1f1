package io.hadronio.it.selector;

import static io.hadronio.it.selector.SelectorPeers.client;
import static io.hadronio.it.selector.SelectorPeers.hadronio;
import static io.hadronio.it.selector.SelectorPeers.server;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Connected and idle, hadroNIO does not spin: in the default (adaptive) polling mode a
 * server blocked in {@code select()}, a client blocked in {@code select()} and a client
 * blocked in {@code read()} each use a small fraction of a core. (With
 * {@code -Dhadronio.polling=busy} they would spin; that is not asserted.)
 */
@Timeout(60)
class IdleCpuTest {
    // generous: a process that spins uses ~100 %; idle ones here measure well under 1 %
    private static final double BOUND = 0.10;

    private static Duration cpu(ChildJvm jvm) {
        return jvm.process().toHandle().info().totalCpuDuration()
                .orElseThrow(() -> new AssertionError("no CPU time for " + jvm.report()));
    }

    @Test
    void shouldNotSpinWhileConnectedPeersWaitInSelectOrRead() throws Exception {
        try (ChildJvm server = server(hadronio())) {
            int port = server.port();
            try (ChildJvm selecting = client(hadronio(), "hold", port, 1, 1, 100);
                 ChildJvm reading = client(hadronio(), "idle-reader", port)) {
                selecting.expect("HOLDING");
                reading.expect("IDLE");
                Map<String, ChildJvm> jvms = new LinkedHashMap<>();
                jvms.put("server (select)", server);
                jvms.put("client (select)", selecting);
                jvms.put("client (read)", reading);

                Thread.sleep(1000); // settle: start-up compilation and GC are not what we measure
                Map<String, Duration> before = new LinkedHashMap<>();
                jvms.forEach((name, jvm) -> before.put(name, cpu(jvm)));
                long start = System.nanoTime();
                Thread.sleep(3000);
                long wall = System.nanoTime() - start;
                StringBuilder report = new StringBuilder("idle CPU over " + wall / 1_000_000 + " ms:");
                Map<String, Double> share = new LinkedHashMap<>();
                jvms.forEach((name, jvm) -> {
                    double s = (double) cpu(jvm).minus(before.get(name)).toNanos() / wall;
                    share.put(name, s);
                    report.append(String.format(" %s %.2f %%;", name, 100 * s));
                });
                System.out.println(report);
                share.forEach((name, s) -> assertTrue(s < BOUND, report + " — " + name + " spins"));
                selecting.send("GO");
                selecting.expect("DONE");
            }
        }
    }
}
