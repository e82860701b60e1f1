package io.hadronio.connection;

import io.hadronio.observe.Fallback;

import static io.hadronio.connection.RendezvousMessages.*;

import io.hadronio.platform.EPollSet;
import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executor;

/**
 * The upgrade sessions one {@link LocalRendezvous} runs ({@link UpgradeSession}): the
 * server's parked ones (authenticated, waiting for their TCP connection to be accepted),
 * the polled ones (a client's from its start, a server's once attached), the client's side
 * of the registration that opens a session, and their expiry after the handshake timeout.
 *
 * <p>The polled sessions' sockets are registered in an epoll set, whose fd the rendezvous
 * thread's pass polls with its other few sockets; the pass then serves the ready sessions
 * only. An upgraded connection keeps its session open until it closes (PathSwitch: its end
 * is news of a close), so 1,000 idle upgraded connections are 1,000 open sessions, and a
 * pass that polled all their sockets ({@code poll(2)}, rebuilt each pass) cost in proportion
 * to them, on the core of a server that serves those connections: every message of an
 * upgrade wave paid for all the sessions open.
 *
 * <p>Threads: everything here runs on the rendezvous thread, and the lists are that
 * thread's alone; {@link #upgrade} is the one entry from other threads, and hands its work
 * over to that thread. A session's own calls come through {@link UpgradeSession.Owner}.
 */
final class UpgradeSessions implements UpgradeSession.Owner {
    private final Secret secret;
    private final long expiryNanos;
    // see LocalRendezvous(Secret, int, int)
    private final int ownUid;
    // runs a task on the rendezvous thread
    private final Executor rendezvous;
    private final Thread thread;
    // the polled sessions' sockets, and fd -> its session; rendezvous thread only
    private final EPollSet polled;
    private UpgradeSession[] byFd = new UpgradeSession[64];
    // of the polled ones, clients' sessions still setting up (they have a deadline); and the
    // parked ones (authenticated, waiting for their connection); rendezvous thread only
    private final List<UpgradeSession> starting = new ArrayList<>();
    private final List<UpgradeSession> parked = new ArrayList<>();
    // client sessions waiting for their CHALLENGE: what they will register; rendezvous thread only
    private final Map<UpgradeSession, InetSocketAddress[]> pendingRegister = new HashMap<>();

    /**
     * @param rendezvous runs a task on {@code thread}, the rendezvous thread
     */
    UpgradeSessions(Secret secret, long expiryNanos, int ownUid, Executor rendezvous, Thread thread) throws IOException {
        this.secret = secret;
        this.expiryNanos = expiryNanos;
        this.ownUid = ownUid;
        this.rendezvous = rendezvous;
        this.thread = thread;
        this.polled = new EPollSet(64);
    }

    @Override
    public void execute(Runnable task) {
        rendezvous.execute(task);
    }

    @Override
    public boolean onThread() {
        return Thread.currentThread() == thread;
    }

    /** A parked session was attached: from now on its socket is polled. Rendezvous thread. */
    @Override
    public void parkedToOpen(UpgradeSession u) {
        parked.remove(u);
        poll(u);
    }

    /** An upgrade session ends (before its socket closes). Rendezvous thread. */
    @Override
    public void forget(UpgradeSession u) {
        parked.remove(u);
        starting.remove(u);
        int fd = u.socket.fd();
        if (fd >= 0 && fd < byFd.length && byFd[fd] == u) {
            byFd[fd] = null;
            try {
                polled.remove(fd);
            } catch (IOException e) {
                // (the socket closes next: its registration goes with it)
            }
        }
    }

    /** Polls {@code u}'s socket from now on; false (the session ended) when it cannot. */
    private boolean poll(UpgradeSession u) {
        int fd = u.socket.fd();
        try {
            if (fd < 0 || !polled.add(fd, EPollSet.EPOLLIN)) {
                u.end("its socket closed");
                return false;
            }
        } catch (IOException e) {
            u.end("cannot poll its socket: " + e.getMessage());
            return false;
        }
        if (fd >= byFd.length) {
            byFd = Arrays.copyOf(byFd, Math.max(fd + 1, 2 * byFd.length));
        }
        byFd[fd] = u;
        return true;
    }

    // ---- server side ----------------------------------------------------------------------------

    /**
     * Server: parks the session of a client that proved the key and was answered REGISTERED
     * on {@code socket}, until the connection's owner attaches to it. Rendezvous thread.
     */
    UpgradeSession park(UnixSeqpacket socket, Registration r) {
        UpgradeSession u = new UpgradeSession(this, socket, UpgradeSession.PARKED, System.nanoTime() + expiryNanos,
                r.clientAddress(), r.clientPort(), r.destinationPort());
        parked.add(u);
        return u;
    }

    /** True when {@code socket} is a parked session's. Rendezvous thread. */
    boolean owns(UnixSeqpacket socket) {
        for (UpgradeSession u : parked) {
            if (u.socket == socket) {
                return true;
            }
        }
        return false;
    }

    // ---- the rendezvous thread's pass -------------------------------------------------------------

    /** The epoll fd of the polled sessions: readable while one of them is (the pass polls it). */
    int epollFd() {
        return polled.fd();
    }

    /** How many sessions are polled (open ones, and clients' setting up). */
    int polledCount() {
        return polled.registered();
    }

