package io.hadronio.connection;

import static io.hadronio.connection.RendezvousMessages.*;

import io.hadronio.platform.EventFd;
import io.hadronio.platform.LazyLogger;
import io.hadronio.platform.PollSet;
import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * How two hadroNIO processes on one host know of each other before their TCP
 * connection exists, so that neither waits to find out and neither sends our protocol
 * to a peer that does not speak it.
 *
 * <p>Every accelerated listener on TCP port {@code P} also listens on the abstract Unix
 * socket {@code @hadronio/P} (per network namespace, gone with the process: a crashed
 * server leaves nothing behind, and a plain server that takes the port over later has
 * no such socket). A connecting client whose destination is an address of this host
 * asks there, before its TCP connect, to be expected:
 * <pre>
 *  client                                          server (rendezvous thread)
 *    connect @hadronio/P              ->
 *                                     <-  CHALLENGE (nonce)
 *    REGISTER (destination, client's bound address and port, MAC)  ->
 *                                     <-  REGISTERED (MAC)  or  NOT_HERE
 *  MAC = HMAC(key, "hadroNIO/2 register"   | nonce | REGISTER without MAC)
 *        HMAC(key, "hadroNIO/2 registered" | nonce | REGISTER)
 * </pre>
 * Only then does the client connect over TCP, from the port it registered, and speak
 * the handshake ({@link HandshakeMessages}) there; the server, which already knows that
 * port, expects it. A TCP connection from any other port, or from another host, is
 * plain TCP at once: nothing is read from it and nothing written to it.
 *
 * <p>What makes this safe: a registration needs the key (a stranger cannot make the
 * server expect our protocol from a plain client), and so does the answer (a process
 * that squats the name without the key cannot make a client speak our protocol to a
 * plain server: the client sees no valid answer and stays plain). A registration names
 * the client's bound port, which no other process can hold at the same time, and
 * expires after the handshake timeout. The destination address must be one the
 * listener is bound to, so a plain server on another address of the same port is never
 * mistaken for ours. Registrations of one port are counted, and each is claimed by one
 * accepted connection: a client that resets its connection before the server accepts it
 * frees the port at once, and the next client the kernel gives that port may register it
 * while the dead connection still waits in the accept queue (with one registration per
 * port, the dead connection took it, and the live client's handshake reached the
 * application as plain data).
 *
 * <p>One name per port and network namespace: a closed listener's name stays while
 * connections it accepted wait for their upgrade (up to the handshake timeout). A new
 * listener of that port in this JVM takes it over at once; one whose name another process
 * holds binds it as soon as it is free, and until then its local clients use plain TCP.
 *
 * <p>Threads: one rendezvous thread ({@code hadronio-rendezvous}) polls every socket here and
 * runs its pass in a fixed order: queued tasks ({@link #execute}), name retries, one poll,
 * then new clients (a CHALLENGE each), their REGISTERs, the upgrade sessions that are ready
 * (all of them behind one epoll fd), expiry, housekeeping. The incoming clients' sessions are
 * that thread's alone, and so are the upgrade sessions ({@link UpgradeSessions}). The port
 * table ({@link RendezvousListeners}) changes from application threads under its lock; the
 * expected registrations are written by this thread and claimed by accepting threads
 * ({@link #claim}). The client's {@link #register} runs on the caller's thread and blocks it.
 */
public final class LocalRendezvous {
    private static final System.Logger LOG = LazyLogger.of(LocalRendezvous.class);
    // a session that has not registered within this long is dropped
    private static final long SESSION_NANOS = TimeUnit.SECONDS.toNanos(2);

    private final Secret secret;
    private final long expiryNanos;
    // see the constructor
    private final int ownUid;
    // client (address or wildcard, port) -> its unclaimed registrations: how many, and the
    // deadline of the last (replaced atomically: merged by the rendezvous thread, taken by accepts)
    private final Map<Registration, Expected> expected = new ConcurrentHashMap<>();

    /** A port's unclaimed registrations. Immutable: a change replaces it. */
    private record Expected(int count, long deadline) {
        /** These and {@code later}'s, expected until {@code later}'s deadline. */
        Expected plus(Expected later) {
            return new Expected(count + later.count, later.deadline);
        }

        /** One fewer, or null (no entry) when this was the last. */
        Expected minusOne() {
            return count > 1 ? new Expected(count - 1, deadline) : null;
        }
    }
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final EventFd wake;
    private final Thread thread;
    // the ports we answer for, their names and listeners (any thread, under its lock)
    private final RendezvousListeners listeners;
    // rendezvous thread only
    private final List<Session> sessions = new ArrayList<>();
    private final PollSet pollSet = new PollSet(16);
    // upgrade sessions, parked and open (rendezvous thread only)
    private final UpgradeSessions upgrades;
    // told of every authenticated upgrade registration (null: this process does not upgrade connections)
    private volatile UpgradeListener upgradeListener;
    // runs on the rendezvous thread at every pass (setHousekeeping)
    private volatile Runnable housekeeping;

    // an incoming client between our CHALLENGE and its REGISTER (rendezvous thread)
    private record Session(UnixSeqpacket socket, byte[] nonce, long deadline) {
    }

    public LocalRendezvous(Secret secret, int handshakeMillis) throws IOException {
        this(secret, handshakeMillis, -1);
    }

    /**
     * @param ownUid with the per-user key, this process's user id: a rendezvous socket held
     *               by another user is not asked at all; -1 when the key may be shared
     *               across users ({@code hadronio.secret.file} set)
     */
    public LocalRendezvous(Secret secret, int handshakeMillis, int ownUid) throws IOException {
        this.secret = secret;
        this.ownUid = ownUid;
        this.expiryNanos = TimeUnit.MILLISECONDS.toNanos(handshakeMillis);
        this.wake = new EventFd();
        this.listeners = new RendezvousListeners(new RendezvousListeners.Owner() {
            @Override
            public void wake() {
                wake.signal();
            }

            @Override
            public void awaitPollWithoutClosedSocket() {
                LocalRendezvous.this.awaitPollWithoutClosedSocket();
            }
        });
        this.thread = new Thread(this::run, "hadronio-rendezvous");
        this.thread.setDaemon(true);
        try {
            this.upgrades = new UpgradeSessions(secret, expiryNanos, ownUid, this::execute, thread);
        } catch (IOException e) {
            wake.close();
            throw e;
        }
        this.thread.start();
    }

    /** The server's side of connection upgrades: told of each authenticated upgrade registration. */
    public interface UpgradeListener {
        /**
         * A local client proved the key and asks to upgrade its TCP connection from
         * {@code session.clientPort()} to {@code session.destinationPort()}. The session is
         * parked until {@link UpgradeSession#attach} (or its deadline, the handshake timeout).
         * Rendezvous thread: must not block.
         */
        void onRegistered(UpgradeSession session);
    }

    /** Lets this process's listeners take upgrade registrations (null: refuse them). */
    public void setUpgradeListener(UpgradeListener listener) {
        this.upgradeListener = listener;
    }

    /** Runs {@code task} on the rendezvous thread at least once a second (expiry of upgrade state). */
    public void setHousekeeping(Runnable task) {
        this.housekeeping = task;
    }

    // ---- server side ----------------------------------------------------------------------------

    /**
     * An accelerated TCP listener is bound to {@code address}:{@code port}: answer
     * registrations for it from now on (the abstract socket is bound before this returns,
     * so a client that connects right after the server's bind finds it).
     */
    public void listen(InetAddress address, int port, Runnable onRegistered) {
        listeners.listen(address, port, onRegistered);
    }

    /** The listener bound to {@code address}:{@code port} closed. */
    public void unlisten(InetAddress address, int port, Runnable onRegistered) {
        listeners.unlisten(address, port, onRegistered);
    }

    /**
     * A connection accepted on {@code port} waits for its upgrade session: the port's
     * rendezvous socket stays open until {@link #release} even if the listener closes
     * (a server that accepts one connection and closes its listener is common).
     */
    public RendezvousListeners.Hold hold(int port) {
        return listeners.hold(port);
    }

    /** Ends a {@link #hold}: {@code hold} is what it returned. */
    public void release(RendezvousListeners.Hold hold) {
        listeners.release(hold);
    }

    /**
     * Called on accepting a TCP connection from {@code remote} on {@code localPort}: true
     * (once) when that client registered, i.e. it is one of ours and speaks first.
     */
    public boolean claim(InetSocketAddress remote, int localPort) {
        if (expected.isEmpty()) {
            return false;
        }
        long now = System.nanoTime();
        Expected e = take(new Registration(normalize(remote.getAddress()), remote.getPort(), localPort));
        if (e == null) {
            e = take(new Registration(null, remote.getPort(), localPort));
        }
        return e != null && now - e.deadline() < 0;
    }

    /**
     * Takes one of {@code r}'s registrations: what there was before, or null when none. (A loop
     * rather than {@code computeIfPresent}, which would not say what it took.)
     */
    private Expected take(Registration r) {
        while (true) {
            Expected e = expected.get(r);
            if (e == null) {
                return null;
            }
            Expected left = e.minusOne();
            if (left == null ? expected.remove(r, e) : expected.replace(r, e, left)) {
                return e;
            }
        }
    }

    /** True while a registration for connections to {@code port} is unclaimed. */
    public boolean expects(int port) {
        if (expected.isEmpty()) {
            return false;
        }
        for (Registration r : expected.keySet()) {
            if (r.destinationPort() == port) {
                return true;
            }
        }
        return false;
    }

    /** Registrations not claimed by an accepted connection yet (a diagnostic; they expire). */
    public int expectedRegistrations() {
        int n = 0;
        for (Expected e : expected.values()) {
            n += e.count();
        }
        return n;
    }

    /** Runs a task on the rendezvous thread, which owns every session. */
    public void execute(Runnable task) {
        tasks.add(task);
        wake.signal();
    }

    /**
     * After closing a socket the rendezvous thread may be polling: returns once that poll has
     * returned. A thread inside poll() holds a reference to every socket it polls, so the kernel
     * keeps a closed one, and with it its name, until the poll returns; a new listener binding
     * the name meanwhile would find it taken and wait for its 100-ms retry, and a client
     * registering then would reach the dying socket and be refused (regression:
     * RendezvousNameTest#shouldHandANameKeptForUpgradesToANewListenerOfThisJvm). The poll ends at
     * once: we wake it. Bounded, in case the thread is gone.
     */
    private void awaitPollWithoutClosedSocket() {
        if (Thread.currentThread() == thread) {
            return;
        }
        long started = pollsStarted;
        if (pollsEnded >= started) {
            return;
        }
        wake.signal();
        long deadline = System.nanoTime() + 100_000_000;
        while (pollsEnded < started && System.nanoTime() - deadline < 0) {
            java.util.concurrent.locks.LockSupport.parkNanos(50_000);
        }
    }

    // polls of the rendezvous thread begun and returned (awaitPollWithoutClosedSocket, passes)
    private volatile long pollsStarted;
    private volatile long pollsEnded;
    // the fds the last pass polled, and the upgrade sessions behind them (lastPollSize)
    private volatile int lastPollSize;
    private volatile int lastPolledUpgradeSessions;
    // what a pass polls besides its eventfd and the upgrade sessions' epoll fd; rendezvous thread only
    private final List<UnixSeqpacket> polledListeners = new ArrayList<>();
    private final List<Session> polledSessions = new ArrayList<>();

    /**
     * Passes the rendezvous thread has made (a diagnostic, and for tests): with nothing
     * setting up, a pass every second; a message, a task or a new client wakes it.
     */
    public long passes() {
        return pollsEnded;
    }

    /**
     * How many fds the last pass polled (a diagnostic, and for tests): its eventfd, the
     * listeners' names, clients between CHALLENGE and REGISTER, and one for all the upgrade
     * sessions, however many are open.
     */
    public int lastPollSize() {
        return lastPollSize;
    }

    /** How many upgrade sessions the last pass polled (a diagnostic, and for tests). */
    public int lastPolledUpgradeSessions() {
        return lastPolledUpgradeSessions;
    }

    private void run() {
        while (true) {
            try {
                pass();
            } catch (Throwable t) {
                LOG.log(System.Logger.Level.ERROR, "hadroNIO rendezvous: unexpected error", t);
                try {
                    Thread.sleep(10);
                } catch (InterruptedException e) {
                    return;
                }
            }
        }
    }

    /**
     * One pass: tasks, a poll of the wake-up fd, the listeners, the sessions and the upgrade
     * sessions, what came, the deadlines. A method of its own so that the JIT compiles it: the loop
     * turns once per connection's message or per 100 ms, too seldom to reach the backedge count of
     * an on-stack compilation for minutes, and its body ran in the interpreter all that time.
     */
    private void pass() throws java.io.IOException {
        Runnable task;
        while ((task = tasks.poll()) != null) {
            task.run();
        }
        long now = System.nanoTime();
        pollSet.clear();
        pollSet.add(wake.fd(), PollSet.POLLIN);
        listeners.retryWantedNames();
        polledListeners.clear();
        boolean wanted = listeners.addSockets(polledListeners);
        for (UnixSeqpacket l : polledListeners) {
            pollSet.add(l.fd(), PollSet.POLLIN);
        }
        polledSessions.clear();
        polledSessions.addAll(sessions);
        for (Session s : polledSessions) {
            pollSet.add(s.socket.fd(), PollSet.POLLIN);
        }
        // the upgrade sessions (as many as upgraded connections) through their epoll set's fd
        int upgradesAt = upgrades.polledCount() > 0 ? pollSet.add(upgrades.epollFd(), PollSet.POLLIN) : -1;
        lastPollSize = pollSet.size();
        lastPolledUpgradeSessions = upgrades.polledCount();
        // a pass every 100 ms only while something has a deadline: most upgraded connections
        // keep their session open until they close, and those wait for messages alone
        boolean deadlines = wanted || !sessions.isEmpty() || upgrades.hasParked() || upgrades.anyOpenDeadline();
        pollsStarted++;
        // the deadlines are judged by when this poll began: a session expires only when no
        // message of it had come by the end of a poll that began after its deadline, however
        // long this thread is then held up before it gets to the deadlines
        long pollBegan = System.nanoTime();
        try {
            pollSet.poll(deadlines ? 100 : 1000);
        } finally {
            pollsEnded = pollsStarted;
        }
        if (pollSet.revents(0) != 0) {
            wake.drain();
        }
        for (int i = 0; i < polledListeners.size(); i++) {
            if (pollSet.revents(1 + i) != 0 && polledListeners.get(i).fd() >= 0) {
                acceptAll(polledListeners.get(i));
            }
        }
        int base = 1 + polledListeners.size();
        for (int i = 0; i < polledSessions.size(); i++) {
            if (pollSet.revents(base + i) != 0) {
                serve(polledSessions.get(i));
            }
        }
        if (upgradesAt >= 0 && pollSet.revents(upgradesAt) != 0) {
            upgrades.serveReady();
        }
        // after serving, and by the poll's start: a session whose message came while this
        // thread was held up (a loaded machine, a slow listener's callback) is served at the
        // next poll, not closed as idle (a client reads that as a refusal)
        expireSessions(pollBegan);
        upgrades.expire(pollBegan);
        Runnable h = housekeeping;
        if (h != null) {
            h.run();
        }
        purgeExpired(now);
    }

    private void acceptAll(UnixSeqpacket listener) throws IOException {
        UnixSeqpacket c;
        while ((c = listener.accept()) != null) {
            byte[] nonce = HandshakeMessages.nonce();
            ByteBuffer m = header(CHALLENGE, nonce.length).put(nonce);
            try {
                if (!c.send(m.array())) {
                    c.close();
                    continue;
                }
            } catch (IOException e) {
                c.close();
                continue;
            }
            sessions.add(new Session(c, nonce, System.nanoTime() + SESSION_NANOS));
        }
    }

    /** Handles a session's one message; the session ends either way. */
    private void serve(Session s) {
        sessions.remove(s);
        try {
            byte[] m = s.socket.receive(MAX_MESSAGE);
            if (m == null) {
                if (s.socket.status() == UnixSeqpacket.WOULD_BLOCK) {
                    sessions.add(s);
                }
                return;
            }
            if (m.length > 5 && m[5] == REGISTER_UPGRADE) {
                if (registerUpgrade(s, m)) {
                    // the socket is the upgrade session's now
                    return;
                }
                return;
            }
            Registration r = decodeRegister(secret, m, s.nonce, s.socket.truncated(), REGISTER, REGISTER_LABEL);
            if (r == null) {
                LOG.log(System.Logger.Level.DEBUG, "hadroNIO rendezvous: refused a registration that does not "
                        + "authenticate");
                return;
            }
            InetAddress destination = destinationOf(m);
            List<Runnable> tell = listeners.toTell(r.destinationPort(), destination);
            if (tell == null) {
                s.socket.send(header(NOT_HERE, 0).array());
                return;
            }
            expected.merge(r, new Expected(1, System.nanoTime() + expiryNanos), Expected::plus);
            tell.forEach(Runnable::run);
            byte[] mac = secret.mac(REGISTERED_LABEL, s.nonce, m);
            if (!s.socket.send(header(REGISTERED, mac.length).put(mac).array())) {
                // unanswered, the client reads our close as a refusal and connects as a plain client:
                // no handshake may be expected from its port
                take(r);
                LOG.log(System.Logger.Level.DEBUG, "hadroNIO rendezvous: could not answer a registration: refused it");
            }
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO rendezvous: session failed: " + e);
        } finally {
            if (!sessions.contains(s) && !upgrades.owns(s.socket)) {
                s.socket.close();
            }
        }
    }

    /**
     * A REGISTER_UPGRADE: a client already connected over TCP proves the key and asks to
     * upgrade that connection. Answered like a registration; the session is then parked
     * until the connection's owner attaches to it. True when the session was kept.
     */
    private boolean registerUpgrade(Session s, byte[] m) throws IOException {
        UpgradeListener listener = upgradeListener;
        Registration r = decodeRegister(secret, m, s.nonce, s.socket.truncated(), REGISTER_UPGRADE, UPGRADE_LABEL);
        if (r == null) {
            LOG.log(System.Logger.Level.DEBUG, "hadroNIO rendezvous: refused an upgrade that does not authenticate");
            return false;
        }
        InetAddress destination = destinationOf(m);
        if (!listeners.served(r.destinationPort(), destination) || listener == null) {
            s.socket.send(header(NOT_HERE, 0).array());
            return false;
        }
        byte[] mac = secret.mac(UPGRADED_LABEL, s.nonce, m);
        if (!s.socket.send(header(REGISTERED, mac.length).put(mac).array())) {
            return false;
        }
        listener.onRegistered(upgrades.park(s.socket, r));
        return true;
    }

    private void expireSessions(long now) {
        for (Iterator<Session> it = sessions.iterator(); it.hasNext(); ) {
            Session s = it.next();
            if (now - s.deadline > 0) {
                it.remove();
                s.socket.close();
            }
        }
    }

    private void purgeExpired(long now) {
        if (!expected.isEmpty()) {
            expected.values().removeIf(e -> now - e.deadline() > 0);
        }
    }

    // ---- client side of an upgrade ---------------------------------------------------------------

    /**
     * Asks the accelerated listener of {@code destination}'s port on this host, if there is
     * one, to upgrade the TCP connection this process made to it from {@code bound}: the
     * handler hears {@code onOpen} once both sides proved the key, or {@code onEnd} when
     * there is no such listener (or it did not prove itself): the connection stays plain.
     * Never blocks the caller.
     */
    public void upgrade(InetSocketAddress destination, InetSocketAddress bound, UpgradeSession.Handler handler) {
        upgrades.upgrade(destination, bound, handler);
    }

    // ---- client side ---------------------------------------------------------------------------

    /** How a {@link #register} ended: only {@link #REGISTERED} means the server expects our handshake. */
    public enum Outcome {
        REGISTERED,
        /** nobody listens on the port's name (a plain server, or none) */
        NO_LISTENER,
        /** the name's process belongs to another user */
        OTHER_USER,
        /** the listener's backlog stayed full until the deadline */
        BUSY,
        /** no valid challenge came (the session ended, timed out or sent something else) */
        NO_CHALLENGE,
        /** binding the connecting socket failed */
        BIND_FAILED,
        /** the REGISTER could not be sent */
        SEND_FAILED,
        /** the server closed the session without an answer (it did not register us) */
        REFUSED,
        /** the listener serves another address of the port */
        NOT_HERE,
        /** an answer that is not a REGISTERED with the right MAC */
        BAD_ANSWER,
        /** the session failed before the REGISTER went out */
        FAILED
    }

    /**
     * Asks the accelerated listener on this host's port {@code destination.getPort()}, if
     * there is one, to expect a TCP connection from the connecting socket's bound address
     * (a wildcard address stands for all), which {@code bind} gives (binding it first if
     * needed; called only when a listener answers).
     *
     * @return true when an accelerated server proved that it expects us: speak the
     *         handshake on the TCP connection; false: there is none (or it did not prove
     *         itself in time), use plain TCP
     */
    public boolean register(InetSocketAddress destination, java.util.concurrent.Callable<InetSocketAddress> bind,
                            long deadline) throws IOException {
        return tryRegister(destination, bind, deadline) == Outcome.REGISTERED;
    }

    /**
     * Connects to a rendezvous name; a listener whose backlog is full (many clients connect at
     * once) is asked again after a pause that doubles from 1 ms up to 16 ms, until
     * {@code deadline}: it is there, and a connection that gave up on it would stay plain.
     */
    private static UnixSeqpacket connectUnlessBusyUntil(String name, long deadline) throws IOException {
        long pause = 1_000_000;
        while (true) {
            try {
                return UnixSeqpacket.connect(name);
            } catch (UnixSeqpacket.BacklogFullException e) {
                if (System.nanoTime() + pause - deadline >= 0) {
                    throw e;
                }
                java.util.concurrent.locks.LockSupport.parkNanos(pause);
                pause = Math.min(2 * pause, 16_000_000);
            }
        }
    }

    /** {@link #register}, saying why a registration did not happen. */
    public Outcome tryRegister(InetSocketAddress destination, java.util.concurrent.Callable<InetSocketAddress> bind,
                               long deadline) throws IOException {
        UnixSeqpacket s;
        try {
            s = connectUnlessBusyUntil(RendezvousListeners.name(destination.getPort()), deadline);
        } catch (UnixSeqpacket.BacklogFullException e) {
            return Outcome.BUSY;
        } catch (IOException e) {
            return Outcome.NO_LISTENER;
        }
        if (s == null) {
            return Outcome.NO_LISTENER;
        }
        boolean registered = false;
        try (s) {
            if (ownUid >= 0 && s.peerUid() != ownUid) {
                // another user's process: with the per-user key it cannot be one of ours, and
                // we neither talk to it nor wait for it
                return Outcome.OTHER_USER;
            }
            byte[] challenge = receive(s, deadline);
            if (challenge == null || challenge.length != HEADER + HandshakeMessages.NONCE_LENGTH
                    || !isHeader(challenge, CHALLENGE)) {
                return Outcome.NO_CHALLENGE;
            }
            byte[] nonce = java.util.Arrays.copyOfRange(challenge, HEADER, challenge.length);
            InetSocketAddress client;
            try {
                client = bind.call();
            } catch (Exception e) {
                LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO rendezvous with port " + destination.getPort()
                        + ": bind failed: " + e);
                return Outcome.BIND_FAILED;
            }
            InetAddress bound = client.getAddress().isAnyLocalAddress() ? null : client.getAddress();
            byte[] register = encodeRegister(secret, nonce, destination.getAddress(), destination.getPort(), bound,
                    client.getPort());
            if (!s.send(register)) {
                return Outcome.SEND_FAILED;
            }
            // from here on the server may have registered our port: it will expect our
            // handshake from it, so a silence is no reason to go plain (that would leave the
            // server waiting for a hello): wait as long as a handshake may take
            registered = true;
            byte[] answer = receive(s, System.nanoTime() + expiryNanos);
            if (answer == null && s.status() == UnixSeqpacket.EOF) {
                // refused: a server closes without an answer only when it did not register us
                return Outcome.REFUSED;
            }
            if (answer == null) {
                throw new java.net.SocketTimeoutException("hadroNIO: the local server on port "
                        + destination.getPort() + " (process " + s.peerPid() + ") did not answer our registration within "
                        + expiryNanos / 1_000_000 + " ms");
            }
            if (answer.length == HEADER && isHeader(answer, NOT_HERE)) {
                return Outcome.NOT_HERE;
            }
            if (answer.length != HEADER + HandshakeMessages.MAC_LENGTH || !isHeader(answer, REGISTERED)) {
                return Outcome.BAD_ANSWER;
            }
            byte[] mac = java.util.Arrays.copyOfRange(answer, HEADER, answer.length);
            return Secret.matches(secret.mac(REGISTERED_LABEL, nonce, register), mac) ? Outcome.REGISTERED
                    : Outcome.BAD_ANSWER;
        } catch (IOException e) {
            if (registered) {
                throw e;
            }
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO rendezvous with port " + destination.getPort()
                    + " failed: " + e);
            return Outcome.FAILED;
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO rendezvous with port " + destination.getPort()
                    + " failed: " + e);
            return Outcome.FAILED;
        }
    }
}
