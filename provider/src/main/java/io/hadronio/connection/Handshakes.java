package io.hadronio.connection;

import io.hadronio.reactor.Reactor;

import io.hadronio.connection.RendezvousMessages;
import io.hadronio.connection.Peers;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/**
 * Where eager handshakes start and which are in progress: the server's for connections a
 * server channel accepted from clients that speak first ({@link ServerHandshake}), the
 * client's for connects to accelerated servers ({@link ClientHandshake}). Both run on the
 * reactor's thread, so that a silent or bogus peer never holds up {@code accept()} or
 * another connection.
 */
public final class Handshakes {
    private final ConnectionServices runtime;
    // what the handshakes see of the control loop
    private final Reactor reactor;
    private final Function<SocketChannel, ConnectionLifecycle> lifecycles;
    // server handshakes in progress (reactor thread only): a closing server channel refuses its own
    private final List<ServerHandshake> serving = new ArrayList<>();
    // hellos from remote hosts (DETECT) that wait for their proof, bounded per address (reactor thread)
    private final PendingHellos<ServerHandshake> unproven = new PendingHellos<>(PendingHellos.MAX_PER_ADDRESS);
    // handshakes in progress, both sides (a diagnostic: control.handshakes)
    private volatile int inProgress;

    public Handshakes(ConnectionServices runtime, ConnectionControl control) {
        this.runtime = runtime;
        this.reactor = control.reactor();
        this.lifecycles = tcp -> ConnectionLifecycle.accepting(control, tcp);
    }

    /**
     * Accepts on a server channel's kernel listener for it while it may have clients that
     * expect a handshake: after a registration at the rendezvous ({@code always} false:
     * until no registration for the port is left unclaimed) or for good when clients from
     * other hosts may speak first ({@code always} true). Their connect must complete
     * whether or not the application calls accept(), as a kernel connect does. A plain
     * client accepted here waits in the queue. Any thread.
     */
    public void acceptFor(ServerSocketChannel tcp, AcceptQueue queue, int port, boolean always) {
        reactor.execute(() -> {
            SelectionKey key = reactor.keyFor(tcp);
            try {
                if (key == null) {
                    reactor.register(tcp, SelectionKey.OP_ACCEPT, new ListenerWatch(tcp, queue, runtime, port, always));
                } else if (key.isValid()) {
                    key.interestOps(SelectionKey.OP_ACCEPT);
                }
            } catch (IOException e) {
                // closed meanwhile
            }
        });
    }

    /**
     * Runs the server's side of the handshake of a connection that a server channel
     * accepted from a client that registered ({@code EXPECT}) or comes from a network
     * configured as accelerated ({@code DETECT}), and delivers it to {@code queue} when it
     * ends, accelerated or plain. The socket must be non-blocking. Any thread.
     */
    public void accept(SocketChannel child, Peers.Inbound inbound, AcceptQueue queue) {
        reactor.execute(() -> {
            InetAddress remote;
            try {
                remote = RendezvousMessages.normalize(((InetSocketAddress) child.getRemoteAddress()).getAddress());
            } catch (IOException | RuntimeException e) {
                closeQuietly(child);
                return;
            }
            // a registered local client proved the key at the rendezvous already (and is one
            // process's port): only hosts that have proven nothing are bounded
            java.util.function.Predicate<ServerHandshake> admit = inbound == Peers.Inbound.DETECT
                    ? this::admit : h -> true;
            ServerHandshake h = new ServerHandshake(runtime, reactor, queue, child, remote, inbound, lifecycles, admit);
            serving.add(h);
            inProgress++;
            h.onEnd(() -> {
                serving.remove(h);
                unproven.release(h.remote, h);
                inProgress--;
            });
            try {
                h.start();
            } catch (IOException e) {
                h.ended();
                closeQuietly(child);
            }
        });
    }

    /**
     * Whether a remote host's hello may wait for its proof: not while
     * {@link PendingHellos#MAX_PER_ADDRESS} others from its address do (then it is answered
     * with PLAIN, and its connection is plain TCP). Before it says no,
     * the others take what their clients sent by now (a FINISH or an end may sit unread
     * behind this hello in the same selection), so that only hellos really waiting count.
     */
    private boolean admit(ServerHandshake h) {
        if (unproven.admit(h.remote, h)) {
            return true;
        }
        for (ServerHandshake other : unproven.from(h.remote)) {
            other.readArrived();
        }
        return unproven.admit(h.remote, h);
    }

    private static void closeQuietly(SocketChannel tcp) {
        try {
            tcp.close();
        } catch (IOException ignored) {
            // nothing to do
        }
    }

    /**
     * Runs a connect to an accelerated server to its end: finishes the TCP connect
     * ({@code life}'s socket must be non-blocking with {@code connect} already called),
     * speaks the handshake within the handshake timeout, and tells the lifecycle how it
     * ended. Any thread.
     */
    public void connect(ConnectionLifecycle life) {
        reactor.execute(() -> {
            ClientHandshake h = new ClientHandshake(runtime, reactor, life);
            inProgress++;
            h.onEnd(() -> inProgress--);
            h.start();
        });
    }

    /**
     * A server channel closes: the reactor stops accepting on its listener, its handshakes
     * still in progress are refused, and {@code then} runs once the listener has left the
     * reactor's selector (only then does closing it really close it). Any thread.
     */
    public void abandon(ServerSocketChannel listener, AcceptQueue queue, Runnable then) {
        reactor.abandon(listener, () -> {
            for (ServerHandshake h : new ArrayList<>(serving)) {
                if (h.queue == queue) {
                    h.refuse("server closed");
                }
            }
            then.run();
        });
    }

    /** Handshakes in progress, both sides. */
    public int inProgress() {
        return inProgress;
    }

    /** Hellos from remote hosts that wait for their proof (reactor thread; a seam for tests). */
    PendingHellos<ServerHandshake> unproven() {
        return unproven;
    }
}
