package io.hadronio.connection;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The server's handshakes that received a client's hello and wait for its proof (FINISH),
 * by remote address, at most {@code max} per address. Proof is what makes a connection
 * worth holding on to: until then a hello costs the server a socket, a little heap and
 * a deadline, which one host must not be able to multiply. A host over its bound gets its
 * next hello answered with PLAIN, whatever other hosts do: that connection is plain TCP,
 * costs nothing beyond its socket, and a real client's connect still succeeds,
 * unaccelerated. A plain client (one that sends no hello) never counts, so a load
 * balancer opening many connections from one address is served as before. Reactor
 * thread only.
 *
 * @param <T> what is pending (a {@link ServerHandshake}; anything in a test)
 */
final class PendingHellos<T> {
    /**
     * Hellos one remote address may have waiting for their proof at once. A real client's
     * hello waits one round trip for its FINISH; eight is little for an attacker to hold. A
     * client host that opens more at once in that time (a connection pool) gets the rest plain.
     */
    static final int MAX_PER_ADDRESS = 8;

    private final int max;
    private final Map<InetAddress, List<T>> byAddress = new HashMap<>();
    private int size;

    PendingHellos(int max) {
        if (max < 1) {
            throw new IllegalArgumentException("max " + max);
        }
        this.max = max;
    }

    /** Counts {@code pending} against {@code from}; false (and nothing counted) when {@code from} is at its bound. */
    boolean admit(InetAddress from, T pending) {
        List<T> list = byAddress.computeIfAbsent(from, a -> new ArrayList<>(2));
        if (list.size() >= max) {
            return false;
        }
        list.add(pending);
        size++;
        return true;
    }

    /** {@code pending} no longer waits (proven, refused, plain, or gone); nothing if it was not counted. */
    void release(InetAddress from, T pending) {
        List<T> list = byAddress.get(from);
        if (list != null && list.remove(pending)) {
            size--;
            if (list.isEmpty()) {
                byAddress.remove(from);
            }
        }
    }

    /** What waits from {@code from} (a copy). */
    List<T> from(InetAddress from) {
        List<T> list = byAddress.get(from);
        return list == null ? List.of() : List.copyOf(list);
    }

    /** Everything that waits, all addresses. */
    int size() {
        return size;
    }

    /** Addresses with anything waiting: none are kept once their last hello stopped waiting. */
    int addresses() {
        return byAddress.size();
    }
}
