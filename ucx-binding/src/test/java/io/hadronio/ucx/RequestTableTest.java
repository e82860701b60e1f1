package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link RequestTable} behaves like a {@code HashSet<Long>} of non-zero keys. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class RequestTableTest {
    // RequestTable's initial capacity and hash, copied to build keys that collide on purpose
    private static final int INITIAL_SLOTS = 64;

    private static int home(long key, int slots) {
        return (int) ((key * 0x9E3779B97F4A7C15L) >>> 32) & (slots - 1);
    }

    /** {@code count} distinct non-zero keys whose home slot in a table of {@code slots} is {@code slot}. */
    private static List<Long> collidingKeys(Random random, int slot, int slots, int count) {
        List<Long> keys = new ArrayList<>();
        while (keys.size() < count) {
            long key = random.nextLong() & ~7L; // request handles are aligned addresses
            if (key != 0 && home(key, slots) == slot && !keys.contains(key)) {
                keys.add(key);
            }
        }
        return keys;
    }

    private static void assertSameAs(Set<Long> model, RequestTable table) {
        assertEquals(model.size(), table.size());
        for (long key : model) {
            assertTrue(table.contains(key), () -> "lost key 0x" + Long.toHexString(key));
        }
        long[] expected = model.stream().mapToLong(Long::longValue).sorted().toArray();
        long[] actual = table.toArray();
        Arrays.sort(actual);
        assertArrayEquals(expected, actual);
    }

    @Test
    void shouldStartEmpty() {
        RequestTable table = new RequestTable();
        assertEquals(0, table.size());
        assertEquals(0, table.toArray().length);
        assertFalse(table.contains(0x7f00_1234_5678L));
        assertFalse(table.remove(0x7f00_1234_5678L));
    }

    @Test
    void shouldNeverContainZero() {
        RequestTable table = new RequestTable();
        table.add(8);
        assertFalse(table.contains(0));
    }

    @Test
    void shouldAddContainAndRemove() {
        RequestTable table = new RequestTable();
        table.add(0x1000);
        table.add(0x1000); // a duplicate is ignored
        assertEquals(1, table.size());
        assertTrue(table.contains(0x1000));
        assertTrue(table.remove(0x1000));
        assertFalse(table.contains(0x1000));
        assertFalse(table.remove(0x1000)); // double remove
        assertEquals(0, table.size());
    }

    @Test
    void shouldKeepCollidingKeysFindableAfterRemovingAnyOfThem() {
        Random random = new Random(1);
        // a cluster at the end of the table wraps around to slot 0: the hard case for backward shift
        for (int slot : new int[] {0, 17, INITIAL_SLOTS - 2, INITIAL_SLOTS - 1}) {
            List<Long> keys = collidingKeys(random, slot, INITIAL_SLOTS, 12);
            // plus keys homed just after the cluster, which the cluster displaces
            keys.addAll(collidingKeys(random, (slot + 1) % INITIAL_SLOTS, INITIAL_SLOTS, 5));
            keys.addAll(collidingKeys(random, (slot + 3) % INITIAL_SLOTS, INITIAL_SLOTS, 5));
            for (int victim = 0; victim < keys.size(); victim++) {
                RequestTable table = new RequestTable();
                Set<Long> model = new HashSet<>();
                for (long key : keys) {
                    table.add(key);
                    model.add(key);
                }
                assertSameAs(model, table);
                assertTrue(table.remove(keys.get(victim)));
                model.remove(keys.get(victim));
                assertSameAs(model, table);
                assertFalse(table.contains(keys.get(victim)));
                // remove the rest in another order
                for (int i = keys.size() - 1; i >= 0; i--) {
                    assertEquals(model.remove(keys.get(i)), table.remove(keys.get(i)));
                    assertSameAs(model, table);
                }
            }
        }
    }

    @Test
    void shouldGrowAndKeepEveryKey() {
        RequestTable table = new RequestTable();
        Set<Long> model = new HashSet<>();
        Random random = new Random(2);
        for (int i = 0; i < 10_000; i++) {
            long key = (random.nextLong() & ~63L) | 64;
            table.add(key);
            model.add(key);
        }
        assertSameAs(model, table);
        for (long key : new ArrayList<>(model)) {
            assertTrue(table.remove(key));
        }
        assertEquals(0, table.size());
        assertEquals(0, table.toArray().length);
    }

    @Test
    void shouldHandleSequentialAddresses() {
        // requests allocated from one UCX memory pool: close, equally spaced addresses
        RequestTable table = new RequestTable();
        Set<Long> model = new HashSet<>();
        for (long key = 0x7f12_3400_0000L; model.size() < 3000; key += 192) {
            table.add(key);
            model.add(key);
        }
        assertSameAs(model, table);
        for (int i = 0; i < 3000; i += 2) { // every other one
            long key = 0x7f12_3400_0000L + 192L * i;
            assertTrue(model.remove(key));
            assertTrue(table.remove(key));
        }
        assertEquals(1500, table.size());
        assertSameAs(model, table);
    }

    @ParameterizedTest
    @ValueSource(longs = {11, 12, 13, 14, 15})
    void shouldBehaveLikeAHashSetUnderRandomOperations(long seed) {
        Random random = new Random(seed);
        // a small universe, so that adds repeat and removes hit; many keys share home slots
        List<Long> universe = new ArrayList<>();
        for (int slot = 0; slot < 8; slot++) {
            universe.addAll(collidingKeys(random, slot * 8, INITIAL_SLOTS, 20));
        }
        universe.addAll(collidingKeys(random, INITIAL_SLOTS - 1, INITIAL_SLOTS, 20));
        while (universe.size() < 600) {
            universe.add((random.nextLong() & ~7L) | 8);
        }
        RequestTable table = new RequestTable();
        Set<Long> model = new HashSet<>();
        for (int op = 0; op < 50_000; op++) {
            long key = universe.get(random.nextInt(universe.size()));
            int kind = random.nextInt(10);
            if (kind < 4 + (op / 10_000) % 2 * 2) { // phases that fill and phases that drain
                table.add(key);
                model.add(key);
            } else if (kind < 8) {
                assertEquals(model.remove(key), table.remove(key), "remove 0x" + Long.toHexString(key));
            } else {
                assertEquals(model.contains(key), table.contains(key), "contains 0x" + Long.toHexString(key));
            }
            assertEquals(model.size(), table.size());
            if (op % 997 == 0) {
                assertSameAs(model, table);
            }
        }
        assertSameAs(model, table);
    }
}
