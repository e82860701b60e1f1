package io.hadronio.ucx;

import java.util.Arrays;

/**
 * The outstanding request handles of one worker: an open-addressing set of non-zero
 * {@code long}s with linear probing and backward-shift deletion. Adding, removing and
 * looking up allocate nothing (the table only grows, when it is half full), so the
 * worker can check every handle it is given and cancel what is left at close.
 * Not thread-safe: the worker's caller serialises access.
 */
final class RequestTable {
    private long[] slots = new long[64];
    private int size;

    private static int hash(long key, int mask) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 32) & mask;
    }

    int size() {
        return size;
    }

    void add(long key) {
        assert key != 0;
        if ((size + 1) * 2 > slots.length) {
            grow();
        }
        int mask = slots.length - 1;
        int i = hash(key, mask);
        while (slots[i] != 0) {
            if (slots[i] == key) {
                return;
            }
            i = (i + 1) & mask;
        }
        slots[i] = key;
        size++;
    }

    boolean contains(long key) {
        if (key == 0) {
            return false;
        }
        final long[] s = slots;
        int mask = s.length - 1;
        int i = hash(key, mask);
        while (s[i] != 0) {
            if (s[i] == key) {
                return true;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    boolean remove(long key) {
        final long[] s = slots;
        int mask = s.length - 1;
        int i = hash(key, mask);
        while (s[i] != key) {
            if (s[i] == 0) {
                return false;
            }
            i = (i + 1) & mask;
        }
        // backward-shift the cluster after i so that lookups need no tombstones
        int hole = i;
        int j = (i + 1) & mask;
        while (s[j] != 0) {
            int home = hash(s[j], mask);
            boolean movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
            if (movable) {
                s[hole] = s[j];
                hole = j;
            }
            j = (j + 1) & mask;
        }
        s[hole] = 0;
        size--;
        return true;
    }

    /** A copy of the handles, for close. */
    long[] toArray() {
        return Arrays.stream(slots).filter(k -> k != 0).toArray();
    }

    private void grow() {
        long[] old = slots;
        slots = new long[old.length * 2];
        size = 0;
        for (long key : old) {
            if (key != 0) {
                add(key);
            }
        }
    }
}
