package io.hadronio.app.grpc.ycsb;

import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * YCSB's key choosers, after the algorithms of YCSB's generators: record numbers are turned
 * into keys by {@link #key} ({@code "user" + FNV-1a-64(n)}: inserts in order, keys scattered),
 * and picked by a zipfian (Gray et al., "Quickly generating billion-record synthetic
 * databases", θ = 0.99, scrambled over the records as YCSB's ScrambledZipfianGenerator),
 * skewed-latest or uniform distribution over the records inserted and acknowledged so far.
 */
public final class KeyGenerators {
    static final double ZIPFIAN_CONSTANT = 0.99;
    // YCSB's scrambled zipfian draws from 10^10 items and hashes onto the records; its zeta
    private static final long SCRAMBLED_ITEMS = 10_000_000_000L;
    private static final double SCRAMBLED_ZETAN = 26.46902820178302;

    private KeyGenerators() {
    }

    /** YCSB's key of record {@code n} (insertorder=hashed). */
    public static String key(long n) {
        return "user" + fnv64(n);
    }

    /** FNV-1a over the 8 bytes of {@code value}, made non-negative (YCSB's Utils.fnvhash64). */
    static long fnv64(long value) {
        long hash = 0xCBF29CE484222325L;
        for (int i = 0; i < 8; i++) {
            hash ^= value & 0xff;
            value >>>= 8;
            hash *= 1099511628211L;
        }
        return Math.abs(hash);
    }

    /** Zipfian draws over [0, items), favouring small numbers; items may grow (zeta is extended). */
    static final class Zipfian {
        private final double theta = ZIPFIAN_CONSTANT;
        private final double alpha = 1.0 / (1.0 - theta);
        private final double zeta2theta = zeta(0, 2, 0);
        private long countForZeta;
        private double zetan;

        Zipfian(long items) {
            this(items, zeta(0, items, 0));
        }

        Zipfian(long items, double zetan) {
            this.countForZeta = items;
            this.zetan = zetan;
        }

        private static double zeta(long from, long to, double initial) {
            double sum = initial;
            for (long i = from; i < to; i++) {
                sum += 1 / Math.pow(i + 1, ZIPFIAN_CONSTANT);
            }
            return sum;
        }

        synchronized long next(long items) {
            if (items > countForZeta) {
                zetan = zeta(countForZeta, items, zetan);
                countForZeta = items;
            }
            double eta = (1 - Math.pow(2.0 / items, 1 - theta)) / (1 - zeta2theta / zetan);
            double u = ThreadLocalRandom.current().nextDouble();
            double uz = u * zetan;
            if (uz < 1.0) {
                return 0;
            }
            if (uz < 1.0 + Math.pow(0.5, theta)) {
                return Math.min(1, items - 1);
            }
            return Math.min(items - 1, (long) (items * Math.pow(eta * u - eta + 1, alpha)));
        }
    }

    /** Record numbers handed to inserts, and the highest below which every insert has completed. */
    static final class InsertCounter {
        private final AtomicLong next;
        private final TreeSet<Long> done = new TreeSet<>();
        private volatile long acknowledged;

        InsertCounter(long start) {
            next = new AtomicLong(start);
            acknowledged = start;
        }

        long next() {
            return next.getAndIncrement();
        }

        /** Record {@code n} is stored: readers may pick it once every record before it is too. */
        synchronized void acknowledge(long n) {
            done.add(n);
            long limit = acknowledged;
            while (done.remove(limit)) {
                limit++;
            }
            acknowledged = limit;
        }

        /** How many records readers may pick from: [0, acknowledged). */
        long acknowledged() {
            return acknowledged;
        }
    }

    /** Picks the record number of a read, update, scan or read-modify-write. */
    interface Chooser {
        long next();
    }

    static Chooser chooser(Workload.Distribution distribution, InsertCounter inserts) {
        return switch (distribution) {
            case UNIFORM -> () -> ThreadLocalRandom.current().nextLong(inserts.acknowledged());
            case ZIPFIAN -> {
                Zipfian zipfian = new Zipfian(SCRAMBLED_ITEMS, SCRAMBLED_ZETAN);
                yield () -> fnv64(zipfian.next(SCRAMBLED_ITEMS)) % inserts.acknowledged();
            }
            case LATEST -> {
                Zipfian zipfian = new Zipfian(Math.max(1, inserts.acknowledged()));
                yield () -> {
                    long max = inserts.acknowledged();
                    return max - 1 - zipfian.next(max);
                };
            }
        };
    }
}
