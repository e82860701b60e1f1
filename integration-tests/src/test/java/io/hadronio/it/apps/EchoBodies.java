package io.hadronio.it.apps;

import java.util.Random;

/** The request bodies of the HTTP echo tests: every size that matters, each body different. */
public final class EchoBodies {
    /** One request of each: empty, tiny, around a page, around 64 KiB, 1 MiB and 10 MiB. */
    public static final int[] SIZES = {0, 1, 2, 100, 1000, 4095, 4096, 65_535, 65_536, 65_537, 1 << 20,
        (10 << 20) - 1, 10 << 20};

    private EchoBodies() {
    }

    /** The body of request {@code id}: {@code size} bytes that differ from request to request. */
    public static byte[] body(long id, int size) {
        byte[] b = new byte[size];
        new Random(id * 0x9E3779B97F4A7C15L).nextBytes(b);
        return b;
    }
}
