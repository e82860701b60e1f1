package io.hadronio.connection;

import io.hadronio.platform.LazyLogger;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.concurrent.TimeUnit;

/**
 * The resets of local streams ({@link LocalStreams}), in a table of shared memory that every
 * hadroNIO process of this user and network namespace maps: a Unix socket's close is never a
 * reset, so a side that closes abortively puts its connection's key here before its socket
 * closes, and the peer looks for it when it reads the end of the stream.
 *
 * <p>After the slots, one more word: the count of listeners that bound in the directory, so that a
 * client that found no listener for a destination need not look again until one did.
 *
 * <p>Why shared memory and not a file per reset: the look happens at the end of every local
 * stream, and an {@code unlink(2)} of a name that is not there cost a short connection's server
 * a quarter of its rate (29,500 against 22,000 connections/s with eight clients, profiled
 * pairs); a look here is a few loads. A key is a random 63-bit connection id and the side
 * that reset (never 0); a slot is the key and the time it was put; {@value #PROBES} slots from
 * the key's hash are tried. A key whose peer never looks (it closed first and did not see the
 * socket's hang-up in time) stays until a later mark finds it older than
 * {@value #STALE_MINUTES} minutes and takes its slot. With every slot of a window taken by a
 * live key (thousands of resets not yet read), a reset reads as an orderly end.
 */
final class ResetTable {
    private static final System.Logger LOG = LazyLogger.of(ResetTable.class);
    // 65,536 slots of 16 bytes: 1 MiB, mapped by every process that uses local streams
    private static final int SLOTS = 1 << 16;
    private static final long BYTES = SLOTS * 16L;
    // after the slots: the listeners' epoch, which every new listener of the directory counts up
    private static final long EPOCH = BYTES;
    private static final long FILE_BYTES = BYTES + 64;
    private static final int PROBES = 16;
    private static final long STALE_MINUTES = 10;
    private static final long STALE_MILLIS = TimeUnit.MINUTES.toMillis(STALE_MINUTES);
    // coordinates (MemorySegment, long offset)
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment table;
    private volatile boolean fullLogged;

    private ResetTable(MemorySegment table) {
        this.table = table;
    }

    /** Maps {@code file} (made, owner-only, if it is missing), which every process of the directory shares. */
    static ResetTable open(Path file) throws IOException {
        try (FileChannel ch = FileChannel.open(file,
                EnumSet.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")))) {
            if (ch.size() < FILE_BYTES) {
                // a zero at the last byte: the file reads as zeros (empty slots) up to it; two
                // processes doing this at once write the same zero
                ch.write(ByteBuffer.wrap(new byte[1]), FILE_BYTES - 1);
            }
            return new ResetTable(ch.map(FileChannel.MapMode.READ_WRITE, 0, FILE_BYTES, Arena.global()));
        }
    }

    /** The key of connection {@code id}'s reset by its client (or its server): never 0. */
    static long key(long id, boolean byClient) {
        long k = (id << 1) | (byClient ? 1 : 0);
        return k == 0 ? 2 : k;
    }

    private static int home(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h >>> 40) & (SLOTS - 1);
    }

    /** Puts {@code key}; false when every slot of its window holds a live key. */
    boolean put(long key) {
        long now = System.currentTimeMillis();
        int h = home(key);
        for (int i = 0; i < PROBES; i++) {
            long off = (long) ((h + i) & (SLOTS - 1)) * 16;
            long cur = (long) LONG.getVolatile(table, off);
            if (cur == 0 || isStale(off, now)) {
                if (LONG.compareAndSet(table, off, cur, key)) {
                    LONG.setVolatile(table, off + 8, now);
                    return true;
                }
            }
        }
        if (!fullLogged) {
            fullLogged = true;
            LOG.log(System.Logger.Level.WARNING, "hadroNIO: the local streams' reset table has no room near a key; "
                    + "an abortive close of a local stream reads as an orderly end to its peer");
        }
        return false;
    }

    // a slot whose key was put more than STALE_MINUTES ago (0: being put right now, not stale)
    private boolean isStale(long off, long now) {
        long t = (long) LONG.getVolatile(table, off + 8);
        return t != 0 && now - t > STALE_MILLIS;
    }

    /**
     * How many listeners of local streams have bound in this directory (all processes): a client
     * that found no listener for a destination looks again only once this changed.
     */
    long listenerEpoch() {
        return (long) LONG.getVolatile(table, EPOCH);
    }

    /** A listener bound: clients that found none look again. */
    void listenerBound() {
        LONG.getAndAdd(table, EPOCH, 1L);
    }

    /** Takes {@code key} if it is there. */
    boolean take(long key) {
        int h = home(key);
        for (int i = 0; i < PROBES; i++) {
            long off = (long) ((h + i) & (SLOTS - 1)) * 16;
            if ((long) LONG.getVolatile(table, off) == key) {
                return LONG.compareAndSet(table, off, key, 0L);
            }
        }
        return false;
    }
}
