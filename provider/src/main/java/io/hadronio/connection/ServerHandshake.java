package io.hadronio.connection;

import io.hadronio.observe.Counters;

import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.Reactor;
import io.hadronio.worker.WorkerGroup;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.Peers;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The server's side of a handshake with a client that registered at the rendezvous
 * ({@code EXPECT}) or comes from a network configured as accelerated ({@code DETECT}),
 * on the reactor's thread. Until the client's hello proves to be one, the connection may
 * still be plain: bytes that are not a hello are handed to the application with the
 * connection, as plain TCP. It ends delivering the connection to {@code queue},
 * accelerated or plain, or closing it (refused).
 *
 * <p>Nothing for a stranger before proof: a hello, however well-formed, gets an answer
 * made of what all connections share (the worker's address, the endpoint profile, a MAC)
 * and costs the server nothing beyond the socket it already has and the two hellos'
 * bytes. The connection's lifecycle, its UCX half (receive area, tag id) and its endpoint
 * are made only once the client's FINISH has proven the key; READY then tells the
 * client the connection's own fields. How many hellos one host may have waiting for
 * their proof is bounded by whoever admits them ({@code admit}): a hello over the bound
 * is answered with PLAIN and its connection is plain TCP.
 */
final class ServerHandshake extends Handshake {
    private static final Logger LOG = LazyLogger.of(ServerHandshake.class);

    private final ConnectionServices runtime;
    final AcceptQueue queue;
    final java.net.InetAddress remote;
    private final Function<SocketChannel, ConnectionLifecycle> lifecycles;
    private final Predicate<ServerHandshake> admit;
    private final HandshakeFrameReader reader = new HandshakeFrameReader();
    private SelectionKey key;
    private byte[] clientHello;
    private byte[] serverHello;
    // the shared worker the connection will be on, named in our hello (nothing is made on it yet)
    private WorkerGroup group;
    // once the client's FINISH proved the key
    private ConnectionLifecycle life;
    private UcxHalf connection;

    /**
     * @param remote     the client's address
     * @param lifecycles makes the server's lifecycle of a connection whose client proved the key
     * @param admit      whether a hello from this client may wait for its proof now (false: PLAIN,
     *                   and the connection is plain TCP)
     */
    ServerHandshake(ConnectionServices runtime, Reactor reactor, AcceptQueue queue, SocketChannel tcp,
                    java.net.InetAddress remote, Peers.Inbound inbound,
                    Function<SocketChannel, ConnectionLifecycle> lifecycles, Predicate<ServerHandshake> admit) {
        super(tcp, reactor, System.nanoTime() + (inbound == Peers.Inbound.DETECT
                ? runtime.peers().detectNanos() : handshakeNanos(runtime)));
        this.runtime = runtime;
        this.queue = queue;
        this.remote = remote;
        this.lifecycles = lifecycles;
        this.admit = admit;
    }

    static long handshakeNanos(ConnectionServices runtime) {
        return TimeUnit.MILLISECONDS.toNanos(runtime.config().handshakeMillis());
    }

    /** Waits for the client's hello. Reactor thread. */
    void start() throws IOException {
        key = reactor.register(tcp, SelectionKey.OP_READ, this);
        reactor.addDeadline(this);
    }

    @Override
    public void ready(SelectionKey key) {
        byte[] frame;
        try {
            frame = reader.read(tcp);
        } catch (IOException e) {
            if (clientHello == null) {
                plain(reader.taken(), e.getMessage());
            } else {
                refuse(e.getMessage());
            }
            return;
        }
        if (frame == null) {
            if (reader.eof()) {
                if (clientHello == null) {
                    plain(reader.taken(), "end-of-stream before a hello");
                } else {
                    refuse("connection closed during the handshake");
                }
            }
            return;
        }
        try {
            if (clientHello == null) {
                onClientHello(frame);
            } else {
                onFinish(frame);
            }
        } catch (IOException | RuntimeException e) {
            if (clientHello == null) {
                plain(ByteBuffer.wrap(frame), e.getMessage());
            } else {
                refuse(e.getMessage());
            }
        }
    }

    private void onClientHello(byte[] frame) throws IOException {
        HandshakeMessages.decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
        // a hello: from here on a failure refuses the connection (part of our answer may be
        // out already), it no longer hands the frame to the application as data
        clientHello = frame;
        if (!admit.test(this)) {
            // over its host's bound: plain TCP, allocating nothing, as for a client that
            // answers PLAIN (a real client with many connects at once keeps them, unaccelerated;
            // a stranger gets no more than any stranger gets). DEBUG: a host must not drive the log.
            Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
            plain(null, PendingHellos.MAX_PER_ADDRESS + " hellos from " + remote.getHostAddress()
                    + " already wait for their proof");
            return;
        }
        // the worker is chosen now because our hello names it; the connection on it is made
        // only for a client that proves the key
        group = runtime.nextGroup();
        serverHello = HandshakeMessages.serverHello(runtime.peers().secret(), clientHello, group.address(),
                runtime.endpointProfile());
        Reactor.writeFully(tcp, ByteBuffer.wrap(serverHello));
        // it speaks our protocol: from now on the whole handshake may take its full time
        deadline = System.nanoTime() + handshakeNanos(runtime);
    }

    /**
     * Takes what the client has sent by now (its FINISH, or its end), as if its socket had
     * been selected: lets the hello's admission see which hellos from one host still wait
     * for their proof when their proofs sit unread behind it in the same selection.
     */
    void readArrived() {
        if (key != null && key.isValid()) {
            ready(key);
        }
    }

    private void onFinish(byte[] frame) throws IOException {
        byte kind = HandshakeMessages.kind(frame);
        if (kind == HandshakeMessages.PLAIN) {
            // the client could not verify us (another key): plain TCP for both
            plain(null, "the client does not share our key");
            return;
        }
        if (!HandshakeMessages.verifyFinish(runtime.peers().secret(), clientHello,
                serverHello, frame)) {
            Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
            plain(null, "the client does not prove our key");
            return;
        }
        HandshakeMessages.Hello hello = HandshakeMessages
                .decodeHello(clientHello, HandshakeMessages.CLIENT_HELLO);
        if (!hello.profile().equals(runtime.endpointProfile())) {
            // endpoints of different UCX settings fail or abort at wire-up: plain TCP
            Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
            plain(null, "the client's UCX endpoint settings differ (" + hello.profile() + ")");
            return;
        }
        // proven: only now does the connection get a lifecycle and a UCX half, and only now
        // does the client's worker address reach UCX
        life = lifecycles.apply(tcp);
        connection = runtime.newHalf(life, group);
        connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
        if (runtime.config().kernelTcp() && connection.onlyTcp()) {
            // UCX would only use tcp: the kernel's TCP connection we have is the faster path
            release();
            Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
            plain(null, "UCX would carry it over tcp only: the kernel's TCP connection carries the bytes");
            return;
        }
        Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.ready(runtime.peers().secret(), clientHello,
                serverHello, connection.localId(), connection.rxSliceSize(), connection.rxSliceCount())));
        life.acceptedAccelerated(connection);
        ended();
        runtime.control().established(key, life);
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection from " + peer(tcp) + " accelerated over UCX "
                    + connection.transports());
        }
        queue.deliver(life);
    }

    private void release() {
        if (connection != null) {
            connection.release();
            connection = null;
        }
    }

    /** Hands the connection to the application as plain TCP, with the bytes we took from it first. */
    private void plain(ByteBuffer taken, String why) {
        ended();
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection from " + peer(tcp) + " is plain TCP (" + why + ")");
        }
        // the socket leaves the reactor's selector at its next selection; only then may the
        // application make it blocking
        reactor.deregisterThen(key, () -> queue.deliverPlain(tcp, taken));
    }

    /** Closes the connection: it began our handshake and broke it (or its server closed). */
    void refuse(String why) {
        ended();
        Counters.jvm().handshakeFailed();
        if (LOG.isLoggable(Level.WARNING)) {
            LOG.log(Level.WARNING, "hadroNIO: refused connection from " + peer(tcp) + ": " + why);
        }
        release();
        try {
            tcp.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    @Override
    public void expire() {
        if (clientHello == null && tcp.isOpen()) {
            plain(reader.taken(), "no hello within the deadline");
            return;
        }
        refuse("no complete handshake within " + runtime.config().handshakeMillis() + " ms");
    }
}
