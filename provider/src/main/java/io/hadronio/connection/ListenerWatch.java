package io.hadronio.connection;

import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.Reactor;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * A server channel's kernel listener, accepted on by the control thread while clients that
 * expect a handshake may come ({@link Handshakes#acceptFor}): what it accepts goes to the
 * server channel's {@link AcceptQueue}, which decides, as its own accept() does.
 */
final class ListenerWatch implements Reactor.Handler {
    private static final Logger LOG = LazyLogger.of(ListenerWatch.class);
    private final ServerSocketChannel tcp;
    private final AcceptQueue queue;
    private final ConnectionServices runtime;
    private final int port;
    // accepts for good (clients from other hosts may speak first), not only while registrations are unclaimed
    private final boolean always;

    ListenerWatch(ServerSocketChannel tcp, AcceptQueue queue, ConnectionServices runtime, int port, boolean always) {
        this.tcp = tcp;
        this.queue = queue;
        this.runtime = runtime;
        this.port = port;
        this.always = always;
    }

    @Override
    public void ready(SelectionKey key) {
        while (true) {
            SocketChannel child;
            try {
                child = tcp.accept();
            } catch (IOException e) {
                LOG.log(Level.DEBUG, "accept failed", e);
                break;
            }
            if (child == null) {
                break;
            }
            // the server channel decides, as its own accept() does
            queue.accepted(child);
        }
        if (!always && key.isValid() && !runtime.peers().rendezvous().expects(port)) {
            key.interestOps(0);
        }
    }
}
