package io.hadronio.connection;

import static io.hadronio.connection.RendezvousMessages.normalize;

import io.hadronio.platform.LazyLogger;
import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The ports one {@link LocalRendezvous} answers for, and their names: per TCP port
 * {@code P} the abstract socket {@code @hadronio/P}, the addresses the accelerated TCP
 * listeners of that port are bound to, who is told of a registration, and how many
 * accepted connections still wait for their upgrade session (a {@link Hold}). A port's
 * name whose socket another process holds is wanted, and bound by
 * {@link #retryWantedNames} as soon as it is free; one another rendezvous of this JVM
 * keeps only for upgrades is taken over at once.
 *
 * <p>Threads: {@link #listen}, {@link #unlisten}, {@link #hold} and {@link #release} come
 * from application threads (a server channel's bind and close, an accept); the rendezvous
 * thread takes the sockets to poll ({@link #addSockets}), looks ports up when it serves a
 * registration ({@link #toTell}, {@link #served}) and retries wanted names. The table is
 * guarded by {@code listeners}; binding a name takes {@code NAME_LOCK} first (never the
 * other way round), since it may take a name over from another rendezvous' table.
 */
public final class RendezvousListeners {
    // the rendezvous' logger (by name: a class literal would make this table depend on its rendezvous)
    private static final System.Logger LOG = LazyLogger.named("io.hadronio.connection.LocalRendezvous");

    /** What {@link LocalRendezvous#hold} gives and {@link LocalRendezvous#release} takes back: the port's listener as it was held. */
    public interface Hold {
    }

    /** What the table needs of the rendezvous thread that polls its sockets. */
    interface Owner {
        /** Wakes the rendezvous thread: the sockets to poll changed (any thread). */
        void wake();

        /**
         * After closing a socket the rendezvous thread may be polling: returns once that poll
         * has returned (see {@link LocalRendezvous}). Called under the table's lock.
         */
        void awaitPollWithoutClosedSocket();
    }

    private static final class Listener implements Hold {
        final int port;
        // null while another process (or a listener of this JVM on another address) holds the name
        UnixSeqpacket socket;
        // addresses of the TCP listeners on this port (the wildcard counts for all)
        final List<InetAddress> bound = new ArrayList<>();
        // told of every registration, so that someone accepts the connection that follows
        final List<Runnable> onRegistered = new ArrayList<>();
        // every address a listener of this port was bound to: an upgrade may still come for a
        // connection accepted before the listener closed
        final List<InetAddress> served = new ArrayList<>();
        // accepted connections still waiting for their upgrade session: the socket stays until they met it
        int holds;

        Listener(int port, UnixSeqpacket socket) {
            this.port = port;
            this.socket = socket;
        }
    }

    // this JVM's rendezvous names: port -> the table bound to it (providers in one JVM each
    // have their own rendezvous, and a name one of them only keeps for upgrades it gives up).
    // Binding a name takes NAME_LOCK, then a table's listeners (never the other way round)
    private static final Map<Integer, RendezvousListeners> NAMES = new ConcurrentHashMap<>();
    private static final Object NAME_LOCK = new Object();

    // the listen(2) backlog of a port's name (the kernel caps it at net.core.somaxconn). A client
    // starts the upgrades of all its connections at once when they all start carrying traffic at
    // once (1,000 of them, each at its second write): 128 left most of them refused and plain.
    // A client retries a full backlog (UpgradeSessions), so the size only spares retries. Tests
    // set it small, so that a wave of upgrades meets a full backlog
    static volatile int backlog = 4096;

    private final Owner rendezvous;
    // port -> its abstract socket; guarded by itself
    private final Map<Integer, Listener> listeners = new HashMap<>();

    RendezvousListeners(Owner rendezvous) {
        this.rendezvous = rendezvous;
    }

    /** The abstract socket name of the rendezvous for TCP port {@code port}. */
    static String name(int port) {
        return "hadronio/" + port;
    }

    /** See {@link LocalRendezvous#listen}. */
    void listen(InetAddress address, int port, Runnable onRegistered) {
        synchronized (NAME_LOCK) {
            synchronized (listeners) {
                Listener l = listeners.get(port);
                if (l == null) {
                    l = new Listener(port, null);
                    listeners.put(port, l);
                    if (!bindName(l)) {
                        // the rendezvous thread tries again at every pass, 100 ms apart (retryWantedNames)
                        LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: @" + name(port) + " is held by "
                                + "another process: local clients of port " + port + " use plain TCP until it "
                                + "is free");
                    }
                }
                l.bound.add(address);
                l.served.add(address);
                l.onRegistered.add(onRegistered);
            }
        }
        rendezvous.wake();
    }

    /**
     * Binds the port's abstract name for {@code l}; true when it has it. A name another
     * rendezvous of this JVM keeps only for upgrades of connections its closed listener
     * accepted is taken over (those connections stay plain): a new listener's clients
     * matter more than an old listener's late upgrades. Under NAME_LOCK and listeners.
     */
    private boolean bindName(Listener l) {
        try {
            UnixSeqpacket s = UnixSeqpacket.listen(name(l.port), backlog);
            if (s == null) {
                RendezvousListeners owner = NAMES.get(l.port);
                if (owner != null && owner != this && owner.giveUpName(l.port)) {
                    s = UnixSeqpacket.listen(name(l.port), backlog);
                }
            }
            if (s == null) {
                return false;
            }
            l.socket = s;
            NAMES.put(l.port, this);
            return true;
        } catch (IOException e) {
            LOG.log(System.Logger.Level.WARNING, "hadroNIO: cannot listen on @" + name(l.port)
                    + ": local clients of port " + l.port + " use plain TCP until it can (" + e.getMessage() + ")");
            return false;
        }
    }

    /** Another rendezvous of this JVM wants our name for {@code port}: gives it up when no listener of ours is bound there. Under NAME_LOCK. */
    private boolean giveUpName(int port) {
        synchronized (listeners) {
            Listener l = listeners.get(port);
            if (l == null || !l.bound.isEmpty()) {
                return false;
            }
            removeListener(l);
        }
        rendezvous.wake();
        return true;
    }

    /** Forgets a listener and frees its name (closed here: a new listener may bind it at once). Under listeners. */
    private void removeListener(Listener l) {
        listeners.remove(l.port);
        if (l.socket != null) {
            // the rendezvous thread skips a closed socket it still polled
            l.socket.close();
            l.socket = null;
            NAMES.remove(l.port, this);
            rendezvous.awaitPollWithoutClosedSocket();
        }
    }

    /** Rendezvous thread: tries again to bind the names another process held. */
    void retryWantedNames() {
        synchronized (NAME_LOCK) {
            synchronized (listeners) {
                for (Listener l : listeners.values()) {
                    if (l.socket == null && bindName(l)) {
                        LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: @" + name(l.port)
                                + " is ours now: local clients of port " + l.port + " are accelerated again");
                    }
                }
            }
        }
    }

    /** See {@link LocalRendezvous#unlisten}. */
    void unlisten(InetAddress address, int port, Runnable onRegistered) {
        synchronized (listeners) {
            Listener l = listeners.get(port);
            if (l == null || !l.bound.remove(address)) {
                return;
            }
            l.onRegistered.remove(onRegistered);
            if (!l.bound.isEmpty() || l.holds > 0) {
                // still listening on another address, or connections it accepted still wait for
                // their upgrade (it answers nothing but upgrades then: see LocalRendezvous#registerUpgrade)
                return;
            }
            removeListener(l);
        }
        rendezvous.wake();
    }

    /** See {@link LocalRendezvous#hold}. */
    Hold hold(int port) {
        synchronized (listeners) {
            Listener l = listeners.get(port);
            if (l == null || l.socket == null) {
                return null;
            }
            l.holds++;
            return l;
        }
    }

    /** See {@link LocalRendezvous#release}. */
    void release(Hold hold) {
        Listener l = (Listener) hold;
        synchronized (listeners) {
            if (--l.holds > 0 || !l.bound.isEmpty() || listeners.get(l.port) != l) {
                // still wanted, or its name was given up (giveUpName) or it is gone already
                return;
            }
            removeListener(l);
        }
        rendezvous.wake();
    }

    /**
     * Rendezvous thread, before its poll: adds the sockets of the names we hold to
     * {@code into}; true when a port still wants its name (it is retried 100 ms apart).
     */
    boolean addSockets(List<UnixSeqpacket> into) {
        boolean wanted = false;
        synchronized (listeners) {
            for (Listener l : listeners.values()) {
                if (l.socket != null) {
                    into.add(l.socket);
                } else {
                    wanted = true;
                }
            }
        }
        return wanted;
    }

    /**
     * Who is told of a registration for {@code destination}:{@code port} (a copy), or null when
     * no listener of the port is bound to that address now. Rendezvous thread.
     */
    List<Runnable> toTell(int port, InetAddress destination) {
        synchronized (listeners) {
            Listener l = listeners.get(port);
            return l != null && servesAddress(l.bound, destination) ? List.copyOf(l.onRegistered) : null;
        }
    }

    /**
     * True when a listener of {@code port} was bound to {@code destination} while this name was
     * ours (it may have closed since: connections it accepted still upgrade). Rendezvous thread.
     */
    boolean served(int port, InetAddress destination) {
        synchronized (listeners) {
            Listener l = listeners.get(port);
            return l != null && servesAddress(l.served, destination);
        }
    }

    /**
     * True when a TCP connection to {@code destination} reaches one of the listener's
     * sockets. The IPv4 wildcard reaches IPv4 destinations only (an IPv4-only JVM, or a
     * socket bound to 0.0.0.0): a plain server on [::1] of the same port is not ours. The
     * IPv6 wildcard of a dual-stack socket reaches both.
     */
    static boolean servesAddress(List<InetAddress> bound, InetAddress destination) {
        for (InetAddress a : bound) {
            if (a.isAnyLocalAddress()) {
                if (a instanceof Inet6Address || destination instanceof Inet4Address) {
                    return true;
                }
            } else if (normalize(a).equals(destination)) {
                return true;
            }
        }
        return false;
    }
}
