package io.hadronio.app.evaluate;

import java.util.ArrayList;
import java.util.List;

/** Message sizes: the powers of a base from 4 B to 1 MiB, and their names. */
final class Sizes {
    static final int SMALLEST = 4;
    static final int LARGEST = 1 << 20;

    private Sizes() {
    }

    /** 4, 4·base, 4·base², ... up to 1 MiB (base 2 or 4). */
    static List<Integer> powersOf(int base) {
        List<Integer> sizes = new ArrayList<>();
        for (long s = SMALLEST; s <= LARGEST; s *= base) {
            sizes.add((int) s);
        }
        return sizes;
    }

    /** {@code 4 B}, {@code 64 KiB}, {@code 1 MiB}, {@code 1 GiB}. */
    static String human(long bytes) {
        if (bytes >= 1L << 30 && bytes % (1L << 30) == 0) {
            return (bytes >> 30) + " GiB";
        }
        if (bytes >= 1 << 20 && bytes % (1 << 20) == 0) {
            return (bytes >> 20) + " MiB";
        }
        if (bytes >= 1 << 10 && bytes % (1 << 10) == 0) {
            return (bytes >> 10) + " KiB";
        }
        return bytes + " B";
    }
}
