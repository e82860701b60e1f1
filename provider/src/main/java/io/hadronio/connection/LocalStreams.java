package io.hadronio.connection;

import io.hadronio.platform.LazyLogger;
import io.hadronio.platform.PlatformChannels;
import io.hadronio.platform.PollSet;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;

/**
 * Connections between two hadroNIO processes of one user on this host that do not use
 * kernel TCP at all: a Unix stream socket carries their bytes until the connection moves to
 * UCX, as a TCP connection's would ({@code hadronio.local.stream}).
 *
 * <p>Why: a short TCP connection over loopback costs the kernel a three-way handshake, a
 * four-way teardown and a {@code TIME_WAIT} socket whose port {@code connect(2)} may reuse
 * only after a second; with eight clients both providers spend 85-95 % of both cores in
 * the kernel and meet at the port-reuse ceiling (docs/benchmarks/connections.md). A Unix
 * stream connection has none of that.
 *
 * <p>Every accelerated listener of TCP port {@code P} also listens on a Unix socket named
 * after its bound address and port, our protocol's version and a tag of our key ({@link #name}:
 * peers of two keys never meet here, as they never share UCX) in a directory that only this user can
 * enter, {@code /tmp/hadronio-<uid>/net-<namespace>}: one per network namespace (two
 * namespaces that share {@code /tmp} never meet), checked at start to be a directory of
 * this user with mode {@code 0700} (else the feature is off, and says why). So a process of
 * another user can neither listen there (squat a port's name) nor connect there; a client
 * that finds a name connects, and a name whose listener is gone refuses and the client uses
 * TCP. No authentication runs on the connection itself: the file system's permissions are
 * the check (the rendezvous' key protects the upgrade to UCX).
 *
 * <p>The client holds the local port its TCP connection would have had: its own TCP socket,
 * bound ({@code bind(2)}, never connected: no packets, no {@code TIME_WAIT}), so that both
 * sides report real, unique addresses and the upgrade can name the connection by them. It
 * writes them first, in a fixed {@value #PREAMBLE_LENGTH}-byte preamble (client address and
 * port, destination address and port, a random connection id), which the server reads,
 * bounded by a deadline, before it hands the channel out.
 *
 * <p>A Unix socket's close is never a reset, so a reset is marked for the peer: an abortive
 * close ({@code SO_LINGER} 0, or a broken connection) puts the connection's id and its side in
 * a table of shared memory, the file {@code resets} of the directory ({@link ResetTable}), before
 * its socket closes, and a side that reads the end of a local stream looks for it (and takes
 * it): there, the end is "connection reset", as it is after a TCP RST.
 */
public final class LocalStreams {
    private static final System.Logger LOG = LazyLogger.of(LocalStreams.class);
    /** Bytes of the preamble a client writes first. */
    public static final int PREAMBLE_LENGTH = 51;
    private static final int MAGIC = 0x484e4c53; // "HNLS"
    private static final byte VERSION = 1;
    // sun_path holds 108 bytes with its terminating NUL
    private static final int MAX_PATH = 107;
    // the longest name: the prefix, an IPv6 address, '-', a port
    private static final int MAX_NAME = 3 + 9 + 39 + 1 + 5;
    // how long an accepting server waits for a preamble the client writes right after its connect
    private static final int PREAMBLE_MILLIS = 200;
    // ... and before it sleeps, asks again for this long
    private static final long PREAMBLE_SPIN_NANOS = 20_000;
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    private final Path directory;
    private final SelectorProvider platform;
    // destination -> the name its listener had at the last connect (no look-ups for the next)
    private final java.util.Map<InetSocketAddress, Path> found = new java.util.concurrent.ConcurrentHashMap<>();
    private static final int MAX_FOUND = 1024;
    // destination -> the listeners' epoch (ResetTable) at which it had no listener of ours
    private final java.util.Map<InetSocketAddress, Long> absent = new java.util.concurrent.ConcurrentHashMap<>();

    // SO_SNDBUF of both ends' sockets: a Unix socket holds what its sender's buffer holds (212,992
    // bytes by default), a loopback TCP connection megabytes; the kernel caps it at net.core.wmem_max
    private final int sendBuffer;

    // "s<version>-<key tag>-": processes of two versions, or of two keys, never meet (they use
    // TCP, as peers of two keys always have)
    private final String namePrefix;

    // resets of local streams, shared by the directory's processes
    private final ResetTable resets;

    private LocalStreams(Path directory, SelectorProvider platform, int sendBuffer, String keyTag,
                         ResetTable resets) {
        this.resets = resets;
        this.directory = directory;
        this.platform = platform;
        this.sendBuffer = sendBuffer;
        this.namePrefix = "s" + VERSION + "-" + keyTag + "-";
    }

