package io.hadronio.connection;

import io.hadronio.reactor.Reactor;

import java.io.IOException;
import java.nio.channels.SocketChannel;

/**
 * A handshake in progress on a TCP connection, driven by the reactor's readiness: it ends
 * by itself when its deadline passes or its socket was closed under it (a connect given
 * up), and tells whoever started it once it has ended, however it ended.
 */
abstract class Handshake implements Reactor.Handler, Reactor.Deadlined {
    final SocketChannel tcp;
    final Reactor reactor;
    long deadline;
    private Runnable onEnd;
    private boolean ended;

    Handshake(SocketChannel tcp, Reactor reactor, long deadline) {
        this.tcp = tcp;
        this.reactor = reactor;
        this.deadline = deadline;
    }

    /** Run once when the handshake ends (set before it starts). */
    final void onEnd(Runnable r) {
        this.onEnd = r;
    }

    /** The handshake is over, whatever the outcome: no deadline, and its starter is told. Idempotent. */
    final void ended() {
        if (ended) {
            return;
        }
        ended = true;
        reactor.removeDeadline(this);
        if (onEnd != null) {
            onEnd.run();
        }
    }

    @Override
    public final boolean due(long now) {
        return now - deadline > 0 || !tcp.isOpen();
    }

    static String peer(SocketChannel tcp) {
        try {
            return String.valueOf(tcp.getRemoteAddress());
        } catch (IOException e) {
            return "?";
        }
    }
}
