package io.hadronio.connection;

import io.hadronio.observe.Fallback;

import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * The side channel over which one TCP connection between two hadroNIO processes on this
 * host moves to UCX while it already carries the application's bytes: an abstract Unix
 * socket to the server's rendezvous ({@code @hadronio/<port>}), authenticated like a
 * registration (the client proves the key over the server's fresh nonce, the server proves
 * it back), and from then on private to the two processes. Its messages are framed like
 * the rendezvous' ({@code "HNIO"}, version, kind, body length) and bounded by
 * {@link #MAX_MESSAGE}; what they mean is the connection's business
 * ({@link Handler}).
 *
 * <p>All I/O runs on the rendezvous thread, which also calls the handler; other threads
 * send and close through it.
 */
public final class UpgradeSession {
    /** What the connection's owner does with the session's events (rendezvous thread). */
    public interface Handler {
        /** Authenticated: messages may flow. */
        void onOpen(UpgradeSession session);

        /** A well-framed message from the peer. */
        void onMessage(UpgradeSession session, byte kind, ByteBuffer body);

        /** The session ended (closed by either side, an error, or its deadline); called once, last. */
        void onEnd(String why);

        /**
         * Client: the listener declined the session before it opened, for {@code reason} (no
         * accelerated listener, another key); {@code onEnd} follows.
         */
        default void onDeclined(Fallback reason) {
        }

        /** Client: the session's socket exists (before anything is sent on it); {@link #shutdownNow} may end it. */
        default void onStart(UpgradeSession session) {
        }

        /**
         * Client: the listener's rendezvous exists but had no room for the session (its backlog
         * was full: the connections before ours, a wave of upgrades, are not accepted yet). No
         * session began, and neither {@code onStart} nor {@code onEnd} follows; the handler may
         * ask again ({@link LocalRendezvous#upgrade}) or give up.
         */
        void onListenerBusy();
    }

    /**
     * What a session needs of the rendezvous that runs it ({@link UpgradeSessions}, for a
     * {@link LocalRendezvous}): its thread, and its lists of parked and polled sessions
     * (rendezvous thread).
     */
    interface Owner {
        /** Runs {@code task} on the rendezvous thread. */
        void execute(Runnable task);

        /** True on the rendezvous thread. */
        boolean onThread();

        /** A parked session met its connection: it is polled from now on. */
        void parkedToOpen(UpgradeSession session);

        /** The session ends (called before its socket closes). */
        void forget(UpgradeSession session);
    }

    /** The largest message of an upgrade session (a hello carries a worker address). */
    public static final int MAX_MESSAGE = HandshakeMessages.MAX_FRAME + RendezvousMessages.HEADER;

    static final int CLIENT_CHALLENGE = 0;
    static final int CLIENT_REGISTERED = 1;
    static final int PARKED = 2;
    static final int OPEN = 3;

    private final Owner rendezvous;
    final UnixSeqpacket socket;
    // rendezvous thread only from here on
    Handler handler;
    int state;
    long deadline;
    volatile boolean ended;
    // client: the nonce it answers and the REGISTER it sent (the server's MAC covers it)
    byte[] nonce;
    byte[] register;
    // server: who registered (the client's bound address, null for the wildcard, and port) and for which port
    private final InetAddress clientAddress;
    private final int clientPort;
    private final int destinationPort;

    UpgradeSession(Owner rendezvous, UnixSeqpacket socket, int state, long deadline,
                   InetAddress clientAddress, int clientPort, int destinationPort) {
        this.rendezvous = rendezvous;
        this.socket = socket;
        this.state = state;
        this.deadline = deadline;
        this.clientAddress = clientAddress;
        this.clientPort = clientPort;
        this.destinationPort = destinationPort;
    }

    /** True once the session ended (any thread). */
    public boolean isEnded() {
        return ended;
    }

    /** Server: the client's bound address (null: it registered the wildcard). */
    public InetAddress clientAddress() {
        return clientAddress;
    }

    /** Server: the client's port of the TCP connection to upgrade. */
    public int clientPort() {
        return clientPort;
    }

    /** Server: the TCP port the client connected to. */
    public int destinationPort() {
        return destinationPort;
    }

    /**
     * Server: hands a parked session to the connection it belongs to (any thread). A session
     * whose client has ended it is not the connection's: the client's port may already carry
     * a new connection (a client ends its session before it closes its TCP socket, see
     * {@link #shutdownNow}), which is this connection, and its own session may still come;
     * {@code stale} runs then (rendezvous thread).
     */
    public void attach(Handler h, Runnable stale) {
        rendezvous.execute(() -> {
            if (!ended && socket.peerClosed()) {
                end("its client ended it before its connection was met");
            }
            if (ended) {
                stale.run();
                return;
            }
            handler = h;
            state = OPEN;
            deadline = Long.MAX_VALUE;
            rendezvous.parkedToOpen(this);
            if (ended) {
                return; // its socket could not be polled: the handler heard onEnd
            }
            h.onOpen(this);
        });
    }

    /** Sends a message (any thread; from others it is queued to the rendezvous thread). */
    public void send(byte kind, byte[] body) {
        if (rendezvous.onThread()) {
            sendNow(kind, body);
        } else {
            rendezvous.execute(() -> sendNow(kind, body));
        }
    }

    private void sendNow(byte kind, byte[] body) {
        if (ended) {
            return;
        }
        try {
            ByteBuffer m = RendezvousMessages.header(kind, body.length).put(body);
            if (!socket.send(m.array())) {
                // a few small messages per connection never fill a socket buffer: the peer is stuck
                end("the peer does not take its messages");
            }
        } catch (IOException e) {
            end("send failed: " + e.getMessage());
        }
    }

    /**
     * Ends the session for the peer at once, from any thread (its socket shut down both ways);
     * the rendezvous thread closes it when it next looks. A client does this before its TCP
     * socket closes: once that port is free again, a server must not take this session for the
     * port's next connection.
     */
    public void shutdownNow() {
        socket.shutdown();
    }

    /** Closes the session (any thread); the handler's onEnd follows. */
    public void close() {
        if (rendezvous.onThread()) {
            end("closed");
        } else {
            rendezvous.execute(() -> end("closed"));
        }
    }

    /** Ends the session once: closes the socket, tells the handler. Rendezvous thread. */
    void end(String why) {
        if (ended) {
            return;
        }
        ended = true;
        // (forgotten first: it leaves the polled set while its fd is still its own)
        rendezvous.forget(this);
        socket.close();
        if (handler != null) {
            handler.onEnd(why);
        }
    }

    /** An open session's socket is readable: every message there goes to the handler. Rendezvous thread. */
    void onReadableOpen() {
        try {
            while (!ended) {
                byte[] m = socket.receive(MAX_MESSAGE);
                if (m == null) {
                    if (socket.status() == UnixSeqpacket.EOF) {
                        end("the peer closed the session");
                    }
                    return;
                }
                ByteBuffer b = ByteBuffer.wrap(m);
                if (socket.truncated() || m.length < RendezvousMessages.HEADER_LENGTH
                        || b.getInt() != HandshakeMessages.MAGIC || b.get() != HandshakeMessages.VERSION) {
                    end("a malformed session message");
                    return;
                }
                byte kind = b.get();
                if (Short.toUnsignedInt(b.getShort()) != m.length - RendezvousMessages.HEADER_LENGTH) {
                    end("a session message of a wrong length");
                    return;
                }
                handler.onMessage(this, kind, b.slice());
            }
        } catch (IOException | RuntimeException e) {
            end("session failed: " + e);
        }
    }

    @Override
    public String toString() {
        return "UpgradeSession[" + (clientPort > 0 ? clientPort + "->" + destinationPort : "client") + "]";
    }
}
