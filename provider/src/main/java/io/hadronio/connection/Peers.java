package io.hadronio.connection;

import io.hadronio.observe.Fallback;

import io.hadronio.config.HadronioConfig;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/**
 * Who speaks hadroNIO: the decision, for each new TCP connection, whether it is
 * accelerated or plain TCP. It never guesses on one host: a peer there is ours only
 * when it proved it through the {@link LocalRendezvous} before the TCP connection
 * existed. Across hosts, peers in {@code hadronio.remote.networks} are assumed to run
 * hadroNIO (opt-in): clients speak first, and a server waits at most
 * {@code hadronio.remote.detect.timeout} for their hello before serving them as plain
 * TCP. Everyone else is plain TCP, byte for byte and without delay.
 */
public final class Peers {
    /** How a server treats an accepted connection. */
    public enum Inbound {
        /** Not one of ours: plain TCP, nothing read or written by us. */
        PLAIN,
        /** A registered local client: its hello comes first (anything else: plain, bytes kept). */
        EXPECT,
        /** A client from a network configured as accelerated: wait a bounded time for its hello. */
        DETECT
    }

    private final HadronioConfig config;
    private final Secret secret;
    private final LocalRendezvous rendezvous;
    // this host's addresses
    private final LocalAddresses local;

    public Peers(HadronioConfig config, LocalAddresses local, Secret secret) throws IOException {
        this.config = config;
        this.local = local;
        this.secret = secret;
        this.rendezvous = new LocalRendezvous(secret, config.handshakeMillis(),
                System.getProperty("hadronio.secret.file") == null ? ownUid() : -1);
        // first use of the MAC and the random source costs a cold JVM hundreds of ms (provider
        // lookup, seeding): pay it now, not inside the first connection's rendezvous
        secret.mac(HandshakeMessages.nonce());
    }

    /** This process's user id ({@code /proc/self} belongs to it), or -1 when unknown. */
    static int ownUid() {
        try {
            Object uid = java.nio.file.Files.getAttribute(java.nio.file.Path.of("/proc/self"), "unix:uid");
            return uid instanceof Integer i ? i : -1;
        } catch (IOException | UnsupportedOperationException | IllegalArgumentException e) {
            return -1;
        }
    }

    public Secret secret() {
        return secret;
    }

    public LocalRendezvous rendezvous() {
        return rendezvous;
    }

    /** True when {@code address} is an address of this host (in this network namespace). */
    public boolean isLocal(InetAddress address) {
        return local.isLocal(address);
    }

    /**
     * For a client about to connect to {@code destination}: null when it should speak the
     * handshake (the server proved it expects us, or the destination's network is configured
     * as accelerated), else why the connection is plain TCP: no accelerated listener
     * ({@link Fallback#PEER_PLAIN}), one of another user or key ({@link Fallback#OTHER_KEY}:
     * it refused our registration or did not prove the key), or a destination in no configured
     * network ({@link Fallback#NOT_IN_REMOTE_NETWORKS}).
     *
     * @param bind binds the connecting socket if it is not bound yet and returns its
     *             local address; called only when an accelerated listener answers
     * @throws IOException when a local server took our registration but never confirmed it
     *                     (neither plain nor accelerated is safe then)
     */
    public Fallback whyPlain(InetSocketAddress destination, Callable<InetSocketAddress> bind, long deadline)
            throws IOException {
        InetAddress a = destination.getAddress();
        if (isLocal(a)) {
            return switch (rendezvous.tryRegister(destination, bind, deadline)) {
                case REGISTERED -> null;
                case OTHER_USER, REFUSED, BAD_ANSWER -> Fallback.OTHER_KEY;
                default -> Fallback.PEER_PLAIN;
            };
        }
        return config.isRemoteAccelerated(a) ? null : Fallback.NOT_IN_REMOTE_NETWORKS;
    }

    /** For a server that accepted a connection from {@code remote} on {@code localPort}. */
    public Inbound inbound(InetSocketAddress remote, int localPort) {
        InetAddress a = remote.getAddress();
        if (isLocal(a)) {
            return rendezvous.claim(remote, localPort) ? Inbound.EXPECT : Inbound.PLAIN;
        }
        return config.isRemoteAccelerated(a) ? Inbound.DETECT : Inbound.PLAIN;
    }

    /** How long a server waits for the first bytes of a client from a remote network. */
    public long detectNanos() {
        return TimeUnit.MILLISECONDS.toNanos(config.detectMillis());
    }
}
