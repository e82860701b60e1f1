package io.hadronio.connection;

import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * This host's addresses (in this network namespace): which destinations are local, and so
 * may be one of our listeners behind the rendezvous. Needs no key and no thread: a channel
 * asks it at its {@code connect}, before the runtime's start has finished.
 */
public final class LocalAddresses {
    private static final long REFRESH_NANOS = TimeUnit.SECONDS.toNanos(1);

    // this host's addresses (normalised), refreshed at most once a second on a miss
    private volatile Set<InetAddress> local = Set.of();
    private volatile long refreshed = System.nanoTime() - 2 * REFRESH_NANOS;

    /** True when {@code address} is an address of this host (in this network namespace). */
    public boolean isLocal(InetAddress address) {
        if (address.isLoopbackAddress() || address.isAnyLocalAddress()) {
            return true;
        }
        InetAddress a = RendezvousMessages.normalize(address);
        if (local.contains(a)) {
            return true;
        }
        long now = System.nanoTime();
        if (now - refreshed > REFRESH_NANOS) {
            refreshed = now;
            Set<InetAddress> fresh = new HashSet<>();
            try {
                for (NetworkInterface nif : NetworkInterface.networkInterfaces().toList()) {
                    nif.inetAddresses().forEach(x -> fresh.add(RendezvousMessages.normalize(x)));
                }
            } catch (SocketException e) {
                return false;
            }
            local = Set.copyOf(fresh);
            return local.contains(a);
        }
        return false;
    }
}
