package io.hadronio.it.netns;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.LocalRendezvous;
import io.hadronio.connection.Secret;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The attacker of {@link HandshakeFuzzTest}: a JVM on the JDK's own provider (no
 * hadroNIO, no key) in a network namespace whose addresses the server has configured
 * as accelerated ({@code hadronio.remote.networks}), so that every connection it makes
 * reaches the server's handshake parser ({@code Peers.Inbound.DETECT}).
 *
 * <p>Each input is a TCP connection with hostile handshake bytes: garbage, truncated,
 * oversized, bit-flipped, of an unknown version or kind, with lying lengths, a hello
 * followed by garbage or by a second frame, a FINISH made with another key, a real
 * client's captured hello and FINISH replayed, the server's own hello reflected, bytes
 * delivered one at a time, nothing at all. For each, an oracle written from the
 * protocol's specification ({@link HandshakeMessages}'s javadoc, not its code) says what
 * the server must do, and the response is checked byte for byte:
 * <ul>
 * <li>not a valid CLIENT_HELLO at the start: the connection is plain TCP with every byte
 *     intact, so the echo server sends exactly the input back, then end-of-stream;</li>
 * <li>a valid CLIENT_HELLO: a well-formed SERVER_HELLO, then, depending on what
 *     follows, PLAIN and the echo of the rest (a complete frame of a known kind that is
 *     not a FINISH with our MAC), the echo of the rest (the client's PLAIN), or nothing
 *     and the connection closed (anything else: refused);</li>
 * <li>or, from the stranger only, PLAIN at once instead of a SERVER_HELLO, then plain
 *     TCP: the echo of everything after the hello, when the server may have had
 *     {@link #MAX_WAITING_HELLOS} other hellos of ours waiting for their proof (the bound
 *     per remote host): only when this fuzzer itself had that many other connections open
 *     whose hello may have been waiting ({@link Waiting}).</li>
 * </ul>
 * A connection that does not end within {@link #HANG_GUARD_MS} is a failure (a hang).
 *
 * <p>In mode {@code keyed} it is instead a local process that holds the key (the same
 * user's {@code ~/.hadronio/secret}): it registers every connection at the server's
 * local rendezvous first, as a hadroNIO client does, so the server expects a handshake
 * from it ({@code Peers.Inbound.EXPECT}), and then sends the same hostile inputs. With
 * the key it can also send a FINISH whose MAC is right, for a hello whose UCX endpoint
 * profile differs from the server's (so that the server answers PLAIN before any of the
 * hello's worker address reaches UCX: a key holder's address is trusted as is, by design).
 *
 * <p>Arguments: {@code stranger|keyed SERVER_ADDRESS SERVER_PORT OWN_ADDRESS THREADS SEED}.
 * Commands on stdin: {@code CAPTURE} (proxies one real client's connection to the server,
 * printing {@code PROXY port}, then {@code CAPTURED ...}, and keeps its frames for
 * replay), {@code PRIME} (keyed: one handshake of its own, with the right key and another
 * profile, whose frames are replayed instead) and {@code RUN FROM COUNT} (inputs
 * FROM..FROM+COUNT-1, each from its own seeded random; prints {@code PROGRESS n},
 * {@code FAIL ...} for each failure and {@code DONE ...}).
 */
public final class HandshakeFuzzer {
    static final int MAGIC = 0x484E494F;
    static final byte VERSION = 3;
    static final byte CLIENT_HELLO = 1;
    static final byte SERVER_HELLO = 2;
    static final byte FINISH = 3;
    static final byte READY = 4;
    static final byte PLAIN = 5;
    static final int HEADER = 8;
    static final int NONCE = 16;
    static final int MAC = 32;
    static final int HELLO_FIXED = NONCE + 4 + 4 + 4 + 2 + 1;
    // version 3: the server's hello has no connection of its own (nonce, address, profile, MAC)
    static final int SERVER_HELLO_FIXED = NONCE + 2 + 1;
    // and READY brings it: id, slice size, slice count, MAC
    static final int READY_BODY = 4 + 4 + 4 + MAC;
    static final int MAX_ADDRESS = 16 * 1024;
    static final int MAX_PROFILE = 64;
    static final byte[] PLAIN_FRAME = {'H', 'N', 'I', 'O', VERSION, PLAIN, 0, 0};

    /** A connection that has not ended after this long hangs: a failure, not a measurement. */
    static final int HANG_GUARD_MS = 20_000;
    /** Longer than the server's hadronio.remote.detect.timeout and hadronio.handshake.timeout (2 s). */
    static final int PAST_SERVER_DEADLINE_MS = 2_500;
    /**
     * The specification's bound: hellos from one remote host that may wait for their proof
     * (FINISH) at once; a further one is answered PLAIN at once, and is plain TCP.
     */
    static final int MAX_WAITING_HELLOS = 8;

    private static InetSocketAddress server;
    // keyed mode: the key, and the rendezvous client that registers each connection
    private static Secret key;
    private static LocalRendezvous rendezvous;
    // keyed mode: the server's UCX endpoint profile (from its hello), which our hellos must never have
    private static volatile String serverProfile;
    private static String ownAddress;
    private static long seed;
    private static int threads;
    // a real client's handshake, captured through the proxy (null until CAPTURE)
    private static volatile byte[] capturedHello;
    private static volatile byte[] capturedFinish;
    private static volatile byte[] capturedClientStream;
    private static volatile byte[] capturedServerHello;
    private static volatile byte[] capturedReady;

    private HandshakeFuzzer() {
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        boolean keyed = args[0].equals("keyed");
        server = new InetSocketAddress(args[1], Integer.parseInt(args[2]));
        ownAddress = args[3];
        threads = Integer.parseInt(args[4]);
        seed = Long.parseLong(args[5]);
        try {
            selfCheck();
            if (keyed) {
                key = Secret.load(java.nio.file.Path.of(System.getProperty("user.home"), ".hadronio", "secret"));
                rendezvous = new LocalRendezvous(key, 10_000, -1);
            }
            // only hosts that proved nothing have their waiting hellos bounded: the stranger, not
            // a client that registered at the rendezvous with the key
            Waiting.bounded = !keyed;
            say("READY");
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.trim().split(" ");
                switch (f[0]) {
                    case "CAPTURE" -> capture();
                    case "PRIME" -> prime();
                    case "RUN" -> run(Integer.parseInt(f[1]), Integer.parseInt(f[2]));
                    default -> say("FATAL unknown command " + line);
                }
            }
        } catch (Throwable t) {
            say("FATAL " + t);
            t.printStackTrace(System.out);
            System.exit(3);
        }
        System.exit(0);
    }

    // ---- the protocol, as its specification states it ----------------------------------------

    private static int u16(byte[] b, int i) {
        return (b[i] & 0xff) << 8 | b[i + 1] & 0xff;
    }

    private static int i32(byte[] b, int i) {
        return (b[i] & 0xff) << 24 | (b[i + 1] & 0xff) << 16 | (b[i + 2] & 0xff) << 8 | b[i + 3] & 0xff;
    }

    /**
     * What the frame starting at {@code off} is: -1 when the bytes there cannot start a
     * frame (magic, version, kind or body length out of bounds), 0 when they may but stop
     * short, else the frame's total length.
     */
    static int frameAt(byte[] b, int off) {
        int n = b.length - off;
        for (int k = 0; k < Math.min(4, n); k++) {
            if (b[off + k] != (byte) (MAGIC >>> (24 - 8 * k))) {
                return -1;
            }
        }
        if (n < HEADER) {
            return 0;
        }
        if (b[off + 4] != VERSION) {
            return -1;
        }
        int body = u16(b, off + 6);
        boolean fits = switch (b[off + 5]) {
            case CLIENT_HELLO -> body >= HELLO_FIXED + 1 && body <= HELLO_FIXED + MAX_ADDRESS + MAX_PROFILE;
            case SERVER_HELLO -> body >= SERVER_HELLO_FIXED + 1 + MAC
                    && body <= SERVER_HELLO_FIXED + MAX_ADDRESS + MAX_PROFILE + MAC;
            case FINISH -> body == MAC;
            case READY -> body == READY_BODY;
            case PLAIN -> body == 0;
            default -> false;
        };
        if (!fits) {
            return -1;
        }
        return n < HEADER + body ? 0 : HEADER + body;
    }

    /** True when {@code b[off..off+length)} is a client's hello whose every field is in bounds. */
    static boolean validHello(byte[] b, int off, int length, byte kind) {
        if (kind != CLIENT_HELLO || length < HEADER + HELLO_FIXED || b[off + 5] != CLIENT_HELLO) {
            return false;
        }
        int body = length - HEADER;
        int p = off + HEADER + NONCE + 4;
        int sliceSize = i32(b, p);
        int sliceCount = i32(b, p + 4);
        int address = u16(b, p + 8);
        if (sliceSize < 1024 || sliceSize > 16 * 1024 * 1024 || sliceCount < 2 || sliceCount > 1024) {
            return false;
        }
        if (address < 1 || address > MAX_ADDRESS || address > body - HELLO_FIXED) {
            return false;
        }
        int profile = b[p + 10 + address] & 0xff;
        return profile <= MAX_PROFILE && profile == body - HELLO_FIXED - address;
    }

    /**
     * True when {@code b[off..off+length)} is a server's hello whose every field is in
     * bounds: nonce, worker address, profile, MAC, and nothing of the connection's own.
     */
    static boolean validServerHello(byte[] b, int off, int length) {
        if (length < HEADER + SERVER_HELLO_FIXED + MAC || b[off + 5] != SERVER_HELLO) {
            return false;
        }
        int body = length - HEADER;
        int p = off + HEADER + NONCE;
        int address = u16(b, p);
        if (address < 1 || address > MAX_ADDRESS || address > body - SERVER_HELLO_FIXED - MAC) {
            return false;
        }
        int profile = b[p + 2 + address] & 0xff;
        return profile <= MAX_PROFILE && profile == body - SERVER_HELLO_FIXED - MAC - address;
    }

    enum Outcome {
        /** plain TCP, bytes intact: exactly the echo, then end-of-stream */
        ECHO,
        /** SERVER_HELLO, then the connection closed */
        REFUSED,
        /** SERVER_HELLO, PLAIN, then plain TCP: the echo of what followed the second frame */
        PLAIN_SENT,
        /** SERVER_HELLO, then plain TCP (the client said PLAIN): the echo of what followed */
        CLIENT_PLAIN
    }

    /**
     * @param afterHello when the input starts with a valid hello, what follows it: the echo
     *                   a hello over the bound gets after the server's PLAIN (else null)
     */
    record Expect(Outcome outcome, byte[] echo, byte[] afterHello) {
        Expect(Outcome outcome, byte[] echo) {
            this(outcome, echo, null);
        }
    }

    /** What the server must answer to {@code input}, sent at once and followed by end-of-stream. */
    static Expect predict(byte[] input) {
        int first = frameAt(input, 0);
        if (first <= 0 || !validHello(input, 0, first, CLIENT_HELLO)) {
            return new Expect(Outcome.ECHO, input);
        }
        byte[] afterHello = Arrays.copyOfRange(input, first, input.length);
        int second = frameAt(input, first);
        if (second <= 0) {
            return new Expect(Outcome.REFUSED, null, afterHello);
        }
        byte[] rest = Arrays.copyOfRange(input, first + second, input.length);
        return new Expect(input[first + 5] == PLAIN ? Outcome.CLIENT_PLAIN : Outcome.PLAIN_SENT, rest, afterHello);
    }

    record Response(byte[] bytes, boolean reset, boolean hung, IOException writeFailure) {
    }

    /**
     * How the oracle counts a hello answered PLAIN at once, its connection then plain TCP
     * (the bound per host): nothing refused, nothing logged above DEBUG.
     */
    static final String OVER_THE_BOUND = "PLAIN at once, plain TCP (our other hellos waiting)";

    /**
     * The stranger's connections that sent a valid hello, as intervals in which the server
     * may have held that hello waiting for its proof. One starts just before the write that
     * completes the hello (a connection that sends anything else has none). It ends when the
     * fuzzer sees that the server is done with it: a PLAIN instead of the server's hello
     * (over the bound), the first byte the server sends after its hello (PLAIN, or the echo
     * of plain TCP: the server took what followed the hello), or the connection's end
     * (end-of-stream or a reset: refused). A
     * connection the fuzzer closes without having seen that ends {@link #CLOSE_SLACK_NANOS}
     * after its close: its FIN or reset still has to reach the server, and may come after
     * another connection's hello that left later from another CPU. The server takes what
     * has arrived on a host's waiting connections before it answers a hello PLAIN for the
     * bound, so that answer is right only if at least {@link #MAX_WAITING_HELLOS} other
     * intervals overlap the connection's, up to the moment it saw the PLAIN. Only the
     * stranger is bounded (a registered client proved the key already).
     */
    static final class Waiting {
        static final long CLOSE_SLACK_NANOS = TimeUnit.MILLISECONDS.toNanos(50);
        // the connection this thread opened last (one at a time but in hellosAtOnce)
        static final ThreadLocal<TrackedSocket> CURRENT = new ThreadLocal<>();
        // every interval {start, end (Long.MAX_VALUE while open), when the server's end was seen (0: not yet)}
        // of a connection that sent a valid hello; ended ones are dropped once no open one can overlap them
        private static final java.util.Set<long[]> ALL = java.util.Collections.newSetFromMap(
                new java.util.IdentityHashMap<>());
        static volatile boolean bounded;
        private static long opened;

        /** A connection is about to write the rest of a valid hello: from now on the server may hold it. */
        static synchronized void helloSent(long[] i) {
            if (ALL.contains(i)) {
                return;
            }
            i[0] = System.nanoTime();
            // an interval that ended before every open one began overlaps nothing any more
            if (++opened % 1024 == 0) {
                long oldestOpen = ALL.stream().filter(x -> x[1] == Long.MAX_VALUE).mapToLong(x -> x[0])
                        .min().orElse(i[0]);
                ALL.removeIf(x -> x[1] < oldestOpen);
            }
            ALL.add(i);
        }

        static synchronized void serverEnded(long[] i) {
            if (i[2] == 0) {
                i[2] = System.nanoTime();
                i[1] = Math.min(i[1], i[2]);
            }
        }

        static synchronized void closed(long[] i) {
            if (i[1] == Long.MAX_VALUE) {
                i[1] = System.nanoTime() + CLOSE_SLACK_NANOS;
            }
        }

        /** True when the server may rightly have answered this thread's current connection's hello PLAIN for the bound. */
        static boolean mayBeOverTheBound() {
            TrackedSocket s = CURRENT.get();
            return s != null && mayBeOverTheBound(s);
        }

        /** True when the server may rightly have answered {@code s}'s hello PLAIN for the bound. */
        static synchronized boolean mayBeOverTheBound(TrackedSocket s) {
            long[] self = s.interval;
            if (!bounded) {
                return false;
            }
            // the server's PLAIN came before we saw it (or the connection's end)
            long answeredBy = self[2] != 0 ? self[2] : System.nanoTime();
            int others = 0;
            for (long[] x : ALL) {
                if (x != self && x[0] < answeredBy && x[1] > self[0]) {
                    others++;
                }
            }
            return others >= MAX_WAITING_HELLOS;
        }
    }

    /** A connection of ours with its {@link Waiting} interval, which starts if what it writes first is a valid hello. */
    static final class TrackedSocket extends Socket {
        private final long[] interval = {System.nanoTime(), Long.MAX_VALUE, 0};
        // the first bytes written, until they tell whether they start with a valid hello
        private ByteArrayOutputStream prefix = new ByteArrayOutputStream();
        private OutputStream out;

        TrackedSocket() {
            Waiting.CURRENT.set(this);
        }

        @Override
        public synchronized OutputStream getOutputStream() throws IOException {
            if (out == null) {
                OutputStream raw = super.getOutputStream();
                out = new OutputStream() {
                    @Override
                    public void write(int b) throws IOException {
                        write(new byte[] {(byte) b}, 0, 1);
                    }

                    @Override
                    public void write(byte[] b, int off, int len) throws IOException {
                        watch(b, off, len);
                        raw.write(b, off, len);
                    }

                    @Override
                    public void flush() throws IOException {
                        raw.flush();
                    }

                    @Override
                    public void close() throws IOException {
                        raw.close();
                    }
                };
            }
            return out;
        }

        /** Before {@code b[off..off+len)} goes out: does it complete a valid hello at the start of the stream? */
        private synchronized void watch(byte[] b, int off, int len) {
            if (prefix == null) {
                return;
            }
            prefix.write(b, off, Math.min(len, HEADER + HELLO_FIXED + MAX_ADDRESS + MAX_PROFILE));
            byte[] p = prefix.toByteArray();
            int f = frameAt(p, 0);
            if (f == 0) {
                return;
            }
            prefix = null;
            if (f > 0 && validHello(p, 0, f, CLIENT_HELLO)) {
                Waiting.helloSent(interval);
            }
        }

        /** The server is done with this connection's hello (see {@link Waiting}). */
        void serverDone() {
            Waiting.serverEnded(interval);
        }

        @Override
        public synchronized void close() throws IOException {
            try {
                super.close();
            } finally {
                Waiting.closed(interval);
            }
        }
    }

    /** Tells {@code s}'s interval that the server is done with it, when it is one of ours. */
    static void serverDone(Socket s) {
        if (s instanceof TrackedSocket t) {
            t.serverDone();
        }
    }

    /**
     * True when {@code got}, the start of the server's answer, goes past a server hello
     * (or is no server hello at all, a PLAIN over the bound among them): the server took
     * what followed our hello.
     */
    static boolean pastServerHello(ByteArrayOutputStream got) {
        if (got.size() == 0) {
            return false;
        }
        byte[] b = got.toByteArray();
        int f = frameAt(b, 0);
        return f < 0 || f > 0 && (b.length > f || b[5] != SERVER_HELLO);
    }

    /** True when {@code b} starts with a PLAIN frame: a hello answered PLAIN at once. */
    static boolean plainAtOnce(byte[] b) {
        return frameAt(b, 0) == HEADER && b[5] == PLAIN;
    }

    /** Null when {@code r} is what {@code e} says; else what is wrong. Counts what it saw. */
    static String check(Expect e, Response r, Stats stats) {
        if (r.hung) {
            return "the connection did not end within " + HANG_GUARD_MS + " ms (received " + r.bytes.length
                    + " bytes)";
        }
        byte[] b = r.bytes;
        if (e.outcome == Outcome.ECHO) {
            if (r.reset || r.writeFailure != null || !Arrays.equals(b, e.echo)) {
                return "expected plain TCP with the " + e.echo.length + " bytes echoed intact, got " + describe(r);
            }
            stats.count("echoed");
            return null;
        }
        if (plainAtOnce(b)) {
            // PLAIN instead of the server's hello: over the bound, as it may be while our other
            // hellos wait; then plain TCP, with everything after our hello echoed intact
            if (!Waiting.mayBeOverTheBound()) {
                return "PLAIN at once for a hello (over the bound per host) while too few of ours waited"
                        + (Waiting.bounded ? "" : " (a registered client is not bounded)") + ": " + describe(r);
            }
            byte[] expected = e.afterHello == null ? null : concat(PLAIN_FRAME, e.afterHello);
            if (r.reset || r.writeFailure != null || !Arrays.equals(b, expected)) {
                return "expected PLAIN at once and the " + (e.afterHello == null ? "?" : e.afterHello.length)
                        + " bytes after our hello echoed, got " + describe(r);
            }
            stats.count(OVER_THE_BOUND);
            return null;
        }
        int hello = frameAt(b, 0);
        if (hello <= 0 || !validServerHello(b, 0, hello)) {
            if (e.outcome == Outcome.REFUSED && r.reset && hello == 0) {
                // the reset of the refusal overtook the rest of the server's hello
                stats.count("refused (hello cut short by the reset)");
                return null;
            }
            return "expected a SERVER_HELLO (" + e.outcome + "), got " + describe(r);
        }
        byte[] after = Arrays.copyOfRange(b, hello, b.length);
        switch (e.outcome) {
            case REFUSED -> {
                if (after.length != 0) {
                    return "expected the connection refused after SERVER_HELLO, got " + after.length
                            + " more bytes: " + describe(r);
                }
                stats.count("refused");
                return null;
            }
            case PLAIN_SENT -> {
                byte[] expected = concat(PLAIN_FRAME, e.echo);
                if (r.reset || r.writeFailure != null || !Arrays.equals(after, expected)) {
                    return "expected SERVER_HELLO, PLAIN and the " + e.echo.length + " bytes after our second frame"
                            + " echoed, got " + describe(r);
                }
                stats.count("hello, PLAIN, plain TCP");
                return null;
            }
            default -> {
                if (r.reset || r.writeFailure != null || !Arrays.equals(after, e.echo)) {
                    return "expected SERVER_HELLO and the " + e.echo.length + " bytes after our PLAIN echoed, got "
                            + describe(r);
                }
                stats.count("hello, our PLAIN, plain TCP");
                return null;
            }
        }
    }

    private static String describe(Response r) {
        return r.bytes.length + " bytes " + hex(r.bytes, 48) + (r.reset ? ", then a reset" : ", then end-of-stream")
                + (r.writeFailure != null ? " (our write failed: " + r.writeFailure + ")" : "");
    }

    static String hex(byte[] b, int max) {
        String h = HexFormat.of().formatHex(b, 0, Math.min(b.length, max));
        return b.length > max ? h + "..." : h;
    }

    static byte[] concat(byte[]... parts) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (byte[] p : parts) {
            out.writeBytes(p);
        }
        return out.toByteArray();
    }

    // ---- frames, built from the specification ---------------------------------------------------

    static byte[] header(int kind, int bodyLength) {
        return new byte[] {'H', 'N', 'I', 'O', VERSION, (byte) kind, (byte) (bodyLength >>> 8), (byte) bodyLength};
    }

    static byte[] hello(byte kind, byte[] nonce, int id, int sliceSize, int sliceCount, byte[] address,
                        byte[] profile, byte[] mac) {
        int body = HELLO_FIXED + address.length + profile.length + (mac == null ? 0 : mac.length);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(HEADER + body);
        b.put(header(kind, body)).put(nonce).putInt(id).putInt(sliceSize).putInt(sliceCount)
                .putShort((short) address.length).put(address).put((byte) profile.length).put(profile);
        if (mac != null) {
            b.put(mac);
        }
        return b.array();
    }

    static byte[] bytes(Random r, int n) {
        byte[] b = new byte[n];
        r.nextBytes(b);
        return b;
    }

    private static final String[] PROFILES = {"peer+tcp", "peer+mm+cma", "none", "", "x"};

    /** A CLIENT_HELLO whose every field is in bounds: the server must answer it. */
    static byte[] validClientHello(Random r) {
        return validClientHello(r, MAX_ADDRESS);
    }

    static byte[] validClientHello(Random r, int maxAddress) {
        int address = switch (r.nextInt(10)) {
            case 0 -> 1;
            case 1 -> maxAddress;
            default -> 1 + r.nextInt(Math.min(400, maxAddress));
        };
        String profile = r.nextInt(4) == 0 ? randomAscii(r, r.nextInt(MAX_PROFILE + 1))
                : PROFILES[r.nextInt(PROFILES.length)];
        int sliceSize = r.nextBoolean() ? 64 * 1024 : 1024 + r.nextInt(16 * 1024 * 1024 - 1024 + 1);
        int sliceCount = r.nextBoolean() ? 8 : 2 + r.nextInt(1023);
        return hello(CLIENT_HELLO, bytes(r, NONCE), r.nextInt(), sliceSize, sliceCount, bytes(r, address),
                profile.getBytes(StandardCharsets.US_ASCII), null);
    }

    private static String randomAscii(Random r, int n) {
        StringBuilder s = new StringBuilder();
        for (int i = 0; i < n; i++) {
            s.append((char) (32 + r.nextInt(95)));
        }
        return s.toString();
    }

    /** A hello with one field out of bounds (or a frame length that disagrees with its fields). */
    static byte[] helloWithFieldOutOfBounds(Random r) {
        byte[] h = validClientHello(r);
        java.nio.ByteBuffer b = java.nio.ByteBuffer.wrap(h);
        int p = HEADER + NONCE + 4;
        int address = u16(h, p + 8);
        switch (r.nextInt(8)) {
            case 0 -> b.putInt(p, r.nextInt(1024));                                  // slice size too small
            case 1 -> b.putInt(p, 16 * 1024 * 1024 + 1 + r.nextInt(Integer.MAX_VALUE - 16 * 1024 * 1024));
            case 2 -> b.putInt(p, -1 - r.nextInt(Integer.MAX_VALUE));                // negative slice size
            case 3 -> b.putInt(p + 4, r.nextInt(2));                                  // slice count < 2
            case 4 -> b.putInt(p + 4, 1025 + r.nextInt(1 << 20));                     // slice count too big
            case 5 -> b.putShort(p + 8, (short) 0);                                   // empty worker address
            case 6 -> b.putShort(p + 8, (short) (address + 1 + r.nextInt(60000 - address))); // address overruns
            default -> b.put(p + 10 + address, (byte) (h[p + 10 + address] + 1 + r.nextInt(254))); // profile length
        }
        return h;
    }

    /** A server's hello (version 3: no connection id or slices), well-formed, with the MAC given. */
    static byte[] serverHello(byte[] nonce, byte[] address, byte[] profile, byte[] mac) {
        int body = SERVER_HELLO_FIXED + address.length + profile.length + mac.length;
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(HEADER + body);
        b.put(header(SERVER_HELLO, body)).put(nonce).putShort((short) address.length).put(address)
                .put((byte) profile.length).put(profile).put(mac);
        return b.array();
    }

    /** A READY, well-formed (fields in bounds), whose MAC is whatever {@code r} makes. */
    static byte[] ready(Random r) {
        java.nio.ByteBuffer b = java.nio.ByteBuffer.allocate(HEADER + READY_BODY);
        b.put(header(READY, READY_BODY)).putInt(r.nextInt()).putInt(64 * 1024).putInt(8).put(bytes(r, MAC));
        return b.array();
    }

    /** A complete frame of another kind than CLIENT_HELLO, well-formed. */
    static byte[] otherFrame(Random r) {
        return switch (r.nextInt(4)) {
            case 0 -> serverHello(bytes(r, NONCE), bytes(r, 1 + r.nextInt(200)),
                    "peer+tcp".getBytes(StandardCharsets.US_ASCII), bytes(r, MAC));
            case 1 -> concat(header(FINISH, MAC), bytes(r, MAC));
            case 2 -> ready(r);
            default -> header(PLAIN, 0);
        };
    }

    /** What a client might send after the server's hello: anything from a plausible frame to garbage. */
    static byte[] secondMessage(Random r) {
        return switch (r.nextInt(16)) {
            case 0, 1, 2 -> concat(header(FINISH, MAC), bytes(r, MAC));               // FINISH, MAC unproven
            case 3 -> header(PLAIN, 0);
            case 4 -> r.nextBoolean() ? ready(r) : header(READY, 0);                 // READY, or one cut to nothing
            case 5 -> validClientHello(r);                                             // a second hello
            case 6 -> otherFrame(r);
            case 7 -> concat(header(FINISH, r.nextInt(65536)), bytes(r, MAC));        // lying length
            case 8 -> concat(header(r.nextBoolean() ? 0 : 6 + r.nextInt(250), MAC), bytes(r, MAC)); // unknown kind
            case 9 -> {                                                                // another version
                byte[] f = concat(header(FINISH, MAC), bytes(r, MAC));
                f[4] = (byte) (r.nextBoolean() ? 1 : 3 + r.nextInt(250));
                yield f;
            }
            case 10 -> Arrays.copyOf(concat(header(FINISH, MAC), bytes(r, MAC)), r.nextInt(HEADER + MAC)); // cut
            case 11 -> bytes(r, 1 + r.nextInt(100));                                   // garbage
            case 12 -> new byte[0];                                                     // nothing
            case 13 -> {                                                               // bit-flipped FINISH
                byte[] f = concat(header(FINISH, MAC), bytes(r, MAC));
                flip(r, f, 1 + r.nextInt(3));
                yield f;
            }
            case 14 -> concat(header(PLAIN, r.nextInt(1, 65536)), bytes(r, r.nextInt(50))); // PLAIN with a body
            default -> concat("HNIO".getBytes(StandardCharsets.US_ASCII), bytes(r, r.nextInt(40)));
        };
    }

    static void flip(Random r, byte[] b, int bits) {
        for (int i = 0; i < bits && b.length > 0; i++) {
            int bit = r.nextInt(b.length * 8);
            b[bit / 8] ^= (byte) (1 << (bit % 8));
        }
    }

    /** The frames this fuzzer builds are what the product builds and accepts (else the oracle is off). */
    private static void selfCheck() throws Exception {
        Random r = new Random(1);
        for (int i = 0; i < 200; i++) {
            byte[] ours = validClientHello(r);
            if (frameAt(ours, 0) != ours.length || !validHello(ours, 0, ours.length, CLIENT_HELLO)) {
                throw new AssertionError("our own hello is not valid by our oracle: " + hex(ours, 64));
            }
            HandshakeMessages.decodeHello(ours, HandshakeMessages.CLIENT_HELLO);
            byte[] theirs = HandshakeMessages.clientHello(r.nextInt(), 64 * 1024, 8, bytes(r, 1 + r.nextInt(300)),
                    "peer+tcp");
            if (frameAt(theirs, 0) != theirs.length || !validHello(theirs, 0, theirs.length, CLIENT_HELLO)) {
                throw new AssertionError("the product's hello is not valid by our oracle: " + hex(theirs, 64));
            }
            Secret someKey = Secret.of(bytes(r, 32));
            byte[] s = HandshakeMessages.serverHello(someKey, theirs, bytes(r, 1 + r.nextInt(300)), "peer+tcp");
            if (frameAt(s, 0) != s.length || !validServerHello(s, 0, s.length)) {
                throw new AssertionError("the product's server hello is not valid by our oracle: " + hex(s, 64));
            }
            byte[] ready = HandshakeMessages.ready(someKey, theirs, s, r.nextInt(), 64 * 1024, 8);
            if (frameAt(ready, 0) != ready.length || ready[5] != READY) {
                throw new AssertionError("the product's READY is not valid by our oracle: " + hex(ready, 64));
            }
            byte[] ourServerHello = serverHello(bytes(r, NONCE), bytes(r, 1 + r.nextInt(300)),
                    "peer+tcp".getBytes(StandardCharsets.US_ASCII), bytes(r, MAC));
            HandshakeMessages.decodeServerHello(ourServerHello);
            HandshakeMessages.decodeReady(ready(r));
            byte[] bad = helloWithFieldOutOfBounds(r);
            if (frameAt(bad, 0) == bad.length && validHello(bad, 0, bad.length, CLIENT_HELLO)) {
                throw new AssertionError("a hello with a field out of bounds is valid by our oracle: " + hex(bad, 64));
            }
        }
    }

    // ---- capturing a real client's handshake ------------------------------------------------------

    /** Relays one real client's connection to the server and keeps what both sides said. */
    private static void capture() throws Exception {
        try (ServerSocket proxy = new ServerSocket()) {
            proxy.bind(new InetSocketAddress(ownAddress, 0));
            proxy.setSoTimeout(60_000);
            say("PROXY " + proxy.getLocalPort());
            try (Socket client = proxy.accept(); Socket upstream = new Socket()) {
                upstream.connect(server, 10_000);
                ByteArrayOutputStream c2s = new ByteArrayOutputStream();
                ByteArrayOutputStream s2c = new ByteArrayOutputStream();
                Thread up = relay(client, upstream, c2s);
                Thread down = relay(upstream, client, s2c);
                up.join(60_000);
                down.join(60_000);
                byte[] c = c2s.toByteArray();
                byte[] s = s2c.toByteArray();
                int hello = frameAt(c, 0);
                int finish = hello > 0 ? frameAt(c, hello) : -1;
                int serverHello = frameAt(s, 0);
                int ready = serverHello > 0 ? frameAt(s, serverHello) : -1;
                if (hello <= 0 || !validHello(c, 0, hello, CLIENT_HELLO) || finish != HEADER + MAC
                        || c[hello + 5] != FINISH || serverHello <= 0 || !validServerHello(s, 0, serverHello)
                        || ready != HEADER + READY_BODY || s[serverHello + 5] != READY) {
                    say("CAPTURE-FAIL client sent " + hex(c, 400) + "; server sent " + hex(s, 400));
                    return;
                }
                capturedHello = Arrays.copyOf(c, hello);
                capturedFinish = Arrays.copyOfRange(c, hello, hello + finish);
                capturedClientStream = c;
                capturedServerHello = Arrays.copyOf(s, serverHello);
                capturedReady = Arrays.copyOfRange(s, serverHello, serverHello + ready);
                say("CAPTURED hello=" + hello + " finish=" + finish + " client-stream=" + c.length + " server-hello="
                        + serverHello + " ready=" + ready + " server-stream=" + s.length);
            }
        }
    }

    private static Thread relay(Socket from, Socket to, ByteArrayOutputStream record) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[64 * 1024];
            try {
                InputStream in = from.getInputStream();
                OutputStream out = to.getOutputStream();
                int n;
                while ((n = in.read(buf)) > 0) {
                    synchronized (record) {
                        record.write(buf, 0, n);
                    }
                    try {
                        out.write(buf, 0, n);
                    } catch (IOException gone) {
                        // the destination closed its socket while the other side still had something to
                        // say (a closing record after the client's own close): a relay ends there, as
                        // a proxy would; what was said is recorded all the same
                        say("RELAY-END destination closed after " + record.size() + " bytes");
                        return;
                    }
                }
                try {
                    to.shutdownOutput();
                } catch (IOException gone) {
                    say("RELAY-END destination reset after " + record.size() + " bytes");
                }
            } catch (IOException e) {
                say("CAPTURE-RELAY " + e);
            }
        }, "relay");
        t.start();
        return t;
    }

    // ---- running inputs -------------------------------------------------------------------------

    /** Counts by name, and failures. */
    static final class Stats {
        final Map<String, AtomicLong> counts = new ConcurrentHashMap<>();
        final AtomicLong failures = new AtomicLong();

        void count(String what) {
            counts.computeIfAbsent(what, k -> new AtomicLong()).incrementAndGet();
        }

        long get(String what) {
            AtomicLong n = counts.get(what);
            return n == null ? 0 : n.get();
        }
    }

    private static void run(int from, int count) throws InterruptedException {
        Stats stats = new Stats();
        AtomicInteger next = new AtomicInteger(from);
        AtomicInteger done = new AtomicInteger();
        int step = Math.max(1, count / 10);
        long started = System.nanoTime();
        Thread[] workers = new Thread[threads];
        for (int t = 0; t < threads; t++) {
            workers[t] = new Thread(() -> {
                int i;
                while ((i = next.getAndIncrement()) < from + count) {
                    String scenario = "?";
                    try {
                        Random r = new Random(seed * 1_000_003L + i);
                        scenario = scenario(i, r);
                        stats.count("scenario " + scenario);
                        String failure = input(i, scenario, r, stats);
                        if (failure != null) {
                            fail(stats, i, scenario, failure);
                        }
                    } catch (Exception | AssertionError e) {
                        fail(stats, i, scenario, e.toString());
                    }
                    int d = done.incrementAndGet();
                    if (d % step == 0) {
                        say("PROGRESS " + d);
                    }
                }
            }, "fuzz-" + t);
            workers[t].start();
        }
        for (Thread w : workers) {
            w.join();
        }
        long ms = (System.nanoTime() - started) / 1_000_000;
        StringBuilder s = new StringBuilder("DONE inputs=" + count + " failures=" + stats.failures.get() + " ms="
                + ms);
        for (var e : new TreeMap<>(stats.counts).entrySet()) {
            s.append(" | ").append(e.getKey()).append('=').append(e.getValue().get());
        }
        long late = LATE_REGISTRATIONS.getAndSet(0);
        if (late > 0) {
            s.append(" | registrations refused as late after a stall of ours (made again)=").append(late);
        }
        say(s.toString());
    }

    private static void fail(Stats stats, int i, String scenario, String why) {
        if (stats.failures.incrementAndGet() <= 50) {
            say("FAIL input " + i + " (seed " + seed + ", " + scenario + "): " + why);
        }
    }

    private static final String[] SCENARIOS;
    private static final int[] WEIGHTS;

    static {
        Object[][] table = {
            {"garbage", 90}, {"nothing", 30}, {"magic-then-garbage", 60}, {"random-header", 60},
            {"truncated-hello", 70}, {"bit-flipped-hello", 110}, {"unknown-version", 40}, {"other-kind-first", 50},
            {"lying-length", 50}, {"oversized", 12}, {"field-out-of-bounds", 60}, {"hello-then-more", 130},
            {"hello-then-plain-then-data", 25}, {"hello-answered-then-more", 60}, {"wrong-key-finish", 30},
            {"reflected-server-hello", 30}, {"replay", 45}, {"chunked", 30}, {"reset-by-client", 10},
            {"closed-without-reading", 10}, {"right-key-other-profile", 30}, {"hellos-at-once", 5},
        };
        SCENARIOS = new String[table.length];
        WEIGHTS = new int[table.length];
        for (int i = 0; i < table.length; i++) {
            SCENARIOS[i] = (String) table[i][0];
            WEIGHTS[i] = (Integer) table[i][1];
        }
    }

    /** The scenario of input {@code i}: the slow ones at fixed places, the others drawn by weight. */
    static String scenario(int i, Random r) {
        switch (i % 10_000) {
            case 101 -> {
                return "silent-past-deadline";
            }
            case 102 -> {
                return "partial-past-deadline";
            }
            case 103 -> {
                return "hello-then-silent";
            }
            case 104, 105, 106 -> {
                return "byte-at-a-time-hello";
            }
            case 107 -> {
                return "byte-at-a-time-garbage";
            }
            default -> {
                int total = Arrays.stream(WEIGHTS).sum();
                int x = r.nextInt(total);
                for (int k = 0; k < WEIGHTS.length; k++) {
                    x -= WEIGHTS[k];
                    if (x < 0) {
                        return SCENARIOS[k];
                    }
                }
                throw new AssertionError();
            }
        }
    }

    /** Runs one input; null when the server did what the oracle says, else what went wrong. */
    static String input(int i, String scenario, Random r, Stats stats) throws Exception {
        return switch (scenario) {
            case "garbage" -> {
                byte[] b = bytes(r, r.nextInt(600));
                if (b.length > 0 && r.nextBoolean()) {
                    b[0] = (byte) (b[0] == 'H' ? 'h' : b[0]);
                }
                yield oneShot(b, stats);
            }
            case "nothing" -> oneShot(new byte[0], stats);
            case "magic-then-garbage" -> oneShot(concat("HNIO".getBytes(StandardCharsets.US_ASCII),
                    bytes(r, r.nextInt(300))), stats);
            case "random-header" -> {
                byte[] h = header(r.nextInt(8), r.nextInt(65536));
                if (r.nextInt(4) == 0) {
                    h[4] = (byte) r.nextInt(256);
                }
                yield oneShot(concat(h, bytes(r, r.nextInt(200))), stats);
            }
            case "truncated-hello" -> {
                byte[] h = validClientHello(r);
                yield oneShot(Arrays.copyOf(h, 1 + r.nextInt(h.length - 1)), stats);
            }
            case "bit-flipped-hello" -> {
                byte[] h = r.nextInt(3) == 0 ? concat(validClientHello(r), secondMessage(r)) : validClientHello(r);
                // the header and the fixed fields are where flips change the outcome: aim there half the time
                if (r.nextBoolean()) {
                    int bit = r.nextInt(Math.min(h.length, HEADER + HELLO_FIXED) * 8);
                    h[bit / 8] ^= (byte) (1 << (bit % 8));
                } else {
                    flip(r, h, 1 + r.nextInt(8));
                }
                yield oneShot(h, stats);
            }
            case "unknown-version" -> {
                byte[] h = concat(validClientHello(r), secondMessage(r));
                h[4] = (byte) (r.nextBoolean() ? r.nextInt(2) : 3 + r.nextInt(253));
                yield oneShot(h, stats);
            }
            case "other-kind-first" -> {
                byte[] f = otherFrame(r);
                if (r.nextInt(3) == 0) {
                    f = validClientHello(r);
                    f[5] = (byte) (r.nextBoolean() ? 0 : 6 + r.nextInt(250));              // unknown kind
                }
                yield oneShot(concat(f, bytes(r, r.nextInt(100))), stats);
            }
            case "lying-length" -> {
                byte[] h = validClientHello(r);
                int body = switch (r.nextInt(4)) {
                    case 0 -> 0xffff;
                    case 1 -> r.nextInt(HELLO_FIXED + 1);                                  // shorter than a hello
                    default -> r.nextInt(65536);
                };
                h[6] = (byte) (body >>> 8);
                h[7] = (byte) body;
                yield oneShot(r.nextBoolean() ? h : concat(h, bytes(r, r.nextInt(20_000))), stats);
            }
            case "oversized" -> {
                byte[] b = switch (r.nextInt(3)) {
                    case 0 -> concat(header(CLIENT_HELLO, 0xffff), bytes(r, 0xffff + r.nextInt(100_000)));
                    case 1 -> bytes(r, 64 * 1024 + r.nextInt(200_000));
                    default -> concat(validClientHello(r), header(FINISH, 0xffff), bytes(r, 0xffff));
                };
                yield oneShot(b, stats);
            }
            case "field-out-of-bounds" -> oneShot(concat(helloWithFieldOutOfBounds(r), r.nextBoolean()
                    ? secondMessage(r) : new byte[0]), stats);
            case "hello-then-more" -> oneShot(concat(validClientHello(r), secondMessage(r),
                    r.nextBoolean() ? bytes(r, r.nextInt(300)) : new byte[0]), stats);
            case "hello-then-plain-then-data" -> oneShot(concat(validClientHello(r), header(PLAIN, 0),
                    bytes(r, r.nextInt(2000))), stats);
            case "hello-answered-then-more" -> answeredThen(validClientHello(r),
                    s -> concat(secondMessage(r), bytes(r, r.nextInt(300))), stats);
            case "right-key-other-profile" -> {
                if (key == null) {
                    // a stranger has no key: the same client with another one
                    yield input(i, "wrong-key-finish", r, stats);
                }
                yield rightKeyOtherProfile(r, stats);
            }
            case "wrong-key-finish" -> {
                // a client with another key: its FINISH is a proper HMAC over both hellos, with the wrong key
                byte[] hello = validClientHello(r);
                yield answeredThen(hello, s -> concat(HandshakeMessages.finish(Secret.of(bytes(r, 32)), hello, s),
                        bytes(r, r.nextInt(300))), stats);
            }
            case "reflected-server-hello" -> reflect(r, stats);
            case "replay" -> replay(r, stats);
            case "hellos-at-once" -> hellosAtOnce(r, stats);
            case "chunked" -> chunked(concat(validClientHello(r), secondMessage(r), bytes(r, r.nextInt(300))), r,
                    stats);
            case "reset-by-client", "closed-without-reading" -> {
                byte[] b = r.nextBoolean() ? bytes(r, r.nextInt(300))
                        : Arrays.copyOf(concat(validClientHello(r), secondMessage(r)), r.nextInt(600));
                Expect e = predict(b);
                stats.count(e.outcome == Outcome.ECHO ? "unobserved" : "unobserved, may be refused");
                try (Socket s = connect()) {
                    s.getOutputStream().write(b);
                    if (scenario.equals("reset-by-client")) {
                        s.setSoLinger(true, 0);
                    }
                } catch (IOException ignored) {
                    // the server refused first: fine, nothing is checked here but the server's health
                }
                yield null;
            }
            case "silent-past-deadline" -> {
                try (Socket s = connect()) {
                    Thread.sleep(PAST_SERVER_DEADLINE_MS);
                    byte[] b = bytes(r, 1 + r.nextInt(100));
                    b[0] = 'x';
                    yield check(new Expect(Outcome.ECHO, b), exchange(s, b, true), stats);
                }
            }
            case "partial-past-deadline" -> {
                byte[] b = concat(validClientHello(r), header(PLAIN, 0), bytes(r, 50));
                int cut = 1 + r.nextInt(HEADER + 4);
                try (Socket s = connect()) {
                    s.getOutputStream().write(b, 0, cut);
                    Thread.sleep(PAST_SERVER_DEADLINE_MS);
                    yield eitherWay(b, exchange(s, Arrays.copyOfRange(b, cut, b.length), true), stats);
                }
            }
            case "hello-then-silent" -> {
                try (Socket s = connect()) {
                    byte[] h = validClientHello(r);
                    s.getOutputStream().write(h);
                    byte[] serverHello;
                    try {
                        serverHello = readServerHello(s);
                    } catch (NoAnswer none) {
                        yield "a valid hello was not answered: " + none.getMessage();
                    } catch (PlainAtOnce plain) {
                        // over the bound: plain TCP now, so our silence is the application's to wait
                        // out; our end of the stream ends it
                        Response rest = exchange(s, new byte[0], true);
                        yield check(predict(h), new Response(concat(PLAIN_FRAME, rest.bytes), rest.reset, rest.hung,
                                rest.writeFailure), stats);
                    }
                    // nothing more: the server must give up on its own (hadronio.handshake.timeout)
                    Response rest = readAll(s, null);
                    yield check(predict(h), new Response(concat(serverHello, rest.bytes), rest.reset, rest.hung,
                            rest.writeFailure), stats);
                }
            }
            case "byte-at-a-time-hello" -> byteAtATime(concat(validClientHello(r, 64), r.nextBoolean()
                    ? concat(header(FINISH, MAC), bytes(r, MAC)) : header(PLAIN, 0), bytes(r, r.nextInt(40))), stats);
            case "byte-at-a-time-garbage" -> byteAtATime(bytes(r, 1 + r.nextInt(100)), stats);
            default -> throw new AssertionError(scenario);
        };
    }

    /**
     * How long the server's rendezvous waits for a REGISTER after its CHALLENGE
     * (LocalRendezvous.SESSION_NANOS): a registration that took longer, counted from before
     * our connect, may rightly have been refused as late.
     */
    static final long SESSION_WINDOW_NANOS = TimeUnit.SECONDS.toNanos(2);

    /** Registrations refused after this harness itself took longer than the session window, and made again. */
    static final AtomicLong LATE_REGISTRATIONS = new AtomicLong();

    static Socket connect() throws IOException {
        while (true) {
            Socket s = new TrackedSocket();
            s.setTcpNoDelay(true);
            s.setSoTimeout(HANG_GUARD_MS);
            if (rendezvous != null) {
                // as a hadroNIO client: register the port we connect from, proving the key
                Exception[] bindFailure = new Exception[1];
                long began = System.nanoTime();
                LocalRendezvous.Outcome outcome = rendezvous.tryRegister(server, () -> {
                    try {
                        s.bind(new InetSocketAddress(ownAddress, 0));
                    } catch (IOException e) {
                        bindFailure[0] = e;
                        throw e;
                    }
                    return (InetSocketAddress) s.getLocalSocketAddress();
                }, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HANG_GUARD_MS));
                long took = System.nanoTime() - began;
                if (outcome == LocalRendezvous.Outcome.REFUSED && took > SESSION_WINDOW_NANOS) {
                    // this JVM was held up (a loaded machine) past the server's window: the server
                    // was right to refuse; only a refusal within the window is its mistake
                    s.close();
                    LATE_REGISTRATIONS.incrementAndGet();
                    continue;
                }
                if (outcome != LocalRendezvous.Outcome.REGISTERED) {
                    s.close();
                    throw new IOException("the server's rendezvous did not register us: " + outcome
                            + (bindFailure[0] != null ? " (" + bindFailure[0] + ")" : "") + " after "
                            + took / 1_000_000 + " ms");
                }
            }
            s.connect(server, HANG_GUARD_MS);
            return s;
        }
    }

    /** The UCX endpoint profile in a valid client hello. */
    static String profile(byte[] hello) {
        int address = u16(hello, HEADER + NONCE + 12);
        int at = HEADER + HELLO_FIXED - 1 + address;
        return new String(hello, at + 1, hello[at] & 0xff, StandardCharsets.US_ASCII);
    }

    /** The UCX endpoint profile in a valid server hello. */
    static String profileOfServerHello(byte[] serverHello) {
        int address = u16(serverHello, HEADER + NONCE);
        int at = HEADER + SERVER_HELLO_FIXED - 1 + address;
        return new String(serverHello, at + 1, serverHello[at] & 0xff, StandardCharsets.US_ASCII);
    }

    /** A valid hello whose profile is surely not the server's. */
    static byte[] otherProfileHello(Random r) {
        String theirs = serverProfile;
        if (theirs == null) {
            throw new AssertionError("the server's profile is unknown (PRIME first)");
        }
        byte[] h;
        do {
            h = validClientHello(r);
        } while (profile(h).equals(theirs));
        return h;
    }

    /**
     * With the key: a FINISH whose MAC is right, for a hello with another endpoint profile.
     * The server must answer PLAIN (and serve plain TCP), never hand the address to UCX.
     */
    static String rightKeyOtherProfile(Random r, Stats stats) throws Exception {
        byte[] hello = otherProfileHello(r);
        return answeredThen(hello, s -> concat(HandshakeMessages.finish(key, hello, s), bytes(r, r.nextInt(300))),
                stats);
    }

    /** Keyed: one handshake of our own, right key and another profile, kept for replay. */
    private static void prime() throws Exception {
        try (Socket s = connect()) {
            byte[] probe = validClientHello(new Random(seed));
            s.getOutputStream().write(probe);
            byte[] serverHello = readServerHello(s);
            serverProfile = profileOfServerHello(serverHello);
        }
        byte[] hello = otherProfileHello(new Random(seed + 1));
        try (Socket s = connect()) {
            s.getOutputStream().write(hello);
            byte[] serverHello = readServerHello(s);
            byte[] finish = HandshakeMessages.finish(key, hello, serverHello);
            Response r = exchange(s, finish, true);
            if (!Arrays.equals(r.bytes, PLAIN_FRAME) || r.reset) {
                say("PRIME-FAIL the server answered a right FINISH for another profile with " + describe(r));
                return;
            }
            capturedHello = hello;
            capturedFinish = finish;
            capturedClientStream = concat(hello, finish);
            capturedServerHello = serverHello;
            capturedReady = PLAIN_FRAME;
            say("PRIMED server profile '" + serverProfile + "', hello=" + hello.length);
        }
    }

    /** Sends {@code input}, then end-of-stream, and checks the whole answer against the oracle. */
    static String oneShot(byte[] input, Stats stats) throws Exception {
        try (Socket s = connect()) {
            return check(predict(input), exchange(s, input, true), stats);
        }
    }

    /** Sends {@code data} (from another thread when it is large), then maybe end-of-stream, and reads to the end. */
    static Response exchange(Socket s, byte[] data, boolean shutdown) throws Exception {
        IOException[] failure = new IOException[1];
        Runnable write = () -> {
            try {
                s.getOutputStream().write(data);
                if (shutdown) {
                    s.shutdownOutput();
                }
            } catch (IOException e) {
                failure[0] = e;
            }
        };
        if (data.length <= 16 * 1024) {
            write.run();
            return readAll(s, failure[0]);
        }
        // the echo comes back while we write: read it meanwhile, or both sides' buffers fill up
        Thread writer = Thread.ofVirtual().start(write);
        Response r = readAll(s, null);
        writer.join();
        return new Response(r.bytes, r.reset, r.hung, failure[0]);
    }

    static Response readAll(Socket s, IOException writeFailure) {
        ByteArrayOutputStream got = new ByteArrayOutputStream();
        byte[] buf = new byte[64 * 1024];
        try {
            InputStream in = s.getInputStream();
            int n;
            boolean done = false;
            while ((n = in.read(buf)) >= 0) {
                got.write(buf, 0, n);
                if (!done && pastServerHello(got)) {
                    serverDone(s);
                    done = true;
                }
            }
            serverDone(s);
            return new Response(got.toByteArray(), false, false, writeFailure);
        } catch (InterruptedIOException e) {
            return new Response(got.toByteArray(), false, true, writeFailure);
        } catch (IOException e) {
            // a reset (refused) or a write that failed on a reset
            serverDone(s);
            return new Response(got.toByteArray(), true, false, writeFailure);
        }
    }

    /** The server ended the connection (end-of-stream or a reset) before any byte of its hello. */
    static final class NoAnswer extends IOException {
        final boolean reset;

        NoAnswer(boolean reset) {
            super(reset ? "reset before any answer" : "end-of-stream before any answer");
            this.reset = reset;
        }
    }

    /** The server answered our hello PLAIN at once (over the bound per host): the connection is plain TCP now. */
    static final class PlainAtOnce extends IOException {
        PlainAtOnce() {
            super("PLAIN instead of the server's hello");
        }
    }

    /**
     * Reads exactly one frame (the server's hello), or throws ({@link NoAnswer} when nothing
     * came, {@link PlainAtOnce} when a PLAIN came instead).
     */
    static byte[] readServerHello(Socket s) throws IOException {
        InputStream in = s.getInputStream();
        int first;
        try {
            first = in.read();
        } catch (SocketException e) {
            serverDone(s);
            throw new NoAnswer(true);
        }
        if (first < 0) {
            serverDone(s);
            throw new NoAnswer(false);
        }
        byte[] header = concat(new byte[] {(byte) first}, in.readNBytes(HEADER - 1));
        if (Arrays.equals(header, PLAIN_FRAME)) {
            serverDone(s);
            throw new PlainAtOnce();
        }
        if (header.length < HEADER || frameAt(header, 0) != 0 || header[5] != SERVER_HELLO) {
            throw new EOFException("expected a SERVER_HELLO, got " + hex(header, 8));
        }
        byte[] body = in.readNBytes(u16(header, 6));
        byte[] frame = concat(header, body);
        if (frameAt(frame, 0) != frame.length || !validServerHello(frame, 0, frame.length)) {
            throw new EOFException("malformed SERVER_HELLO " + hex(frame, 100));
        }
        return frame;
    }

    interface Then {
        byte[] after(byte[] serverHello) throws Exception;
    }

    /**
     * Sends {@code hello}, waits for the server's answer, then sends what {@code then}
     * makes of it and end-of-stream, and checks the rest of the answer. When the answer is
     * PLAIN at once (over the bound), what a client sends then is data, plain TCP: some
     * bytes, our hello among them, which must come back echoed intact.
     */
    static String answeredThen(byte[] hello, Then then, Stats stats) throws Exception {
        try (Socket s = connect()) {
            s.getOutputStream().write(hello);
            byte[] serverHello;
            try {
                serverHello = readServerHello(s);
            } catch (NoAnswer none) {
                return "a valid hello was not answered: " + none.getMessage();
            } catch (PlainAtOnce plain) {
                byte[] data = concat("after PLAIN: ".getBytes(java.nio.charset.StandardCharsets.US_ASCII), hello);
                Response rest = exchange(s, data, true);
                return check(predict(concat(hello, data)), new Response(concat(PLAIN_FRAME, rest.bytes), rest.reset,
                        rest.hung, rest.writeFailure), stats);
            }
            byte[] more = then.after(serverHello);
            Response rest = exchange(s, more, true);
            Response whole = new Response(concat(serverHello, rest.bytes), rest.reset, rest.hung, rest.writeFailure);
            return check(predict(concat(hello, more)), whole, stats);
        }
    }

    /** The server's own hello sent back to it: as the client's second message, as a FINISH's MAC, as a first message. */
    static String reflect(Random r, Stats stats) throws Exception {
        byte[] hello = validClientHello(r);
        return switch (r.nextInt(3)) {
            case 0 -> answeredThen(hello, s -> s, stats);
            case 1 -> answeredThen(hello, s -> concat(header(FINISH, MAC), Arrays.copyOfRange(s, s.length - MAC,
                    s.length)), stats);
            default -> {
                byte[][] got = new byte[1][];
                String failure = answeredThen(hello, s -> {
                    got[0] = s;
                    return header(PLAIN, 0);
                }, stats);
                // and on a connection of its own, as if it were a client's hello: not one, so plain TCP
                // (unless the hello was answered PLAIN at once, rightly: then there is no server hello to send)
                yield failure != null || got[0] == null ? failure : oneShot(got[0], stats);
            }
        };
    }

    /**
     * More hellos from one host than may wait for their proof at once: {@link #MAX_WAITING_HELLOS}
     * + 2 connections each send a valid hello and hold it (nothing more until all are
     * answered). From the stranger at least two must be answered PLAIN at once (its
     * answered hellos all still wait), and each such answer must be one the bound allows;
     * from the registered client none may be. Every one answered with a server hello then
     * says PLAIN and gets plain TCP, bytes intact; every one answered PLAIN at once is plain
     * TCP already and gets what it sends then echoed intact.
     */
    static String hellosAtOnce(Random r, Stats stats) throws Exception {
        int n = MAX_WAITING_HELLOS + 2;
        java.util.List<Socket> sockets = new java.util.ArrayList<>();
        try {
            java.util.List<byte[]> answers = new java.util.ArrayList<>();
            int overTheBound = 0;
            for (int i = 0; i < n; i++) {
                Socket s = connect();
                sockets.add(s);
                s.getOutputStream().write(validClientHello(r, 400));
                try {
                    answers.add(readServerHello(s));
                } catch (NoAnswer none) {
                    return "hello " + i + " of " + n + " held at once was not answered (" + (none.reset ? "reset"
                            : "closed") + ")";
                } catch (PlainAtOnce plain) {
                    if (!(s instanceof TrackedSocket t) || !Waiting.mayBeOverTheBound(t)) {
                        return "hello " + i + " of " + n + " held at once was answered PLAIN at once while too few"
                                + " of ours waited" + (Waiting.bounded ? "" : " (a registered client is not bounded)");
                    }
                    answers.add(null);
                    overTheBound++;
                }
            }
            if (Waiting.bounded && overTheBound < n - MAX_WAITING_HELLOS) {
                return "only " + overTheBound + " of " + n + " hellos held at once from one host were answered PLAIN"
                        + " at once: more than " + MAX_WAITING_HELLOS + " waited for their proof";
            }
            stats.count("hellos at once: answered " + (n - overTheBound));
            for (int i = 0; i < n; i++) {
                byte[] data = bytes(r, 1 + r.nextInt(100));
                if (answers.get(i) == null) {
                    // plain TCP since the server's PLAIN: what we send is data, echoed intact
                    Response rest = exchange(sockets.get(i), data, true);
                    if (rest.reset || rest.hung || rest.writeFailure != null || !Arrays.equals(rest.bytes, data)) {
                        return "hello " + i + " held at once, answered PLAIN at once: expected the " + data.length
                                + " bytes we sent then echoed, got " + describe(rest);
                    }
                    stats.count(OVER_THE_BOUND);
                    continue;
                }
                Response rest = exchange(sockets.get(i), concat(PLAIN_FRAME, data), true);
                String failure = check(new Expect(Outcome.CLIENT_PLAIN, data), new Response(
                        concat(answers.get(i), rest.bytes), rest.reset, rest.hung, rest.writeFailure), stats);
                if (failure != null) {
                    return "hello " + i + " held at once: " + failure;
                }
            }
            return null;
        } finally {
            for (Socket s : sockets) {
                s.close();
            }
        }
    }

    /** A real client's captured handshake, replayed. */
    static String replay(Random r, Stats stats) throws Exception {
        byte[] hello = capturedHello;
        if (hello == null) {
            throw new AssertionError("no captured handshake to replay (CAPTURE first)");
        }
        return switch (r.nextInt(6)) {
            case 0 -> {
                // the captured hello: the server must answer with a fresh nonce, and refuse the old FINISH
                byte[][] fresh = new byte[1][];
                String failure = answeredThen(hello, s -> {
                    fresh[0] = s;
                    return concat(capturedFinish, bytes(r, r.nextInt(300)));
                }, stats);
                // (no server hello when the hello was answered PLAIN at once, rightly)
                if (failure == null && fresh[0] != null
                        && Arrays.equals(Arrays.copyOfRange(fresh[0], HEADER, HEADER + NONCE),
                        Arrays.copyOfRange(capturedServerHello, HEADER, HEADER + NONCE))) {
                    failure = "the server reused its nonce of the captured handshake";
                }
                yield failure;
            }
            case 1 -> oneShot(capturedClientStream, stats);                          // everything the client sent
            case 2 -> oneShot(capturedServerHello, stats);                           // the server's hello, reflected
            case 3 -> oneShot(concat(hello, capturedServerHello), stats);             // ... as the second message
            case 4 -> oneShot(concat(capturedFinish, bytes(r, r.nextInt(100))), stats); // FINISH first
            default -> oneShot(concat(hello, capturedFinish, capturedReady), stats);
        };
    }

    /** The input in small pieces, each its own segment. */
    static String chunked(byte[] input, Random r, Stats stats) throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            int at = 0;
            try {
                while (at < input.length) {
                    int n = Math.min(input.length - at, 1 + r.nextInt(16));
                    out.write(input, at, n);
                    at += n;
                }
            } catch (IOException e) {
                // the server refused before the end (and reset the connection): the answer says whether rightly
                return check(predict(input), readAll(s, e), stats);
            }
            return check(predict(input), exchange(s, new byte[0], true), stats);
        }
    }

    /** One byte per write, a millisecond apart: the whole input may or may not beat the server's deadline. */
    static String byteAtATime(byte[] input, Stats stats) throws Exception {
        try (Socket s = connect()) {
            OutputStream out = s.getOutputStream();
            try {
                for (byte b : input) {
                    out.write(b);
                    Thread.sleep(1);
                }
            } catch (IOException e) {
                return eitherWay(input, readAll(s, e), stats);
            }
            return eitherWay(input, exchange(s, new byte[0], true), stats);
        }
    }

    /**
     * For input that arrived slowly: either the server saw it in time and answered as the
     * oracle says, or its deadline passed first and it served the connection as plain TCP
     * with every byte intact. Anything else is wrong.
     */
    static String eitherWay(byte[] input, Response r, Stats stats) {
        Stats scratch = new Stats();
        String inTime = check(predict(input), r, scratch);
        if (inTime == null) {
            scratch.counts.forEach((k, v) -> stats.count(k));
            return null;
        }
        String late = check(new Expect(Outcome.ECHO, input), r, scratch);
        if (late == null) {
            stats.count("deadline passed: plain TCP, bytes intact");
            return null;
        }
        return inTime + "; nor plain TCP: " + late;
    }
}
