package io.hadronio.observe;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * What happened to the JVM's hadroNIO connections, counted where it happens: connections opened
 * and closed, fallbacks by {@link Fallback reason}, upgrades started, finished and abandoned,
 * handshake failures, resets, and bytes by {@link PathKind path}. One set for the JVM (the MBean
 * {@code io.hadronio:type=Provider} shows it).
 *
 * <p>Nothing here is touched by a read or a write: every count but the bytes is of an event of a
 * connection's life (lock-free {@link LongAdder}s), and the bytes are the connections' own plain
 * counts (each written by its reader or writer under the channel's lock), summed when read:
 * {@link #bytesIn()} adds the open connections' counts to those of the closed ones, which a
 * connection hands over when its channel closes ({@link #closed}).
 */
public final class Counters {
    private static final Counters JVM = new Counters();

    private final LongAdder opened = new LongAdder();
    private final LongAdder closed = new LongAdder();
    private final LongAdder[] fallbacks = adders(Fallback.values().length);
    private final LongAdder upgradesStarted = new LongAdder();
    private final LongAdder upgradesFinished = new LongAdder();
    private final LongAdder upgradesAbandoned = new LongAdder();
    private final LongAdder handshakeFailures = new LongAdder();
    private final LongAdder resets = new LongAdder();
    // the bytes of connections whose channels closed, by PathKind ordinal
    private final LongAdder[] closedIn = adders(PathKind.ALL.length);
    private final LongAdder[] closedOut = adders(PathKind.ALL.length);

    private Counters() {
    }

    /** The JVM's one set of counters. */
    public static Counters jvm() {
        return JVM;
    }

    private static LongAdder[] adders(int n) {
        LongAdder[] a = new LongAdder[n];
        for (int i = 0; i < n; i++) {
            a[i] = new LongAdder();
        }
        return a;
    }

    // ---- counted where it happens ------------------------------------------------------------------

    /** A connection opened: it joins the listing. */
    public void opened(ObservedConnection c) {
        OpenConnections.jvm().add(c);
        opened.increment();
    }

    /**
     * A connection's channel closed: it leaves the listing, and its bytes count as closed ones
     * (bytes a read still in progress takes after this are not counted). False when it had left already.
     */
    public boolean closed(ObservedConnection c) {
        if (!OpenConnections.jvm().remove(c)) {
            return false;
        }
        closed.increment();
        for (PathKind k : PathKind.ALL) {
            closedIn[k.ordinal()].add(c.bytesIn(k));
            closedOut[k.ordinal()].add(c.bytesOut(k));
        }
        return true;
    }

    /** A connection stays off UCX for {@code reason} (counted once per connection, by its owner). */
    public void fellBack(Fallback reason) {
        fallbacks[reason.ordinal()].increment();
    }

    /** An upgrade's session opened: the connection starts to move to UCX. */
    public void upgradeStarted() {
        upgradesStarted.increment();
    }

    /** Both directions of an upgraded connection are on UCX. */
    public void upgradeFinished() {
        upgradesFinished.increment();
    }

    /** An upgrade gave up before a direction switched: the connection stays on the kernel. */
    public void upgradeAbandoned() {
        upgradesAbandoned.increment();
    }

    /** An eager handshake failed (a client's connect, or a server's refused connection). */
    public void handshakeFailed() {
        handshakeFailures.increment();
    }

    /** A connection was reset (counted once per connection). */
    public void reset() {
        resets.increment();
    }

    // ---- read by the MBean and tests ---------------------------------------------------------------

    public long opened() {
        return opened.sum();
    }

    public long closed() {
        return closed.sum();
    }

    public long upgradesStarted() {
        return upgradesStarted.sum();
    }

    public long upgradesFinished() {
        return upgradesFinished.sum();
    }

    public long upgradesAbandoned() {
        return upgradesAbandoned.sum();
    }

    public long handshakeFailures() {
        return handshakeFailures.sum();
    }

    public long resets() {
        return resets.sum();
    }

    /** Fallbacks so far, by {@link Fallback#code()} (every code, 0 included: a scraper sees a stable set). */
    public Map<String, Long> fallbacks() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (Fallback f : Fallback.values()) {
            m.put(f.code(), fallbacks[f.ordinal()].sum());
        }
        return m;
    }

    /** Fallbacks so far for one reason. */
    public long fallbacks(Fallback reason) {
        return fallbacks[reason.ordinal()].sum();
    }

    /** Bytes read by applications so far, by {@link PathKind#label()}: closed connections' and open ones'. */
    public Map<String, Long> bytesIn() {
        return bytes(closedIn, true);
    }

    /** Bytes written by applications so far, by {@link PathKind#label()}: closed connections' and open ones'. */
    public Map<String, Long> bytesOut() {
        return bytes(closedOut, false);
    }

    private static Map<String, Long> bytes(LongAdder[] closedBytes, boolean in) {
        long[] sum = new long[PathKind.ALL.length];
        for (PathKind k : PathKind.ALL) {
            sum[k.ordinal()] = closedBytes[k.ordinal()].sum();
        }
        for (ObservedConnection c : OpenConnections.jvm().snapshot()) {
            for (PathKind k : PathKind.ALL) {
                sum[k.ordinal()] += in ? c.bytesIn(k) : c.bytesOut(k);
            }
        }
        Map<String, Long> m = new LinkedHashMap<>();
        for (PathKind k : PathKind.ALL) {
            m.put(k.label(), sum[k.ordinal()]);
        }
        return m;
    }

    /** Open connections by the path their bytes take now ({@link ConnectionInfo#getPath()}). */
    public Map<String, Long> openByPath() {
        Map<String, Long> m = new LinkedHashMap<>();
        for (PathKind k : PathKind.ALL) {
            m.put(k.label(), 0L);
        }
        for (ConnectionInfo i : OpenConnections.jvm().infos()) {
            m.merge(i.getPath(), 1L, Long::sum);
        }
        return m;
    }
}