    /** Serves every polled session whose socket is readable now (does not wait). */
    void serveReady() throws IOException {
        int n = polled.poll(0);
        for (int i = 0; i < n; i++) {
            int fd = polled.readyFd(i);
            // (null: a session served before it in this pass ended it)
            UpgradeSession u = fd < byFd.length ? byFd[fd] : null;
            if (u != null) {
                onReadable(u);
            }
        }
    }

    /** True while a parked session waits (its deadline is judged at every pass). */
    boolean hasParked() {
        return !parked.isEmpty();
    }

    /**
     * True while a polled session has a deadline (a client's still setting up); an attached
     * session has none and needs no tick: only its messages move it.
     */
    boolean anyOpenDeadline() {
        return !starting.isEmpty();
    }

    /** A polled session's socket is readable. */
    private void onReadable(UpgradeSession u) {
        if (u.state == UpgradeSession.OPEN) {
            u.onReadableOpen();
        } else {
            clientStep(u);
        }
    }

    /** Ends the sessions whose deadline passed before {@code now}. */
    void expire(long now) {
        // (backwards: a session that ends leaves its list)
        for (int i = parked.size() - 1; i >= 0; i--) {
            UpgradeSession u = i < parked.size() ? parked.get(i) : null;
            if (u != null && now - u.deadline > 0) {
                u.end("its connection was not accepted within " + expiryNanos / 1_000_000 + " ms");
            }
        }
        for (int i = starting.size() - 1; i >= 0; i--) {
            UpgradeSession u = i < starting.size() ? starting.get(i) : null;
            if (u != null && now - u.deadline > 0) {
                pendingRegister.remove(u);
                u.end("no answer within " + expiryNanos / 1_000_000 + " ms");
            }
        }
    }

    // ---- client side ----------------------------------------------------------------------------

    /** See {@link LocalRendezvous#upgrade}. Any thread. */
    void upgrade(InetSocketAddress destination, InetSocketAddress bound, UpgradeSession.Handler handler) {
        if (onThread()) {
            startUpgrade(destination, bound, handler);
        } else {
            execute(() -> startUpgrade(destination, bound, handler));
        }
    }

    private void startUpgrade(InetSocketAddress destination, InetSocketAddress bound, UpgradeSession.Handler h) {
        UnixSeqpacket s;
        try {
            s = UnixSeqpacket.connect(RendezvousListeners.name(destination.getPort()));
            if (s != null && ownUid >= 0 && s.peerUid() != ownUid) {
                s.close();
                s = null;
            }
        } catch (UnixSeqpacket.BacklogFullException e) {
            // a listener of ours, busy: not a reason to stay plain for good
            h.onListenerBusy();
            return;
        } catch (IOException e) {
            s = null;
        }
        if (s == null) {
            // (another user's listener too: with per-user keys it cannot be one of ours)
            h.onDeclined(Fallback.PEER_PLAIN);
            h.onEnd("no accelerated listener on port " + destination.getPort());
            return;
        }
        UpgradeSession u = new UpgradeSession(this, s, UpgradeSession.CLIENT_CHALLENGE,
                System.nanoTime() + expiryNanos, null, -1, -1);
        u.handler = h;
        // what REGISTER will name: the destination and our bound address
        pendingRegister.put(u, new InetSocketAddress[] {destination, bound});
        starting.add(u);
        if (poll(u)) {
            h.onStart(u);
        } else {
            pendingRegister.remove(u);
        }
    }

    /** The client's side of the registration, one message at a time. Rendezvous thread. */
    private void clientStep(UpgradeSession u) {
        try {
            byte[] m = u.socket.receive(MAX_MESSAGE);
            if (m == null) {
                if (u.socket.status() == UnixSeqpacket.EOF) {
                    pendingRegister.remove(u);
                    // a listener closes without an answer when our registration did not prove its key
                    u.handler.onDeclined(Fallback.OTHER_KEY);
                    u.end("the listener refused the upgrade");
                }
                return;
            }
            if (u.socket.truncated()) {
                throw new IOException("oversized rendezvous message");
            }
            if (u.state == UpgradeSession.CLIENT_CHALLENGE) {
                InetSocketAddress[] what = pendingRegister.remove(u);
                if (what == null || m.length != HEADER + HandshakeMessages.NONCE_LENGTH || !isHeader(m, CHALLENGE)) {
                    throw new IOException("not a rendezvous challenge");
                }
                u.nonce = java.util.Arrays.copyOfRange(m, HEADER, m.length);
                InetAddress client = what[1].getAddress().isAnyLocalAddress() ? null : what[1].getAddress();
                u.register = encodeRegister(secret, u.nonce, what[0].getAddress(), what[0].getPort(), client,
                        what[1].getPort(), REGISTER_UPGRADE, UPGRADE_LABEL);
                if (!u.socket.send(u.register)) {
                    throw new IOException("the listener does not take our registration");
                }
                u.state = UpgradeSession.CLIENT_REGISTERED;
                return;
            }
            if (m.length != HEADER + HandshakeMessages.MAC_LENGTH || !isHeader(m, REGISTERED)
                    || !Secret.matches(secret.mac(UPGRADED_LABEL, u.nonce, u.register),
                    java.util.Arrays.copyOfRange(m, HEADER, m.length))) {
                u.handler.onDeclined(Fallback.OTHER_KEY);
                throw new IOException("the listener did not prove the key");
            }
            u.state = UpgradeSession.OPEN;
            u.deadline = Long.MAX_VALUE;
            starting.remove(u);
            u.handler.onOpen(u);
        } catch (IOException | RuntimeException e) {
            pendingRegister.remove(u);
            u.end(e.getMessage());
        }
    }
}
