package io.hadronio.connection;

import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.util.Arrays;

/**
 * The messages two hadroNIO processes exchange on a new TCP connection before they
 * trust each other with their UCX worker addresses, and their authentication.
 *
 * <h2>Exchange (version 3)</h2>
 * <pre>
 *  client                                    server
 *    CLIENT_HELLO (nonce c, id, slices, worker address, profile)  ->
 *              <-  SERVER_HELLO (nonce s, worker address, profile, MAC_s)   or   PLAIN
 *    FINISH (MAC_c)   or   PLAIN                                  ->
 *              <-  READY (id, slices, MAC_r)   or   PLAIN
 *  MAC_s = HMAC(key, "hadroNIO/3 server" | CLIENT_HELLO | SERVER_HELLO without MAC_s)
 *  MAC_c = HMAC(key, "hadroNIO/3 client" | CLIENT_HELLO | SERVER_HELLO)
 *  MAC_r = HMAC(key, "hadroNIO/3 ready"  | CLIENT_HELLO | SERVER_HELLO | READY without MAC_r)
 * </pre>
 * Each side checks the other's MAC before it hands the other's worker address to UCX
 * (UCX trusts addresses: a crafted one crashes the process). Fresh nonces on both sides
 * make a replayed message fail; the different labels make a reflected one fail. A side
 * whose check fails answers {@code PLAIN}, and both continue on the TCP connection as
 * plain TCP: a peer without the key gets an ordinary connection, never ours. A server
 * with too many hellos from the client's host waiting for their proof answers a further
 * hello with {@code PLAIN} at once: that connection, too, is plain TCP for both.
 *
 * <p>Nothing for a stranger before proof: the server's hello carries only what every
 * connection to it shares (its worker's address, its endpoint profile), so that the
 * server sets up nothing for the connection (no receive area, no endpoint, no connection
 * id) until the client's FINISH has proven the key. What is the connection's own (its
 * receive tag id and slice geometry) comes in READY, authenticated with the key like the
 * server's hello. (Version 2 put them in the server's hello, which made the server
 * allocate a connection for every well-formed hello.)
 *
 * <h2>Frame</h2>
 * <pre>
 *  0       4     5      6            8
 * +-------+-----+------+------------+------ ... ------+
 * | "HNIO"| 3   | kind | bodyLength | body            |
 * +-------+-----+------+------------+------ ... ------+
 * CLIENT_HELLO body: nonce(16) id(4) sliceSize(4) sliceCount(4) addressLength(2) address profileLength(1) profile
 * SERVER_HELLO body: nonce(16) addressLength(2) address profileLength(1) profile MAC(32)
 * FINISH body:       MAC(32)
 * READY body:        id(4) sliceSize(4) sliceCount(4) MAC(32)
 * PLAIN body:        none
 * profile: the UCX settings both endpoints must share (e.g. "peer+mm+cma"); different ones: PLAIN
 * </pre>
 * Big-endian. Every field is checked against hard bounds before anything is allocated
 * or used; anything else is a {@link ProtocolException}. Both sides are the same hadroNIO
 * version: a frame of another version is not one of ours, so the server serves that
 * connection as plain TCP with its bytes intact. The local rendezvous and the upgrade
 * session carry the same version in their frames, so that a local peer of another
 * version never gets as far as this exchange.
 */
public final class HandshakeMessages {
    public static final int MAGIC = 0x484E494F; // "HNIO"
    public static final byte VERSION = 3;
    public static final byte CLIENT_HELLO = 1;
    public static final byte SERVER_HELLO = 2;
    public static final byte FINISH = 3;
    public static final byte READY = 4;
    public static final byte PLAIN = 5;

    public static final int HEADER_LENGTH = 8;
    public static final int NONCE_LENGTH = 16;
    public static final int MAC_LENGTH = 32;
    public static final int MAX_ADDRESS_LENGTH = 16 * 1024;
    public static final int MIN_SLICE_SIZE = 1024;
    public static final int MAX_SLICE_SIZE = 16 * 1024 * 1024;
    public static final int MAX_SLICE_COUNT = 1024;
    public static final int MAX_PROFILE_LENGTH = 64;
    // the fixed fields of a client's hello, and of the server's (without its MAC)
    private static final int HELLO_FIXED = NONCE_LENGTH + 4 + 4 + 4 + 2 + 1;
    private static final int SERVER_HELLO_FIXED = NONCE_LENGTH + 2 + 1;
    private static final int READY_BODY = 4 + 4 + 4 + MAC_LENGTH;
    /** The longest frame there is (a client's hello with the longest address and profile). */
    public static final int MAX_FRAME = HEADER_LENGTH + Math.max(HELLO_FIXED,
            SERVER_HELLO_FIXED + MAC_LENGTH) + MAX_ADDRESS_LENGTH + MAX_PROFILE_LENGTH;

