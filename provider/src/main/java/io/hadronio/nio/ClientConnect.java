package io.hadronio.nio;

import io.hadronio.observe.Fallback;
import io.hadronio.path.ChannelIo;
import io.hadronio.path.KernelStream;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.runtime.UcxRuntime;
import io.hadronio.path.Upgrades;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NoConnectionPendingException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * A socket channel's connect and finishConnect: who the peer is and which way the connection
 * starts. A local peer gets a plain connect at once (a local Unix stream where its listener
 * takes one, else TCP), exactly as the JDK's, and the connection moves to UCX in the background
 * if the peer runs hadroNIO (once the runtime's start has finished: a connect never waits for
 * it). A peer that may speak the handshake (eager mode, a remote network) is asked first,
 * after the runtime's start ({@link io.hadronio.connection.Peers}):
 * a plain one gets a plain TCP connect; an accelerated one a TCP connect and the handshake, run
 * by the control thread, which a blocking connect waits for and a non-blocking one leaves to
 * {@link #finish}. The channel calls it with both its locks held.
 */
final class ClientConnect {
    /** The channel's step to plain: the kernel socket becomes the channel, in its blocking mode. */
    interface GoPlain {
        void run() throws IOException;
    }

    private final UcxRuntime runtime;
    private final ConnectionLifecycle life;
    private final KernelStream kernel;
    private final ChannelIo io;
    private final UpgradeConversion conversion;
    private final GoPlain goPlain;

    ClientConnect(UcxRuntime runtime, ConnectionLifecycle life, KernelStream kernel, ChannelIo io,
                  UpgradeConversion conversion, GoPlain goPlain) {
        this.runtime = runtime;
        this.life = life;
        this.kernel = kernel;
        this.io = io;
        this.conversion = conversion;
        this.goPlain = goPlain;
    }

    /** The remote address of {@code connect}, checked as the JDK's channel checks it. */
    static InetSocketAddress checkRemote(SocketAddress remote) {
        Objects.requireNonNull(remote, "remote");
        if (!(remote instanceof InetSocketAddress isa)) {
            throw new UnsupportedAddressTypeException();
        }
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    /** @param timeoutMillis the socket adaptor's connect timeout (blocking only), 0: none */
    boolean connect(InetSocketAddress isa, int timeoutMillis) throws IOException {
        life.beginConnect();
        runtime.connecting();
        Upgrades upgrades = runtime.upgrades();
        boolean local = runtime.isLocal(isa.getAddress());
        if (upgrades != null && local) {
            boolean stream = kernel.connectStream(isa);
            upgrades.prepareClient(life);
            conversion.attach();
            goPlain.run();
            if (stream) {
                connectedPlainly();
                return true;
            }
            return connectPlain(isa, timeoutMillis);
        }
        // a plain peer needs nothing of the runtime; the others need its start (the key, the
        // rendezvous, UCX), which this connect waits for, and is plain if that failed
        if (!local && !runtime.config().isRemoteAccelerated(isa.getAddress())) {
            life.fellBack(Fallback.NOT_IN_REMOTE_NETWORKS, null);
            goPlain.run();
            return connectPlain(isa, timeoutMillis);
        }
        if (!runtime.awaitStarted()) {
            life.fellBack(Fallback.UCX_NOT_STARTED, String.valueOf(runtime.startFailure()));
            goPlain.run();
            return connectPlain(isa, timeoutMillis);
        }
        // counted from here, not from the connect's start: the wait for the runtime's start (seconds
        // on a loaded machine) would have spent it, and the connection gone plain
        long rendezvousDeadline = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(Math.min(1000, runtime.config().handshakeMillis()));
        Fallback plain;
        try {
            plain = runtime.peers().whyPlain(isa, kernel::boundForRendezvous, rendezvousDeadline);
        } catch (IOException e) {
            io.close();
            throw e;
        }
        if (plain != null) {
            life.fellBack(plain, null);
            goPlain.run();
            return connectPlain(isa, timeoutMillis);
        }
        try {
            kernel.connectForHandshake(isa);
        } catch (IOException e) {
            io.close();
            throw e;
        }
        runtime.handshakes().connect(life);
        if (!io.isBlocking()) {
            return false;
        }
        return completeConnect(timeoutMillis);
    }

    /** {@code finishConnect}: true once connected. */
    boolean finish() throws IOException {
        int s = life.state();
        if (s == ConnectionLifecycle.OPEN) {
            return true;
        }
        if (s != ConnectionLifecycle.CONNECTING) {
            throw new NoConnectionPendingException();
        }
        if (life.handshakeEnded()) {
            return takeOutcome();
        }
        if (life.isPlain()) {
            boolean done;
            try {
                done = kernel.finishConnect();
            } catch (IOException e) {
                io.close();
                throw e;
            }
            if (done) {
                connectedPlainly();
            }
            return done;
        }
        if (io.isBlocking()) {
            return completeConnect(0);
        }
        return false;
    }

    /**
     * An accepted local connection (plain so far) may move to UCX if its client runs
     * hadroNIO and asks for it; it stays plain until then. Before the channel is handed to
     * the application.
     */
    void accepted(int serverPort) throws IOException {
        conversion.attach();
        runtime.upgrades().accepted(life, kernel.remoteAddress(), serverPort);
    }

    /** A plain connect on the kernel socket, which is in the channel's blocking mode. */
    private boolean connectPlain(InetSocketAddress isa, int timeoutMillis) throws IOException {
        boolean connected;
        try {
            connected = kernel.connect(isa, timeoutMillis);
        } catch (IOException e) {
            io.close();
            throw e;
        }
        if (connected) {
            connectedPlainly();
        }
        return connected;
    }

    private void connectedPlainly() throws IOException {
        if (!io.isOpen()) {
            throw new ClosedChannelException();
        }
        life.connectedPlain();
        if (!life.upgrade().isCandidate()) {
            return;
        }
        runtime.upgrades().startClient(life, kernel.remoteAddress(), kernel.localAddress());
        if (runtime.config().upgradeDelayNanos() <= 0) {
            // no delay: the upgrade begins at once (connect and finishConnect hold both locks)
            conversion.request(life.upgrade()::begin);
        }
    }

    /**
     * Waits (blocking mode) for the control thread's handshake to end and takes its
     * outcome: the UCX connection, plain TCP, or the real cause of a failure (refused,
     * reset, timed out), which closes the channel.
     *
     * @param timeoutMillis > 0: at most this long (the adaptor's connect timeout)
     */
    private boolean completeConnect(int timeoutMillis) throws IOException {
        boolean completed = false;
        try {
            io.begin();
            long deadline = timeoutMillis > 0 ? System.nanoTime() + timeoutMillis * 1_000_000L : Long.MAX_VALUE;
            try {
                completed = life.awaitHandshake(deadline);
            } catch (InterruptedException e) {
                // the channel's interruptor closes it; end() reports that
                Thread.currentThread().interrupt();
            }
        } finally {
            io.end(completed);
        }
        if (!completed) {
            io.close();
            if (Thread.currentThread().isInterrupted()) {
                // the wait saw the interrupt before the channel's interruptor ran (it sets the
                // status first): do its work, as the NIO contract says
                throw new ClosedByInterruptException();
            }
            throw new SocketTimeoutException("Connect timed out");
        }
        return takeOutcome();
    }

    /** Takes over what the ended handshake produced (UCX, plain TCP, or a failure, thrown); true once connected. */
    private boolean takeOutcome() throws IOException {
        if (!io.isOpen()) {
            throw new ClosedChannelException();
        }
        IOException failure = life.takeOutcome();
        if (failure != null) {
            io.close();
            throw failure;
        }
        if (life.isPlain()) {
            goPlain.run();
        }
        return true;
    }
}
