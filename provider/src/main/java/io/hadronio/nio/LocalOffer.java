package io.hadronio.nio;

import io.hadronio.connection.LocalStreams;
import io.hadronio.platform.EPollSet;
import io.hadronio.runtime.UcxRuntime;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.channels.ServerSocketChannel;

/**
 * How a bound server channel offers itself to local hadroNIO clients: its port registered at
 * the rendezvous ({@link io.hadronio.connection.LocalRendezvous}), so that they find it, and,
 * where connections upgrade, a listener of local Unix stream connections ({@link LocalStreams}),
 * so that they connect without kernel TCP. Neither with SO_REUSEPORT: another process (maybe a
 * plain one) may then share the port, and a client that registered with us could land on it.
 * Made at bind, withdrawn at close.
 */
final class LocalOffer {
    private final UcxRuntime runtime;
    // told of every registration at the rendezvous
    private final Runnable onRegistered;
    // where the local rendezvous listens for this channel's clients (null: it does not)
    private final InetSocketAddress rendezvousAddress;
    // local hadroNIO clients' Unix stream connections; null: none come
    private final LocalStreams.Listener streamListener;
    // what a selector polls when streamListener is there: an epoll set of both listeners' fds
    // (level-triggered, so readable while either has a connection); null otherwise, and once
    // closed (under the channel's accept lock)
    private EPollSet listeners;
    // the fd a selector polls for the channel: the kernel listener's, or listeners'
    private final int pollFd;

    /**
     * Offers the bound kernel listener {@code tcp} (its fd {@code listenerFd}); a stream listener's
     * connections end {@code acceptWait}'s waits too.
     *
     * @param runtime      null when its start failed: nothing is offered
     * @param onRegistered runs at each registration at the rendezvous: a handshake will follow
     */
    LocalOffer(UcxRuntime runtime, ServerSocketChannel tcp, int listenerFd, int backlog, Runnable onRegistered,
               AcceptWait acceptWait) throws IOException {
        this.runtime = runtime;
        this.onRegistered = onRegistered;
        Boolean reusePort = tcp.supportedOptions().contains(StandardSocketOptions.SO_REUSEPORT)
                ? tcp.getOption(StandardSocketOptions.SO_REUSEPORT) : Boolean.FALSE;
        InetSocketAddress local = runtime == null || Boolean.TRUE.equals(reusePort) ? null
                : (InetSocketAddress) tcp.getLocalAddress();
        rendezvousAddress = local;
        if (local != null) {
            runtime.peers().rendezvous().listen(local.getAddress(), local.getPort(), onRegistered);
        }
        streamListener = local == null ? null : listenStreams(local, backlog);
        if (streamListener == null) {
            pollFd = listenerFd;
            return;
        }
        EPollSet both = new EPollSet(2);
        both.add(listenerFd, EPollSet.EPOLLIN);
        both.add(streamListener.fd(), EPollSet.EPOLLIN);
        acceptWait.addListener(streamListener.fd());
        listeners = both;
        pollFd = both.fd();
    }

    /** A local stream listener where connections upgrade; null where they do not, or it failed (local clients use TCP). */
    private LocalStreams.Listener listenStreams(InetSocketAddress local, int backlog) {
        LocalStreams streams = runtime.localStreams();
        if (streams == null || runtime.upgrades() == null) {
            return null;
        }
        try {
            return streams.listen(local, backlog, runtime::isLocal);
        } catch (IOException e) {
            return null;
        }
    }

    /** The fd a selector polls for the channel. */
    int pollFd() {
        return pollFd;
    }

    /** The next local stream connection, or null. */
    LocalStreams.Accepted accept() throws IOException {
        LocalStreams.Listener l = streamListener;
        return l == null ? null : l.accept();
    }

    /** The channel closes: no local client may connect or register any more (first, before the kernel listener closes). */
    void withdraw() throws IOException {
        if (streamListener != null) {
            streamListener.close();
        }
        InetSocketAddress r = rendezvousAddress;
        if (r != null) {
            runtime.peers().rendezvous().unlisten(r.getAddress(), r.getPort(), onRegistered);
        }
    }

    /** Closes the selector's poll set, once; under the channel's accept lock (a blocked accept may still use it). */
    void closePollSet() {
        EPollSet l = listeners;
        if (l != null) {
            listeners = null;
            l.close();
        }
    }
}