    private static final byte[] SERVER_LABEL = "hadroNIO/3 server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT_LABEL = "hadroNIO/3 client".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] READY_LABEL = "hadroNIO/3 ready".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    /**
     * A decoded client hello (also the upgrade session's HELLO); {@code frame} is the whole
     * frame as received or sent (what the MACs cover).
     */
    public record Hello(int connectionId, int sliceSize, int sliceCount, byte[] workerAddress, String profile,
                        byte[] frame) {
    }

    /** A decoded server hello: what every connection to that server shares. */
    public record ServerHello(byte[] workerAddress, String profile) {
    }

    /** A decoded READY: the server's half of this connection (its receive tag id and slices). */
    public record Ready(int connectionId, int sliceSize, int sliceCount) {
    }

    private HandshakeMessages() {
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(n);
        return n;
    }

    public static byte[] clientHello(int id, int sliceSize, int sliceCount, byte[] address, String profile) {
        byte[] p = profile(profile);
        ByteBuffer b = header(CLIENT_HELLO, HELLO_FIXED + address.length + p.length);
        b.put(nonce()).putInt(id).putInt(sliceSize).putInt(sliceCount).putShort((short) address.length).put(address)
                .put((byte) p.length).put(p);
        return b.array();
    }

    /**
     * The server's hello for {@code clientHello}, with its MAC: the server's worker
     * address and endpoint profile, shared by all its connections on that worker, and
     * nothing of this connection's own (there is none before the client's FINISH).
     */
    public static byte[] serverHello(Secret secret, byte[] clientHello, byte[] address, String profile) {
        byte[] p = profile(profile);
        ByteBuffer b = header(SERVER_HELLO, SERVER_HELLO_FIXED + address.length + p.length + MAC_LENGTH);
        b.put(nonce()).putShort((short) address.length).put(address).put((byte) p.length).put(p);
        byte[] unsigned = Arrays.copyOf(b.array(), b.position());
        b.put(secret.mac(SERVER_LABEL, clientHello, unsigned));
        return b.array();
    }

    /**
     * The server's READY once the client's FINISH proved the key: the connection's receive
     * tag id and slice geometry on the server, with a MAC over both hellos (so that it
     * belongs to this handshake and comes from a holder of the key).
     */
    public static byte[] ready(Secret secret, byte[] clientHello, byte[] serverHello, int id, int sliceSize,
                               int sliceCount) {
        ByteBuffer b = header(READY, READY_BODY);
        b.putInt(id).putInt(sliceSize).putInt(sliceCount);
        byte[] unsigned = Arrays.copyOf(b.array(), b.position());
        b.put(secret.mac(READY_LABEL, clientHello, serverHello, unsigned));
        return b.array();
    }

    /** The client's proof for a server hello that checked out. */
    public static byte[] finish(Secret secret, byte[] clientHello, byte[] serverHello) {
        ByteBuffer b = header(FINISH, MAC_LENGTH);
        b.put(secret.mac(CLIENT_LABEL, clientHello, serverHello));
        return b.array();
    }

    /** The frame without a body: {@link #PLAIN}. */
    public static byte[] signal(byte kind) {
        if (kind != PLAIN) {
            throw new IllegalArgumentException("only PLAIN has no body, not kind " + kind);
        }
        return header(kind, 0).array();
    }

    private static byte[] profile(String profile) {
        byte[] p = profile.getBytes(StandardCharsets.US_ASCII);
        if (p.length > MAX_PROFILE_LENGTH) {
            throw new IllegalArgumentException("endpoint profile too long: " + profile);
        }
        return p;
    }

    private static ByteBuffer header(byte kind, int bodyLength) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + bodyLength).order(ByteOrder.BIG_ENDIAN);
        return b.putInt(MAGIC).put(VERSION).put(kind).putShort((short) bodyLength);
    }

    /** True when the first bytes (as many as there are, up to four) can be the start of a frame. */
    public static boolean mayStartFrame(ByteBuffer received) {
        int n = Math.min(4, received.position());
        for (int i = 0; i < n; i++) {
            if (received.get(i) != (byte) (MAGIC >>> (24 - 8 * i))) {
                return false;
            }
        }
        return true;
    }

    /**
     * The length of the frame that starts at index 0 of {@code received} (filled up to its
     * position), or -1 while its header is incomplete.
     *
     * @throws ProtocolException when the header is not one of ours or is out of bounds
     */
    public static int frameLength(ByteBuffer received) throws ProtocolException {
        if (received.position() < HEADER_LENGTH) {
            if (!mayStartFrame(received)) {
                throw new ProtocolException("not a hadroNIO handshake");
            }
            return -1;
        }
        if (received.getInt(0) != MAGIC) {
            throw new ProtocolException("not a hadroNIO handshake");
        }
        byte version = received.get(4);
        if (version != VERSION) {
            throw new ProtocolException("hadroNIO handshake version " + version + " not supported (this side speaks "
                    + VERSION + ")");
        }
        byte kind = received.get(5);
        int body = Short.toUnsignedInt(received.getShort(6));
        int max = switch (kind) {
            case CLIENT_HELLO -> HELLO_FIXED + MAX_ADDRESS_LENGTH + MAX_PROFILE_LENGTH;
            case SERVER_HELLO -> SERVER_HELLO_FIXED + MAX_ADDRESS_LENGTH + MAX_PROFILE_LENGTH + MAC_LENGTH;
            case FINISH -> MAC_LENGTH;
            case READY -> READY_BODY;
            case PLAIN -> 0;
            default -> throw new ProtocolException("handshake: unknown message kind " + kind);
        };
        int min = switch (kind) {
            case CLIENT_HELLO -> HELLO_FIXED + 1;
            case SERVER_HELLO -> SERVER_HELLO_FIXED + 1 + MAC_LENGTH;
            default -> max;
        };
        if (body < min || body > max) {
            throw new ProtocolException("handshake: message kind " + kind + " with a body of " + body + " bytes");
        }
        return HEADER_LENGTH + body;
    }

    /** The kind of a complete frame. */
    public static byte kind(byte[] frame) {
        return frame[5];
    }

    /**
     * Decodes a complete client hello frame, checking every field. {@code expectedKind} must
     * be {@link #CLIENT_HELLO}, the only hello with a connection's own fields (a server's
     * hello: {@link #decodeServerHello}).
     *
     * @throws ProtocolException when it is of another kind or a field is out of bounds
     */
    public static Hello decodeHello(byte[] frame, byte expectedKind) throws ProtocolException {
        if (expectedKind != CLIENT_HELLO || frame.length < HEADER_LENGTH || kind(frame) != CLIENT_HELLO) {
            throw new ProtocolException("handshake: expected a client hello, got kind "
                    + (frame.length > 5 ? frame[5] : -1));
        }
        ByteBuffer b = body(frame, HELLO_FIXED);
        int id = b.getInt();
        int sliceSize = b.getInt();
        int sliceCount = b.getInt();
        checkSlices(sliceSize, sliceCount);
        byte[] address = address(b, 0);
        String profile = profile(b, 0);
        return new Hello(id, sliceSize, sliceCount, address, profile, frame);
    }

    /**
     * Decodes a complete server hello frame, checking every field (not its MAC:
     * {@link #verifyServerHello}).
     *
     * @throws ProtocolException when it is of another kind or a field is out of bounds
     */
    public static ServerHello decodeServerHello(byte[] frame) throws ProtocolException {
        if (frame.length < HEADER_LENGTH || kind(frame) != SERVER_HELLO) {
            throw new ProtocolException("handshake: expected a server hello, got kind "
                    + (frame.length > 5 ? frame[5] : -1));
        }
        ByteBuffer b = body(frame, SERVER_HELLO_FIXED + MAC_LENGTH);
        byte[] address = address(b, MAC_LENGTH);
        String profile = profile(b, MAC_LENGTH);
        return new ServerHello(address, profile);
    }

    /**
     * Decodes a complete READY frame, checking every field (not its MAC: {@link #verifyReady}).
     *
     * @throws ProtocolException when it is of another kind or a field is out of bounds
     */
    public static Ready decodeReady(byte[] frame) throws ProtocolException {
        if (frame.length != HEADER_LENGTH + READY_BODY || kind(frame) != READY) {
            throw new ProtocolException("handshake: expected READY, got kind " + (frame.length > 5 ? frame[5] : -1)
                    + " of " + frame.length + " bytes");
        }
        ByteBuffer b = body(frame, READY_BODY);
        int id = b.getInt();
        int sliceSize = b.getInt();
        int sliceCount = b.getInt();
        checkSlices(sliceSize, sliceCount);
        return new Ready(id, sliceSize, sliceCount);
    }

    /** The frame's body, past the nonce (a hello's) or from its start, after checking the header against its length. */
    private static ByteBuffer body(byte[] frame, int fixed) throws ProtocolException {
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(0) != MAGIC || b.get(4) != VERSION || frame.length < HEADER_LENGTH + fixed
                || Short.toUnsignedInt(b.getShort(6)) != frame.length - HEADER_LENGTH) {
            throw new ProtocolException("handshake: malformed frame of " + frame.length + " bytes");
        }
        byte kind = kind(frame);
        return b.position(HEADER_LENGTH + (kind == CLIENT_HELLO || kind == SERVER_HELLO ? NONCE_LENGTH : 0));
    }

    private static void checkSlices(int sliceSize, int sliceCount) throws ProtocolException {
        if (sliceSize < MIN_SLICE_SIZE || sliceSize > MAX_SLICE_SIZE) {
            throw new ProtocolException("handshake: slice size " + sliceSize + " out of range");
        }
        if (sliceCount < 2 || sliceCount > MAX_SLICE_COUNT) {
            throw new ProtocolException("handshake: slice count " + sliceCount + " out of range");
        }
    }

    /** The worker address at {@code b}'s position, with {@code after} bytes of the frame behind its profile. */
    private static byte[] address(ByteBuffer b, int after) throws ProtocolException {
        int addressLength = Short.toUnsignedInt(b.getShort());
        if (addressLength < 1 || addressLength > MAX_ADDRESS_LENGTH || addressLength > b.remaining() - after - 1) {
            throw new ProtocolException("handshake: worker address length " + addressLength + " does not fit");
        }
        byte[] address = new byte[addressLength];
        b.get(address);
        return address;
    }

    /** The endpoint profile at {@code b}'s position, which must end {@code after} bytes before the frame does. */
    private static String profile(ByteBuffer b, int after) throws ProtocolException {
        int profileLength = Byte.toUnsignedInt(b.get());
        if (profileLength > MAX_PROFILE_LENGTH || profileLength != b.remaining() - after) {
            throw new ProtocolException("handshake: endpoint profile length " + profileLength + " does not fit");
        }
        byte[] profile = new byte[profileLength];
        b.get(profile);
        return new String(profile, StandardCharsets.US_ASCII);
    }

    /** True when a server hello's MAC proves that the server knows our key and saw our hello. */
    public static boolean verifyServerHello(Secret secret, byte[] clientHello, byte[] serverHello) {
        int unsigned = serverHello.length - MAC_LENGTH;
        byte[] expected = secret.mac(SERVER_LABEL, clientHello, Arrays.copyOf(serverHello, unsigned));
        return Secret.matches(expected, Arrays.copyOfRange(serverHello, unsigned, serverHello.length));
    }

    /** True when a FINISH frame proves that the client knows our key and saw our hello. */
    public static boolean verifyFinish(Secret secret, byte[] clientHello, byte[] serverHello, byte[] finish) {
        if (finish.length != HEADER_LENGTH + MAC_LENGTH || kind(finish) != FINISH) {
            return false;
        }
        byte[] expected = secret.mac(CLIENT_LABEL, clientHello, serverHello);
        return Secret.matches(expected, Arrays.copyOfRange(finish, HEADER_LENGTH, finish.length));
    }

    /** True when a READY frame comes from the server that sent {@code serverHello} in answer to our hello. */
    public static boolean verifyReady(Secret secret, byte[] clientHello, byte[] serverHello, byte[] ready) {
        if (ready.length != HEADER_LENGTH + READY_BODY || kind(ready) != READY) {
            return false;
        }
        int unsigned = ready.length - MAC_LENGTH;
        byte[] expected = secret.mac(READY_LABEL, clientHello, serverHello, Arrays.copyOf(ready, unsigned));
        return Secret.matches(expected, Arrays.copyOfRange(ready, unsigned, ready.length));
    }
}