    /** Gives a new connection's socket the send buffer of a hadroNIO connection (hadronio.send.buffer). */
    private void sizeBuffer(SocketChannel ch) throws IOException {
        if (sendBuffer > 0) {
            ch.setOption(java.net.StandardSocketOptions.SO_SNDBUF, sendBuffer);
        }
    }

    /**
     * The local streams of this process, or null when they cannot be used here (the reason is
     * logged): no {@code /proc}, a directory another user owns or can enter, a path too long.
     */
    public static LocalStreams open(SelectorProvider platform, long sendBufferBytes, Secret secret) {
        try {
            int uid = Peers.ownUid();
            if (uid < 0) {
                throw new IOException("cannot tell this process's user id");
            }
            String ns = Files.readSymbolicLink(Path.of("/proc/self/ns/net")).toString();
            // "net:[4026531840]"
            String inode = ns.replaceAll("[^0-9]", "");
            if (inode.isEmpty()) {
                throw new IOException("cannot tell the network namespace from '" + ns + "'");
            }
            Path base = Path.of("/tmp", "hadronio-" + uid);
            ensurePrivateDirectory(base, uid);
            Path dir = base.resolve("net-" + inode);
            ensurePrivateDirectory(dir, uid);
            if (dir.toString().length() + 1 + MAX_NAME > MAX_PATH) {
                throw new IOException("the path " + dir + " is too long for Unix socket names");
            }
            ResetTable resets = ResetTable.open(dir.resolve("resets"));
            // a tag of the key, not the key: 32 bits of its MAC of a label
            byte[] mac = secret.mac("hadroNIO/local-stream-name".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
            String tag = java.util.HexFormat.of().formatHex(mac, 0, 4);
            return new LocalStreams(dir, platform, (int) Math.min(Integer.MAX_VALUE / 2, sendBufferBytes), tag,
                    resets);
        } catch (IOException | RuntimeException e) {
            LOG.log(System.Logger.Level.INFO, "local connections use kernel TCP (hadronio.local.stream): {0}",
                    e.getMessage());
            return null;
        }
    }

    /**
     * The connection {@code id}, whose socket is {@code fd}, ends with a reset: marks it for the
     * peer, before the socket closes; not when the peer has closed (it will not read on; a
     * peer that closes without reading to the end takes the mark itself).
     */
    public void markReset(long id, boolean client, int fd) {
        if (!PollSet.hungUp(fd)) {
            resets.put(ResetTable.key(id, client));
        }
    }

    /** True when the peer (the client, or the server) of connection {@code id} ended it with a reset (the mark is taken). */
    public boolean takeReset(long id, boolean peerIsClient) {
        return resets.take(ResetTable.key(id, peerIsClient));
    }

    /** Makes {@code dir} if it is missing; throws unless it is a directory of {@code uid} that only it can enter. */
    private static void ensurePrivateDirectory(Path dir, int uid) throws IOException {
        try {
            Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        } catch (FileAlreadyExistsException e) {
            // checked below
        }
        PosixFileAttributes a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        if (!a.isDirectory()) {
            throw new IOException(dir + " is not a directory");
        }
        Object owner = Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (!(owner instanceof Integer o) || o != uid) {
            throw new IOException(dir + " belongs to another user (uid " + owner + ")");
        }
        if (!a.permissions().equals(OWNER_ONLY)) {
            throw new IOException(dir + " has mode " + PosixFilePermissions.toString(a.permissions())
                    + ", not rwx------");
        }
    }

    /**
     * The socket's name for a listener bound to {@code bound}: its address and port, or for the
     * wildcard {@code any4-P} (IPv4 only) or {@code any-P} (IPv6, which takes IPv4 too).
     */
    String name(InetAddress bound, int port) {
        if (bound.isAnyLocalAddress()) {
            return wildcardName(bound instanceof Inet4Address, port);
        }
        InetAddress a = RendezvousMessages.normalize(bound);
        if (a instanceof Inet6Address v6 && v6.getScopeId() != 0) {
            try {
                a = InetAddress.getByAddress(v6.getAddress());
            } catch (UnknownHostException e) {
                throw new IllegalStateException(e);
            }
        }
        return namePrefix + a.getHostAddress() + "-" + port;
    }

    private String wildcardName(boolean ipv4Only, int port) {
        return namePrefix + (ipv4Only ? "any4-" : "any-") + port;
    }

    /** A listener's Unix socket; {@link #close()} removes its name. */
    public final class Listener implements AutoCloseable {
        private final ServerSocketChannel channel;
        private final Path path;
        private final Object fileKey;
        private final InetSocketAddress bound;
        // whether an address a client names as its own is one of this host's
        private final java.util.function.Predicate<InetAddress> isLocal;

        private Listener(ServerSocketChannel channel, Path path, Object fileKey, InetSocketAddress bound,
                         java.util.function.Predicate<InetAddress> isLocal) {
            this.channel = channel;
            this.path = path;
            this.fileKey = fileKey;
            this.bound = bound;
            this.isLocal = isLocal;
        }

        /** Its fd, for epoll. */
        public int fd() {
            return PlatformChannels.fd(channel);
        }

        /**
         * The next connection with its preamble read, or null when none waits (or the one that
         * did sent no valid preamble in time: it is closed). The channel is non-blocking.
         */
        public Accepted accept() throws IOException {
            SocketChannel child = channel.accept();
            if (child == null) {
                return null;
            }
            try {
                child.configureBlocking(false);
                sizeBuffer(child);
                Accepted a = readPreamble(child, bound);
                if (a != null && isLocal.test(a.remote().getAddress())) {
                    return a;
                }
            } catch (IOException e) {
                // the client went away
            }
            try {
                child.close();
            } catch (IOException e) {
                // nothing to do
            }
            return null;
        }

        /** Closes the socket and removes its name, unless another listener took the name over. */
        @Override
        public void close() {
            try {
                channel.close();
            } catch (IOException e) {
                // nothing to do
            }
            try {
                PosixFileAttributes a = Files.readAttributes(path, PosixFileAttributes.class,
                        LinkOption.NOFOLLOW_LINKS);
                if (a.fileKey() != null && a.fileKey().equals(fileKey)) {
                    Files.deleteIfExists(path);
                }
            } catch (IOException e) {
                // gone already
            }
        }
    }

    /** An accepted connection: its channel, the addresses its client wrote, its id. */
    public record Accepted(SocketChannel channel, InetSocketAddress remote, InetSocketAddress local, long id) {
    }

    /** A client's connection: its channel, the local address it holds, its id. */
    public record Connected(SocketChannel channel, InetSocketAddress local, long id) {
    }

    /**
     * Listens for local clients of the TCP listener bound to {@code bound} (which this process
     * holds, so a name left by an earlier holder of the port is stale and goes).
     */
    public Listener listen(InetSocketAddress bound, int backlog, java.util.function.Predicate<InetAddress> isLocal)
            throws IOException {
        Path path = directory.resolve(name(bound.getAddress(), bound.getPort()));
        Files.deleteIfExists(path);
        ServerSocketChannel ch = platform.openServerSocketChannel(StandardProtocolFamily.UNIX);
        try {
            ch.bind(UnixDomainSocketAddress.of(path), backlog);
            ch.configureBlocking(false);
            Object key = Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS).fileKey();
            resets.listenerBound();
            return new Listener(ch, path, key, bound, isLocal);
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    /**
     * Connects to the local hadroNIO listener of {@code destination} if there is one, or
     * returns null (the caller uses TCP). {@code reservation} is the caller's TCP socket: bound
     * here unless it is already, it holds the connection's local port. The channel is
     * non-blocking; nothing in this waits (a full backlog makes it null).
     */
    public Connected connect(InetSocketAddress destination, SocketChannel reservation) {
        return connect(destination, reservation, true);
    }

    private Connected connect(InetSocketAddress destination, SocketChannel reservation, boolean useKnown) {
        InetAddress d = RendezvousMessages.normalize(destination.getAddress());
        if (d.isAnyLocalAddress()) {
            return null;
        }
        int port = destination.getPort();
        InetSocketAddress key = new InetSocketAddress(d, port);
        Path known = useKnown ? found.get(key) : null;
        long epoch = 0;
        if (known == null) {
            epoch = resets.listenerEpoch();
            Long seenAt = absent.get(key);
            if (seenAt != null && seenAt == epoch) {
                return null;
            }
        }
        Path[] paths = known != null ? new Path[] {known}
                : d instanceof Inet4Address
                ? new Path[] {directory.resolve(name(d, port)), directory.resolve(wildcardName(false, port)),
                        directory.resolve(wildcardName(true, port))}
                : new Path[] {directory.resolve(name(d, port)), directory.resolve(wildcardName(false, port))};
        for (Path path : paths) {
            if (known == null && !Files.exists(path, LinkOption.NOFOLLOW_LINKS)) {
                continue;
            }
            SocketChannel ch = null;
            try {
                // the port and the preamble first: the preamble follows the connect at once, since
                // the server, which may take the connection the moment it is queued, waits for it
                InetSocketAddress local = hold(reservation, d);
                // unique, not secret: the marks it names lie in our private directory
                long id = java.util.concurrent.ThreadLocalRandom.current().nextLong();
                ByteBuffer pre = preamble(local, new InetSocketAddress(d, port), id);
                ch = platform.openSocketChannel(StandardProtocolFamily.UNIX);
                ch.configureBlocking(false);
                sizeBuffer(ch);
                if (!ch.connect(UnixDomainSocketAddress.of(path))) {
                    // the listener's backlog is full: TCP waits for it better than we can
                    ch.close();
                    return null;
                }
                if (ch.write(pre) != PREAMBLE_LENGTH) {
                    ch.close();
                    return null;
                }
                if (known == null) {
                    if (found.size() >= MAX_FOUND) {
                        found.clear();
                    }
                    found.put(key, path);
                }
                return new Connected(ch, local, id);
            } catch (IOException | RuntimeException e) {
                // a stale name (its listener died), or the port could not be held
                if (known != null) {
                    found.remove(key, known);
                }
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (IOException ignored) {
                        // nothing to do
                    }
                }
            }
        }
        // the name we knew went away (its listener closed, another may have come): look again
        if (known != null) {
            return connect(destination, reservation, false);
        }
        // no hadroNIO listener of ours there (a plain server, or a stale name): TCP, and no look
        // until some listener binds in the directory (a client of a plain local server looked up to
        // three names per connect: 0.83x the JDK's rate with one client)
        if (absent.size() >= MAX_FOUND) {
            absent.clear();
        }
        absent.put(key, epoch);
        return null;
    }

    /** The connection's local address: the reservation's port, and the address TCP would have used. */
    private static InetSocketAddress hold(SocketChannel reservation, InetAddress destination) throws IOException {
        InetSocketAddress bound = (InetSocketAddress) reservation.getLocalAddress();
        if (bound == null) {
            reservation.bind(new InetSocketAddress(destination, 0));
            bound = (InetSocketAddress) reservation.getLocalAddress();
        }
        InetAddress a = bound.getAddress().isAnyLocalAddress() ? destination : RendezvousMessages.normalize(bound.getAddress());
        return new InetSocketAddress(a, bound.getPort());
    }

    static ByteBuffer preamble(InetSocketAddress local, InetSocketAddress destination, long id) {
        ByteBuffer b = ByteBuffer.allocate(PREAMBLE_LENGTH);
        b.putInt(MAGIC).put(VERSION);
        putAddress(b, local);
        putAddress(b, destination);
        b.putLong(id);
        return b.flip();
    }

    private static void putAddress(ByteBuffer b, InetSocketAddress a) {
        byte[] raw = a.getAddress().getAddress();
        b.put((byte) (raw.length == 4 ? 4 : 6));
        b.put(raw);
        for (int i = raw.length; i < 16; i++) {
            b.put((byte) 0);
        }
        b.putShort((short) a.getPort());
    }

    /**
     * Reads a client's preamble from {@code child} (non-blocking), waiting for it at most
     * {@value #PREAMBLE_MILLIS} ms (the client writes it right after its connect); null when it
     * is not one or names another listener.
     */
    static Accepted readPreamble(SocketChannel child, InetSocketAddress bound) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(PREAMBLE_LENGTH);
        long start = System.nanoTime();
        long deadline = start + PREAMBLE_MILLIS * 1_000_000L;
        int fd = PlatformChannels.fd(child);
        while (b.hasRemaining()) {
            int n = child.read(b);
            if (n < 0) {
                return null;
            }
            if (n == 0) {
                long now = System.nanoTime();
                if (now - start < PREAMBLE_SPIN_NANOS) {
                    // the client writes it right after its connect: a few microseconds, which a
                    // sleep in poll(2) and the wake-up after would multiply
                    Thread.onSpinWait();
                    continue;
                }
                long left = (deadline - now) / 1_000_000;
                if (left <= 0) {
                    return null;
                }
                PollSet.pollOne(fd, PollSet.POLLIN, (int) left);
            }
        }
        b.flip();
        if (b.getInt() != MAGIC || b.get() != VERSION) {
            return null;
        }
        InetSocketAddress remote = getAddress(b);
        InetSocketAddress local = getAddress(b);
        long id = b.getLong();
        if (remote == null || local == null || local.getPort() != bound.getPort() || remote.getPort() == 0) {
            return null;
        }
        InetAddress boundAddress = bound.getAddress();
        if (!boundAddress.isAnyLocalAddress()
                && !RendezvousMessages.normalize(boundAddress).equals(local.getAddress())) {
            return null;
        }
        return new Accepted(child, remote, local, id);
    }

    private static InetSocketAddress getAddress(ByteBuffer b) {
        int family = b.get();
        byte[] raw = new byte[16];
        b.get(raw);
        int port = Short.toUnsignedInt(b.getShort());
        if (family != 4 && family != 6) {
            return null;
        }
        try {
            InetAddress a = InetAddress.getByAddress(family == 4 ? java.util.Arrays.copyOf(raw, 4) : raw);
            return new InetSocketAddress(RendezvousMessages.normalize(a), port);
        } catch (UnknownHostException e) {
            return null;
        }
    }

    @Override
    public String toString() {
        return "LocalStreams[" + directory + "]";
    }
}
