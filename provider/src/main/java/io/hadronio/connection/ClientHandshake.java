package io.hadronio.connection;

import io.hadronio.observe.Fallback;
import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.Reactor;

import io.hadronio.connection.HandshakeMessages;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * The connecting side of a handshake, on the reactor's thread: finishes the TCP connect
 * (the lifecycle's socket is non-blocking with {@code connect} already called), speaks the
 * handshake within the handshake timeout, and tells the lifecycle how it ended:
 * accelerated, plain (the server does not share our key, has too many handshakes from
 * this host waiting, or UCX would use tcp only), or failed.
 */
final class ClientHandshake extends Handshake {
    private static final Logger LOG = LazyLogger.of(ClientHandshake.class);

    private final ConnectionServices runtime;
    private final ConnectionLifecycle life;
    private final HandshakeFrameReader reader = new HandshakeFrameReader();
    private UcxHalf connection;
    private byte[] clientHello;
    private byte[] serverHello;
    private HandshakeMessages.ServerHello server;

    ClientHandshake(ConnectionServices runtime, Reactor reactor, ConnectionLifecycle life) {
        super(life.tcp(), reactor, System.nanoTime() + ServerHandshake.handshakeNanos(runtime));
        this.runtime = runtime;
        this.life = life;
    }

    /** Waits for the TCP connect to complete. Reactor thread. */
    void start() {
        try {
            SelectionKey key = reactor.register(tcp, SelectionKey.OP_CONNECT, this);
            reactor.addDeadline(this);
            if (tcp.isConnected()) {
                // connected at once: no OP_CONNECT will come
                ready(key);
            }
        } catch (IOException e) {
            failClient(e);
        }
    }

    @Override
    public void ready(SelectionKey key) {
        try {
            if (connection == null) {
                if (!tcp.isConnected() && (!key.isConnectable() || !tcp.finishConnect())) {
                    return;
                }
                connection = runtime.newHalf(life);
                clientHello = HandshakeMessages.clientHello(connection.localId(),
                        connection.rxSliceSize(), connection.rxSliceCount(), connection.group().address(),
                        runtime.endpointProfile());
                Reactor.writeFully(tcp, ByteBuffer.wrap(clientHello));
                key.interestOps(SelectionKey.OP_READ);
                return;
            }
            byte[] frame;
            try {
                frame = reader.read(tcp);
            } catch (ProtocolException e) {
                throw new ProtocolException("hadroNIO handshake: " + peer(tcp) + " does not speak hadroNIO ("
                        + e.getMessage() + "); is it in hadronio.remote.networks by mistake?");
            }
            if (frame == null) {
                if (reader.eof()) {
                    throw new java.net.SocketException("hadroNIO handshake: " + peer(tcp)
                            + " closed the connection during the handshake");
                }
                return;
            }
            if (serverHello == null) {
                onServerHello(key, frame);
            } else {
                onReady(key, frame);
            }
        } catch (IOException | RuntimeException e) {
            failClient(e instanceof IOException io ? io : new IOException(e));
        }
    }

    private void onServerHello(SelectionKey key, byte[] frame) throws IOException {
        if (HandshakeMessages.kind(frame) == HandshakeMessages.PLAIN) {
            // the server has more hellos from our host waiting for their proof than it lets
            // wait (many connects at once): plain TCP for both, from here on
            plain(key, Fallback.PEER_PLAIN, "the server answered our hello with plain TCP (too many handshakes from this host at once)");
            return;
        }
        HandshakeMessages.ServerHello hello = HandshakeMessages.decodeServerHello(frame);
        if (!HandshakeMessages.verifyServerHello(runtime.peers().secret(), clientHello, frame)
                || !hello.profile().equals(runtime.endpointProfile())) {
            Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
            plain(key, Fallback.OTHER_KEY, "the server does not prove our key, or its UCX endpoint settings differ ("
                    + hello.profile() + ")");
            return;
        }
        serverHello = frame;
        server = hello;
        Reactor.writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.finish(
                runtime.peers().secret(), clientHello, serverHello)));
    }

    private void onReady(SelectionKey key, byte[] frame) throws IOException {
        byte kind = HandshakeMessages.kind(frame);
        if (kind == HandshakeMessages.PLAIN) {
            plain(key, Fallback.PEER_PLAIN, "the server chose plain TCP (it does not accept our key, or UCX would only use tcp)");
            return;
        }
        if (kind != HandshakeMessages.READY) {
            throw new ProtocolException("hadroNIO handshake: unexpected message kind " + kind);
        }
        HandshakeMessages.Ready ready = HandshakeMessages.decodeReady(frame);
        if (!HandshakeMessages.verifyReady(runtime.peers().secret(), clientHello, serverHello, frame)) {
            // the server proved the key in its hello: a READY that does not is forged or broken,
            // and the server takes the connection for accelerated, so it cannot go plain either
            throw new ProtocolException("hadroNIO handshake: " + peer(tcp) + "'s READY does not prove our key");
        }
        connection.connect(ready.connectionId(), ready.sliceSize(), ready.sliceCount(), server.workerAddress());
        ended();
        runtime.control().established(key, life);
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection to " + peer(tcp) + " accelerated over UCX "
                    + connection.transports());
        }
        if (!life.handshakeAccelerated(connection)) {
            // the channel closed (and with it the socket) while the handshake ran
            runtime.control().forget(life);
            connection.release();
        }
        connection = null;
    }

    private void plain(SelectionKey key, Fallback reason, String why) {
        ended();
        connection.release();
        connection = null;
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection to " + peer(tcp) + " is plain TCP (" + why + ")");
        }
        reactor.deregisterThen(key, () -> life.handshakePlain(reason, why));
    }

    @Override
    public void expire() {
        failClient(new java.net.SocketTimeoutException("hadroNIO handshake with " + peer(tcp) + ": no answer within "
                + runtime.config().handshakeMillis() + " ms"));
    }

    private void failClient(IOException cause) {
        ended();
        if (connection != null) {
            connection.release();
            connection = null;
        }
        try {
            tcp.close();
        } catch (IOException e) {
            // nothing to do
        }
        life.handshakeFailed(cause);
    }
}
