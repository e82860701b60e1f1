package io.hadronio.config;

import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * hadroNIO's configuration, read once from system properties at start-up and
 * validated: a bad value fails fast with an {@link IllegalArgumentException} that
 * names the property and the value. Documented in the README ("Configuration").
 *
 * @param enabled          {@code hadronio.enabled}: false runs everything on the JDK's provider
 * @param sliceSize        {@code hadronio.slice.size}: bytes per receive slice and per message (default 64 KiB)
 * @param sliceCount       {@code hadronio.slice.count}: receive slices per connection (default 8); the peer may have as many full slices and four times as many messages unconsumed
 * @param workers          {@code hadronio.workers}: UCX workers shared by blocking channels (default 1)
 * @param polling          {@code hadronio.polling}: busy, event or adaptive (default)
 * @param spinMicros       {@code hadronio.polling.spin}: adaptive mode's busy-poll window in µs (default 100)
 * @param spinYields       {@code hadronio.polling.yield}: after 2 µs adaptive mode yields the core at every turn of its
 *                         spin ({@code Thread.yield}), so that a waiter hands its core to any thread that waits for
 *                         it, and sleeps while a recent yield lost the core for long (default true; false: it spins
 *                         its whole window with CPU pauses)
 * @param handshakeMillis  {@code hadronio.handshake.timeout}: how long the connection handshake may take (default 10000 ms)
 * @param ucx              {@code hadronio.ucx.KEY=VALUE}: passed to UCX as configuration KEY (e.g. hadronio.ucx.TLS=tcp)
 * @param secretFile       {@code hadronio.secret.file}: the key that authenticates peers (default
 *                         {@code ~/.hadronio/secret}, made on first use, readable by its owner only)
 * @param remoteNetworks   {@code hadronio.remote.networks}: networks (CIDR, comma-separated) whose hosts run
 *                         hadroNIO and are accelerated across hosts (default: none, i.e. one host only)
 * @param detectMillis     {@code hadronio.remote.detect.timeout}: how long a server waits for the hello of a
 *                         client from a remote network before it serves it as plain TCP (default 200 ms)
 * @param kernelTcp        {@code hadronio.kernel.tcp}: when UCX would carry a connection over tcp only (no shared
 *                         memory, no RDMA), its bytes take the kernel's TCP connection instead (default true;
 *                         false: UCX's tcp transport)
 * @param upgrade          {@code hadronio.upgrade}: local connections open as plain TCP at once and move to UCX in
 *                         the background (docs/architecture.md, "Upgrade mode"), so that a connection costs what it costs on the JDK
 *                         (default true; false: the authenticated handshake runs before {@code connect} returns and
 *                         the connection is on UCX from its first byte)
 * @param upgradeDelayMicros {@code hadronio.upgrade.delay}: how long a client's connection runs on TCP before it
 *                         may start its upgrade, in microseconds; it starts at a later write than the first
 *                         after that, or once 64 KiB were read (default 1000: a connection closed sooner, or one
 *                         that sends one request and reads its answer, costs nothing for it)
 * @param upgradeWrites    {@code hadronio.upgrade.writes}: writes a client's connection makes on its first path
 *                         before its upgrade may start, unless it wrote or read 64 KiB (default 128; 1: at its
 *                         second write). A move costs about as much as a hundred small round trips gain on UCX, so
 *                         a connection moves once it has spent that much on its first path, as one rents skis
 *                         until their price is spent (never more than twice the better choice, whatever the
 *                         connection's length): short request/response connections never move
 *                         (docs/benchmarks/patterns.md)
 * @param hugePagesBytes   {@code hadronio.hugepages}: at most this many bytes of connections' send and receive areas
 *                         lie in transparent huge pages, which makes large messages over shared memory faster; a
 *                         2 MiB page is resident as a whole once touched (default 32m; 0 turns it off;
 *                         {@code platform/HugePagePool})
 * @param localStream      {@code hadronio.local.stream}: with {@code hadronio.upgrade}, a connection between two
 *                         hadroNIO processes of one user on this host opens over a Unix stream socket instead of
 *                         kernel TCP (no TCP handshake, teardown or TIME_WAIT; {@code connection/LocalStreams}) and
 *                         moves to UCX as a TCP one does (default true; false: kernel TCP)
 * @param sendBufferBytes  {@code hadronio.send.buffer}: bytes of a connection's send slots, the most its non-blocking
 *                         writes take before the peer has read them, as the kernel's send buffer does: what the peer's slices
 *                         have no room for waits in them (default 2m; at least one slot per slice of the peer)
 */
public record HadronioConfig(boolean enabled, int sliceSize, int sliceCount, int workers, Polling polling,
                             long spinMicros, boolean spinYields, int handshakeMillis, Map<String, String> ucx,
                             java.nio.file.Path secretFile, java.util.List<Cidr> remoteNetworks, int detectMillis,
                             boolean kernelTcp, boolean upgrade, long upgradeDelayMicros, int upgradeWrites,
                             long hugePagesBytes,
                             long sendBufferBytes, boolean localStream) {

    /** {@code hadronio.upgrade.delay} in nanoseconds. */
    public long upgradeDelayNanos() {
        return upgradeDelayMicros * 1000;
    }

    /** An IPv4 or IPv6 network, {@code address/prefix}. */
    public record Cidr(byte[] network, int prefix) {
        /** Parses {@code a.b.c.d/n}, {@code v6::/n} or a bare address (a host); null when malformed. */
        static Cidr parse(String text) {
            String s = text.trim();
            int slash = s.indexOf('/');
            String host = slash < 0 ? s : s.substring(0, slash);
            if (host.isEmpty() || !host.matches("[0-9A-Fa-f:.]+")) {
                return null; // a literal only: never a DNS lookup at start-up
            }
            try {
                byte[] addr = java.net.InetAddress.getByName(host).getAddress();
                int prefix = slash < 0 ? addr.length * 8 : Integer.parseInt(s.substring(slash + 1));
                if (prefix < 0 || prefix > addr.length * 8) {
                    return null;
                }
                return new Cidr(addr, prefix);
            } catch (java.io.IOException | NumberFormatException e) {
                return null;
            }
        }

        /** True when {@code address} lies in this network (IPv4-mapped IPv6 addresses count as IPv4). */
        public boolean contains(java.net.InetAddress address) {
            byte[] a = address.getAddress();
            if (a.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (a[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xFF << (8 - rest)) & 0xFF;
            return (a[full] & mask) == (network[full] & mask);
        }

        @Override
        public String toString() {
            try {
                return java.net.InetAddress.getByAddress(network).getHostAddress() + "/" + prefix;
            } catch (java.net.UnknownHostException e) {
                return "?/" + prefix;
            }
        }
    }

    /** How a thread waits for UCX. */
    public enum Polling {
        /** Progress in a loop; lowest latency, one core per waiting thread. */
        BUSY,
        /** Sleep on the worker's event fd at once; no CPU while idle. */
        EVENT,
        /** Busy-poll for {@code hadronio.polling.spin} µs, then sleep on the event fd. */
        ADAPTIVE
    }

    public static final String PREFIX = "hadronio.";
    public static final String UCX_PREFIX = "hadronio.ucx.";

    /** The configuration from {@link System#getProperties()}. */
    public static HadronioConfig fromSystemProperties() {
        return from(System.getProperties());
    }

    public static HadronioConfig from(Properties p) {
        Map<String, String> ucx = new TreeMap<>();
        for (String name : p.stringPropertyNames()) {
            if (name.startsWith(UCX_PREFIX) && name.length() > UCX_PREFIX.length()) {
                ucx.put(name.substring(UCX_PREFIX.length()).toUpperCase(Locale.ROOT), p.getProperty(name));
            } else if (name.startsWith(PREFIX) && !KNOWN.containsKey(name)) {
                throw new IllegalArgumentException("unknown hadroNIO property " + name + "=" + p.getProperty(name)
                        + " (known: " + String.join(", ", KNOWN.keySet()) + ", hadronio.ucx.<UCX key>)");
            }
        }
        return new HadronioConfig(
                bool(p, "hadronio.enabled", true),
                (int) size(p, "hadronio.slice.size", 64 * 1024, 1024, 16 * 1024 * 1024),
                (int) number(p, "hadronio.slice.count", 8, 2, 1024),
                (int) number(p, "hadronio.workers", 1, 1, 64),
                polling(p, "hadronio.polling", Polling.ADAPTIVE),
                number(p, "hadronio.polling.spin", 100, 0, 10_000_000),
                bool(p, "hadronio.polling.yield", true),
                (int) number(p, "hadronio.handshake.timeout", 10_000, 1, 600_000),
                Map.copyOf(ucx),
                secretFile(p, "hadronio.secret.file"),
                networks(p, "hadronio.remote.networks"),
                (int) number(p, "hadronio.remote.detect.timeout", 200, 1, 60_000),
                bool(p, "hadronio.kernel.tcp", true),
                bool(p, "hadronio.upgrade", true),
                number(p, "hadronio.upgrade.delay", 1000, 0, 60_000_000),
                (int) number(p, "hadronio.upgrade.writes", 128, 1, 1_000_000_000),
                size(p, "hadronio.hugepages", 32L << 20, 0, 1L << 40),
                size(p, "hadronio.send.buffer", 2L << 20, 0, 1L << 30),
                bool(p, "hadronio.local.stream", true));
    }

    private static java.nio.file.Path secretFile(Properties p, String name) {
        String v = p.getProperty(name);
        if (v == null) {
            return java.nio.file.Path.of(System.getProperty("user.home"), ".hadronio", "secret");
        }
        if (v.isBlank()) {
            throw bad(name, v, "the path of a file");
        }
        try {
            return java.nio.file.Path.of(v.trim());
        } catch (java.nio.file.InvalidPathException e) {
            throw bad(name, v, "the path of a file");
        }
    }

    private static java.util.List<Cidr> networks(Properties p, String name) {
        String v = p.getProperty(name);
        if (v == null || v.isBlank()) {
            return java.util.List.of();
        }
        java.util.List<Cidr> list = new java.util.ArrayList<>();
        for (String part : v.split(",")) {
            Cidr c = Cidr.parse(part);
            if (c == null) {
                throw bad(name, v, "comma-separated networks such as 10.0.0.0/8 or fd00::/8 ('" + part.trim()
                        + "' is not one)");
            }
            list.add(c);
        }
        return java.util.List.copyOf(list);
    }

    /** True when some hosts are configured to run hadroNIO ({@code hadronio.remote.networks}). */
    public boolean hasRemoteNetworks() {
        return !remoteNetworks.isEmpty();
    }

    /** True when a peer at {@code address} is configured to run hadroNIO across hosts. */
    public boolean isRemoteAccelerated(java.net.InetAddress address) {
        for (Cidr c : remoteNetworks) {
            if (c.contains(address)) {
                return true;
            }
        }
        return false;
    }

    private static final Map<String, String> KNOWN = new TreeMap<>(Map.ofEntries(
            Map.entry("hadronio.enabled", "true|false"),
            Map.entry("hadronio.slice.size", "bytes, 1k..16m"),
            Map.entry("hadronio.slice.count", "2..1024"),
            Map.entry("hadronio.workers", "1..64"),
            Map.entry("hadronio.polling", "busy|event|adaptive"),
            Map.entry("hadronio.polling.spin", "microseconds"),
            Map.entry("hadronio.polling.yield", "true|false"),
            Map.entry("hadronio.handshake.timeout", "milliseconds"),
            Map.entry("hadronio.secret.file", "path"),
            Map.entry("hadronio.remote.networks", "CIDR list"),
            Map.entry("hadronio.remote.detect.timeout", "milliseconds"),
            Map.entry("hadronio.kernel.tcp", "true|false"),
            Map.entry("hadronio.upgrade", "true|false"),
            Map.entry("hadronio.upgrade.delay", "microseconds"),
            Map.entry("hadronio.upgrade.writes", "1..1000000000"),
            Map.entry("hadronio.local.stream", "true|false"),
            Map.entry("hadronio.hugepages", "bytes, 0 (off) or more"),
            Map.entry("hadronio.send.buffer", "bytes, 0..1024m")));

    private static IllegalArgumentException bad(String name, String value, String expected) {
        return new IllegalArgumentException("invalid value for system property " + name + ": '" + value
                + "' (expected " + expected + ")");
    }

    private static boolean bool(Properties p, String name, boolean dflt) {
        String v = p.getProperty(name);
        if (v == null) {
            return dflt;
        }
        return switch (v.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "1", "on" -> true;
            case "false", "no", "0", "off" -> false;
            default -> throw bad(name, v, "true or false");
        };
    }

    private static long number(Properties p, String name, long dflt, long min, long max) {
        String v = p.getProperty(name);
        if (v == null) {
            return dflt;
        }
        try {
            long n = Long.parseLong(v.trim());
            if (n < min || n > max) {
                throw bad(name, v, "a number from " + min + " to " + max);
            }
            return n;
        } catch (NumberFormatException e) {
            throw bad(name, v, "a number from " + min + " to " + max);
        }
    }

    private static long size(Properties p, String name, long dflt, long min, long max) {
        String v = p.getProperty(name);
        if (v == null) {
            return dflt;
        }
        String s = v.trim().toLowerCase(Locale.ROOT);
        long factor = 1;
        if (s.endsWith("k") || s.endsWith("m")) {
            factor = s.endsWith("k") ? 1024 : 1024 * 1024;
            s = s.substring(0, s.length() - 1);
        }
        String expected = "a size from " + min + " to " + max + " bytes (suffix k or m allowed)";
        try {
            long n = Math.multiplyExact(Long.parseLong(s), factor);
            if (n < min || n > max) {
                throw bad(name, v, expected);
            }
            return n;
        } catch (NumberFormatException | ArithmeticException e) {
            throw bad(name, v, expected);
        }
    }

    private static Polling polling(Properties p, String name, Polling dflt) {
        String v = p.getProperty(name);
        if (v == null) {
            return dflt;
        }
        try {
            return Polling.valueOf(v.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw bad(name, v, "busy, event or adaptive");
        }
    }

    /** The polling window in nanoseconds: unbounded for BUSY, 0 for EVENT. */
    public long spinNanos() {
        return switch (polling) {
            case BUSY -> Long.MAX_VALUE;
            case EVENT -> 0;
            case ADAPTIVE -> spinMicros * 1000;
        };
    }

    /** A size as the properties take it: 2m, 512k, or bytes. */
    private static String sizeText(long bytes) {
        return bytes % (1 << 20) == 0 ? (bytes >> 20) + "m" : bytes % 1024 == 0 ? (bytes >> 10) + "k" : String.valueOf(bytes);
    }

    @Override
    public String toString() {
        return "enabled=" + enabled + ", slice.size=" + sliceSize + ", slice.count=" + sliceCount + ", workers="
                + workers + ", polling=" + polling.name().toLowerCase(Locale.ROOT)
                + (polling == Polling.ADAPTIVE ? ", polling.spin=" + spinMicros + "us"
                        + (spinYields ? "" : ", polling.yield=false") : "")
                + ", handshake.timeout=" + handshakeMillis + "ms, hugepages="
                + sizeText(hugePagesBytes) + ", send.buffer=" + sizeText(sendBufferBytes)
                + (remoteNetworks.isEmpty() ? "" : ", remote.networks=" + remoteNetworks + ", remote.detect.timeout="
                + detectMillis + "ms") + (ucx.isEmpty() ? "" : ", ucx=" + ucx);
    }
}
