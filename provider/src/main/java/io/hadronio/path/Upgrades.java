package io.hadronio.path;

import io.hadronio.observe.Fallback;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.ConnectionServices;

import io.hadronio.connection.LocalRendezvous;
import io.hadronio.connection.RendezvousListeners;
import io.hadronio.connection.RendezvousMessages;
import io.hadronio.connection.UpgradeSession;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.PollSet;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Where connection upgrades start (docs/architecture.md, "Upgrade mode"). A client upgrades its own
 * local connections once they are open; a server meets each authenticated upgrade
 * session (the client's port names its TCP connection) with the connection its
 * application accepted from that port, in whichever order the two arrive: the session may
 * come while the connection still waits in the kernel's backlog, or long after
 * {@code accept()} returned it.
 */
public final class Upgrades implements LocalRendezvous.UpgradeListener {
    private final ConnectionServices runtime;
    private final long expiryNanos;
    // accepted local connections not met by a session yet, and sessions not met by a connection yet;
    // key: client port << 16 | server port. Guarded by this.
    private final Map<Integer, Accepted> accepted = new HashMap<>();
    private final Map<Integer, UpgradeSession> sessions = new HashMap<>();

    /** Upgrade sessions parked, waiting for their connection to be accepted (tests). */
    synchronized int parkedSessions() {
        return sessions.size();
    }
    private long nextPurge;

    private record Accepted(ConnectionLifecycle life, InetAddress client, RendezvousListeners.Hold hold) {
    }

    /**
     * Upgrades of {@code runtime}'s connections. Needs nothing of the runtime yet: a client's
     * connection may be made (a candidate) while the runtime still starts; its upgrade waits for
     * the start ({@link Upgrade#due}), and the server's side begins at {@link #listen}.
     */
    public Upgrades(ConnectionServices runtime) {
        this.runtime = runtime;
        this.expiryNanos = TimeUnit.MILLISECONDS.toNanos(runtime.config().handshakeMillis());
    }

    /** Takes this process's upgrade registrations at {@code rendezvous} (once, as the runtime's start ends). */
    public void listen(LocalRendezvous rendezvous) {
        rendezvous.setUpgradeListener(this);
        rendezvous.setHousekeeping(() -> {
            synchronized (this) {
                purge();
            }
        });
    }

    private static int key(int clientPort, int serverPort) {
        return clientPort << 16 | serverPort;
    }

    /**
     * Client: a channel about to connect to a local address may move to UCX once it carries
     * traffic; until its channel converts it ({@link ConnectionUpgrade#offer}) it is plain.
     */
    public void prepareClient(ConnectionLifecycle life) {
        life.upgrade().offer(Upgrade.client(runtime, life));
    }

    /** Client: the TCP connect completed; the upgrade may begin once it is due. */
    public void startClient(ConnectionLifecycle life, InetSocketAddress destination, InetSocketAddress bound) {
        ((Upgrade) life.upgrade().session()).start(destination, bound);
    }

    /**
     * Server: the application accepted a local connection (the lifecycle is open and plain);
     * it waits for its session as long as it is open, and converts when that comes. A client
     * begins its move once the connection has carried traffic ({@code hadronio.upgrade.writes}),
     * which a connection of a few requests a second reaches only after minutes: a wait bounded
     * by the handshake timeout kept such connections on the kernel for good. Waiting costs an
     * entry here (and, once the listener closed, its rendezvous name stays held); the channel
     * itself stays plain meanwhile.
     */
    public void accepted(ConnectionLifecycle life, InetSocketAddress client, int serverPort) {
        Upgrade upgrade = Upgrade.server(runtime, life);
        life.upgrade().offer(upgrade);
        int k = key(client.getPort(), serverPort);
        UpgradeSession s;
        synchronized (this) {
            purge();
            s = takeParked(k, client.getAddress());
            if (s == null) {
                awaitSession(life, client.getAddress(), k, serverPort);
                return;
            }
        }
        life.upgrade().convertThen(() -> s.attach(upgrade, () -> awaitSessionAgain(life, client.getAddress(), k, serverPort)));
    }

    /**
     * The session parked for client port and server port {@code k}, if it is live and from
     * {@code client}; a live one from another address stays parked. An ended one goes: it is a
     * session of an earlier connection from the same port, not purged yet. Under this.
     */
    private UpgradeSession takeParked(int k, InetAddress client) {
        UpgradeSession parked = sessions.remove(k);
        if (parked == null || parked.isEnded()) {
            return null;
        }
        if (!matches(parked.clientAddress(), client)) {
            sessions.put(k, parked);
            return null;
        }
        return parked;
    }

    /** The accepted connection waits for its session (under this). */
    private void awaitSession(ConnectionLifecycle life, InetAddress client, int k, int serverPort) {
        RendezvousListeners.Hold hold = runtime.peers().rendezvous().hold(serverPort);
        Accepted earlier = accepted.put(k, new Accepted(life, client, hold));
        if (earlier != null) {
            // an earlier connection from the same port (closed, or from another local
            // address) loses its place: its hold goes with it, or the name stays held
            drop(earlier);
        }
    }

    /**
     * The session met was an earlier connection's from the same client port, ended by its client
     * (UpgradeSession#attach): this connection waits for its own, if it is still open and no
     * other connection took its place meanwhile (rendezvous thread).
     */
    private void awaitSessionAgain(ConnectionLifecycle life, InetAddress client, int k, int serverPort) {
        if (life.state() != ConnectionLifecycle.OPEN) {
            return;
        }
        UpgradeSession s;
        synchronized (this) {
            s = takeParked(k, client);
            if (s == null) {
                if (!accepted.containsKey(k)) {
                    awaitSession(life, client, k, serverPort);
                }
                return;
            }
        }
        Upgrade upgrade = (Upgrade) life.upgrade().session();
        s.attach(upgrade, () -> awaitSessionAgain(life, client, k, serverPort));
    }

    @Override
    public void onRegistered(UpgradeSession session) {
        int k = key(session.clientPort(), session.destinationPort());
        Accepted a;
        synchronized (this) {
            purge();
            a = accepted.remove(k);
            if (a != null && resetByPeer(a.life)) {
                // an earlier connection from the same port that its client reset (its process died,
                // or it closed abortively) and the application has not read since: the port is free
                // again, and this session may be of a new connection from it, which waits in the
                // backlog. Attached here, the new connection's bytes would come out of the old one.
                // (A reset connection never upgrades, whichever session this is: it goes.)
                drop(a);
                a = null;
            }
            if (a == null || !matches(session.clientAddress(), a.client)
                    || a.life.state() != ConnectionLifecycle.OPEN) {
                // its connection waits in the backlog, or was not accepted yet: the session waits (parked)
                if (a != null) {
                    accepted.put(k, a);
                }
                sessions.put(k, session);
                return;
            }
        }
        if (a.hold != null) {
            runtime.peers().rendezvous().release(a.hold);
        }
        Upgrade upgrade = (Upgrade) a.life.upgrade().session();
        Accepted met = a;
        a.life.upgrade().convertThen(() -> session.attach(upgrade,
                () -> awaitSessionAgain(met.life, met.client, k, session.destinationPort())));
    }

    /**
     * The accepted connection's kernel socket was reset by its client (or closed both ways): what
     * an open lifecycle whose application has not read since cannot know yet.
     */
    private static boolean resetByPeer(ConnectionLifecycle life) {
        int fd = PlatformChannels.fd(life.tcp());
        if (fd < 0) {
            return true;
        }
        try {
            return (PollSet.pollOne(fd, PollSet.POLLIN, 0) & (PollSet.POLLERR | PollSet.POLLHUP)) != 0;
        } catch (IOException e) {
            return true;
        }
    }

    /** A registration names the client's bound address, or the wildcard (null) for any. */
    private static boolean matches(InetAddress registered, InetAddress actual) {
        return registered == null || registered.equals(RendezvousMessages.normalize(actual));
    }

    /** An accepted connection that no session will meet: it stays plain, and lets go of the listener's name. */
    private void drop(Accepted a) {
        if (!a.life.upgradeOff()) {
            a.life.fellBack(Fallback.PEER_PLAIN, "no upgrade session came from the client");
        }
        if (a.hold != null) {
            runtime.peers().rendezvous().release(a.hold);
        }
    }

    /** Drops the entries of accepted connections that closed before their session came (under this). */
    private void purge() {
        long now = System.nanoTime();
        if (now - nextPurge < 0) {
            return;
        }
        nextPurge = now + Math.min(expiryNanos / 4, TimeUnit.MILLISECONDS.toNanos(250));
        for (Iterator<Accepted> it = accepted.values().iterator(); it.hasNext(); ) {
            Accepted a = it.next();
            if (a.life.state() != ConnectionLifecycle.OPEN) {
                it.remove();
                drop(a);
            }
        }
        // parked sessions expire at the rendezvous by themselves; forget the ones that did
        sessions.values().removeIf(UpgradeSession::isEnded);
    }
}
