package io.hadronio.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.channels.SelectionKey;
import java.util.ArrayList;
import java.util.ConcurrentModificationException;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The selected-key set as a {@link Set}: what the JDK's offers applications, without a node per key. */
class SelectedKeysTest {
    private static List<HadronioSelectionKey> keys(int n) {
        List<HadronioSelectionKey> keys = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            keys.add(new HadronioSelectionKey(null, null, -1, 0));
        }
        return keys;
    }

    @Test
    void shouldHandEveryKeyOnceToAnIteratorThatRemovesEachAsItGoes() {
        // an event loop's pattern (Netty's fallback): next, remove, handle; more keys than the first array holds
        SelectedKeys set = new SelectedKeys();
        List<HadronioSelectionKey> keys = keys(40);
        keys.forEach(set::put);
        Set<SelectionKey> seen = new HashSet<>();
        for (Iterator<SelectionKey> it = set.iterator(); it.hasNext(); ) {
            SelectionKey k = it.next();
            assertTrue(seen.add(k), "a key handed over twice");
            it.remove();
            assertFalse(set.contains(k));
        }
        assertEquals(Set.copyOf(keys), seen);
        assertTrue(set.isEmpty());
    }

    @Test
    void shouldKeepTheKeysAnIteratorSkippedWhenItRemovesSome() {
        SelectedKeys set = new SelectedKeys();
        List<HadronioSelectionKey> keys = keys(10);
        keys.forEach(set::put);
        Set<SelectionKey> removed = new HashSet<>();
        Set<SelectionKey> seen = new HashSet<>();
        int i = 0;
        for (Iterator<SelectionKey> it = set.iterator(); it.hasNext(); i++) {
            SelectionKey k = it.next();
            assertTrue(seen.add(k));
            if (i % 3 == 0) {
                it.remove();
                removed.add(k);
            }
        }
        assertEquals(Set.copyOf(keys), seen);
        assertEquals(10 - removed.size(), set.size());
        for (HadronioSelectionKey k : keys) {
            assertEquals(!removed.contains(k), set.contains(k));
        }
    }

    @Test
    void shouldAddEachKeyOnceAndRemoveItByTheSet() {
        SelectedKeys set = new SelectedKeys();
        List<HadronioSelectionKey> keys = keys(3);
        assertTrue(set.put(keys.get(0)));
        assertFalse(set.put(keys.get(0)));
        set.put(keys.get(1));
        set.put(keys.get(2));
        assertEquals(3, set.size());
        assertTrue(set.remove(keys.get(0)));
        assertFalse(set.remove(keys.get(0)));
        assertFalse(set.remove("not a key"));
        assertFalse(set.contains(null));
        assertEquals(Set.of(keys.get(1), keys.get(2)), Set.copyOf(set));
        // a key put back after it left
        assertTrue(set.put(keys.get(0)));
        assertEquals(Set.copyOf(keys), Set.copyOf(set));
        set.clear();
        assertTrue(set.isEmpty());
        keys.forEach(k -> assertFalse(set.contains(k)));
        assertTrue(set.put(keys.get(2)));
        assertEquals(Set.of(keys.get(2)), Set.copyOf(set));
    }

    @Test
    void shouldRefuseAdditionsAsTheJdksSetDoes() {
        SelectedKeys set = new SelectedKeys();
        HadronioSelectionKey key = keys(1).get(0);
        assertThrows(UnsupportedOperationException.class, () -> set.add(key));
        assertThrows(UnsupportedOperationException.class, () -> set.addAll(List.of(key)));
        assertTrue(set.isEmpty());
    }

    @Test
    void shouldFailAnIteratorWhenTheSetChangesBehindItsBack() {
        SelectedKeys set = new SelectedKeys();
        List<HadronioSelectionKey> keys = keys(3);
        keys.forEach(set::put);
        Iterator<SelectionKey> it = set.iterator();
        SelectionKey first = it.next();
        assertThrows(IllegalStateException.class, () -> {
            Iterator<SelectionKey> fresh = set.iterator();
            fresh.remove();
        });
        set.remove(keys.get(2) == first ? keys.get(1) : keys.get(2));
        assertThrows(ConcurrentModificationException.class, it::next);
        Iterator<SelectionKey> done = set.iterator();
        done.next();
        done.next();
        assertFalse(done.hasNext());
        assertThrows(NoSuchElementException.class, done::next);
        // removeAll and retainAll go through the iterator
        set.put(keys.get(0));
        set.put(keys.get(1));
        set.put(keys.get(2));
        set.retainAll(List.of(keys.get(1)));
        assertEquals(Set.of(keys.get(1)), Set.copyOf(set));
    }
}
