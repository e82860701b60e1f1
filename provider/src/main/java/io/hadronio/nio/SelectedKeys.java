package io.hadronio.nio;

import java.nio.channels.SelectionKey;
import java.util.AbstractSet;
import java.util.Arrays;
import java.util.ConcurrentModificationException;
import java.util.Iterator;
import java.util.NoSuchElementException;

/**
 * A selector's selected-key set: the selector {@linkplain #put puts} keys in, applications see
 * it through {@link java.nio.channels.Selector#selectedKeys()} and may remove keys but not add
 * them ({@link #add} throws, as the JDK's does).
 *
 * <p>Why not a {@code HashSet}, as {@code sun.nio.ch.SelectorImpl}: a hash set allocates a node for
 * every key it is given, so every selection that finds a key ready allocated. Event loops that
 * select in a loop (Netty's, gRPC's) swap the JDK's set for an array by reflection, which cannot
 * apply to this class (they fall back to this set), so under hadroNIO they allocated per ready key
 * where on the JDK's provider they do not. Here the keys sit in an array and each key knows its
 * place ({@link HadronioSelectionKey#selectedIndex}): adding, looking up and removing allocate
 * nothing and cost no hashing; a removed key's place takes the last key. Iteration order is not
 * specified for a set, and this one's changes as keys leave.
 *
 * <p>Not thread-safe, as the JDK's set is not: the selector changes it under its lock and the
 * set's monitor; an application that iterates it while another thread selects synchronizes on
 * it. Iterators fail fast ({@link ConcurrentModificationException}) when the set changes other
 * than through them.
 */
final class SelectedKeys extends AbstractSet<SelectionKey> {
    private HadronioSelectionKey[] keys = new HadronioSelectionKey[16];
    private int size;
    // changes other than through an iterator's remove make that iterator fail
    private int modCount;

    /** Adds {@code key} (the selector's selection); false when it is in the set already. */
    boolean put(HadronioSelectionKey key) {
        if (indexOf(key) >= 0) {
            return false;
        }
        if (size == keys.length) {
            keys = Arrays.copyOf(keys, 2 * size);
        }
        key.selectedIndex = size;
        keys[size++] = key;
        modCount++;
        return true;
    }

    /** Whether {@code key} is in the set: its place holds it. */
    boolean holds(HadronioSelectionKey key) {
        return indexOf(key) >= 0;
    }

    private int indexOf(Object o) {
        if (o instanceof HadronioSelectionKey key) {
            int i = key.selectedIndex;
            if (i >= 0 && i < size && keys[i] == key) {
                return i;
            }
        }
        return -1;
    }

    // the last key takes the place of the one at i
    private void removeAt(int i) {
        HadronioSelectionKey gone = keys[i];
        gone.selectedIndex = -1;
        int last = --size;
        if (i != last) {
            HadronioSelectionKey moved = keys[last];
            keys[i] = moved;
            moved.selectedIndex = i;
        }
        keys[last] = null;
        modCount++;
    }

    @Override
    public int size() {
        return size;
    }

    @Override
    public boolean isEmpty() {
        return size == 0;
    }

    @Override
    public boolean contains(Object o) {
        return indexOf(o) >= 0;
    }

    @Override
    public boolean remove(Object o) {
        int i = indexOf(o);
        if (i < 0) {
            return false;
        }
        removeAt(i);
        return true;
    }

    @Override
    public void clear() {
        for (int i = 0; i < size; i++) {
            keys[i].selectedIndex = -1;
            keys[i] = null;
        }
        size = 0;
        modCount++;
    }

    /** Applications cannot add keys to a selected-key set. */
    @Override
    public boolean add(SelectionKey key) {
        throw new UnsupportedOperationException();
    }

    /**
     * Every key once. Its {@code remove} puts the last key in the removed key's place, which
     * has not been returned yet, so the next {@code next} returns it.
     */
    @Override
    public Iterator<SelectionKey> iterator() {
        return new Iterator<>() {
            private int cursor;
            private int last = -1;
            private int expectedModCount = modCount;

            @Override
            public boolean hasNext() {
                return cursor < size;
            }

            @Override
            public SelectionKey next() {
                if (modCount != expectedModCount) {
                    throw new ConcurrentModificationException();
                }
                if (cursor >= size) {
                    throw new NoSuchElementException();
                }
                last = cursor;
                return keys[cursor++];
            }

            @Override
            public void remove() {
                if (last < 0) {
                    throw new IllegalStateException();
                }
                if (modCount != expectedModCount) {
                    throw new ConcurrentModificationException();
                }
                removeAt(last);
                cursor = last;
                last = -1;
                expectedModCount = modCount;
            }
        };
    }
}
