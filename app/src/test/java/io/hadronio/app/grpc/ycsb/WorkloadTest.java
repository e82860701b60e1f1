package io.hadronio.app.grpc.ycsb;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.EnumMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The YCSB workloads' operation mixes and key choosers: proportions, ranges, skew. */
class WorkloadTest {
    private static Map<Operation, Integer> mix(Workload w, int n) {
        Random random = new Random(1);
        Map<Operation, Integer> counts = new EnumMap<>(Operation.class);
        for (int i = 0; i < n; i++) {
            counts.merge(w.operation(random.nextDouble()), 1, Integer::sum);
        }
        return counts;
    }

    @Test
    void shouldDrawEachWorkloadsOperationsInItsProportions() {
        int n = 100_000;
        Map<Operation, Integer> a = mix(Workload.A, n);
        assertEquals(0.5, a.get(Operation.READ) / (double) n, 0.01);
        assertEquals(0.5, a.get(Operation.UPDATE) / (double) n, 0.01);
        assertEquals(Map.of(Operation.READ, n), mix(Workload.C, n));
        Map<Operation, Integer> e = mix(Workload.E, n);
        assertEquals(0.95, e.get(Operation.SCAN) / (double) n, 0.01);
        assertEquals(0.05, e.get(Operation.INSERT) / (double) n, 0.01);
        Map<Operation, Integer> f = mix(Workload.F, n);
        assertEquals(0.5, f.get(Operation.READ_MODIFY_WRITE) / (double) n, 0.01);
    }

    @Test
    void choosersShouldPickOnlyAcknowledgedRecordsAndZipfianShouldBeSkewed() {
        KeyGenerators.InsertCounter inserts = new KeyGenerators.InsertCounter(0);
        for (int i = 0; i < 1000; i++) {
            inserts.next();
        }
        // acknowledged out of order: readers see only the contiguous prefix
        inserts.acknowledge(1);
        assertEquals(0, inserts.acknowledged());
        for (int i = 0; i < 1000; i++) {
            inserts.acknowledge(i);
        }
        assertEquals(1000, inserts.acknowledged());
        for (Workload.Distribution d : Workload.Distribution.values()) {
            KeyGenerators.Chooser chooser = KeyGenerators.chooser(d, inserts);
            int[] hits = new int[1000];
            for (int i = 0; i < 100_000; i++) {
                long n = chooser.next();
                assertTrue(n >= 0 && n < 1000, d + " picked " + n);
                hits[(int) n]++;
            }
            int max = java.util.Arrays.stream(hits).max().orElseThrow();
            if (d == Workload.Distribution.UNIFORM) {
                assertTrue(max < 200, "uniform: a record picked " + max + " times in 100,000");
            } else {
                // zipfian (θ = 0.99) and latest: the most popular record takes several percent
                assertTrue(max > 2_000, d + ": the most popular record only " + max + " times in 100,000");
            }
        }
        // latest favours the newest record
        KeyGenerators.Chooser latest = KeyGenerators.chooser(Workload.Distribution.LATEST, inserts);
        int newest = 0;
        for (int i = 0; i < 10_000; i++) {
            newest += latest.next() == 999 ? 1 : 0;
        }
        assertTrue(newest > 500, "newest record picked " + newest + " times in 10,000");
    }

    @Test
    void keysShouldBeYcsbsHashedUserKeys() {
        assertTrue(KeyGenerators.key(0).startsWith("user"));
        assertTrue(KeyGenerators.fnv64(42) >= 0);
        assertTrue(!KeyGenerators.key(1).equals(KeyGenerators.key(2)));
    }
}
