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
 * <h2>Exchange</h2>
 * <pre>
 *  client                                    server
 *    CLIENT_HELLO (nonce c, id, slices, worker address)  ->
 *              <-  SERVER_HELLO (nonce s, id, slices, worker address, MAC_s)
 *    FINISH (MAC_c)   or   PLAIN                        ->
 *              <-  READY   or   PLAIN
 *  MAC_s = HMAC(key, "hadroNIO/2 server" | CLIENT_HELLO | SERVER_HELLO without MAC_s)
 *  MAC_c = HMAC(key, "hadroNIO/2 client" | CLIENT_HELLO | SERVER_HELLO)
 * </pre>
 * Each side checks the other's MAC before it hands the other's worker address to UCX
 * (UCX trusts addresses: a crafted one crashes the process). Fresh nonces on both sides
 * make a replayed message fail; the different labels make a reflected one fail. A side
 * whose check fails answers {@code PLAIN}, and both continue on the TCP connection as
 * plain TCP: a peer without the key gets an ordinary connection, never ours.
 *
 * <h2>Frame</h2>
 * <pre>
 *  0       4     5      6            8
 * +-------+-----+------+------------+------ ... ------+
 * | "HNIO"| 2   | kind | bodyLength | body            |
 * +-------+-----+------+------------+------ ... ------+
 * hello body: nonce(16) id(4) sliceSize(4) sliceCount(4) addressLength(2) address profileLength(1) profile
 *             [MAC(32) server only]
 * profile: the UCX settings both endpoints must share (e.g. "peer+mm+cma"); different ones: PLAIN
 * </pre>
 * Big-endian. Every field is checked against hard bounds before anything is allocated
 * or used; anything else is a {@link ProtocolException}.
 */
public final class HandshakeMessages {
    public static final int MAGIC = 0x484E494F; // "HNIO"
    public static final byte VERSION = 2;
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
    private static final int HELLO_FIXED = NONCE_LENGTH + 4 + 4 + 4 + 2 + 1;
    /** The longest frame there is (a server hello with the longest address). */
    public static final int MAX_FRAME = HEADER_LENGTH + HELLO_FIXED + MAX_ADDRESS_LENGTH + MAX_PROFILE_LENGTH
            + MAC_LENGTH;

    private static final byte[] SERVER_LABEL = "hadroNIO/2 server".getBytes(StandardCharsets.US_ASCII);
    private static final byte[] CLIENT_LABEL = "hadroNIO/2 client".getBytes(StandardCharsets.US_ASCII);
    private static final SecureRandom RANDOM = new SecureRandom();

    /** A decoded hello; {@code frame} is the whole frame as received or sent (what the MACs cover). */
    public record Hello(int connectionId, int sliceSize, int sliceCount, byte[] workerAddress, String profile,
                        byte[] frame) {
    }

    private HandshakeMessages() {
    }

    static byte[] nonce() {
        byte[] n = new byte[NONCE_LENGTH];
        RANDOM.nextBytes(n);
        return n;
    }

    public static byte[] clientHello(int id, int sliceSize, int sliceCount, byte[] address, String profile) {
        return hello(CLIENT_HELLO, id, sliceSize, sliceCount, address, profile, 0).array();
    }

    /** The server's hello for {@code clientHello}, with its MAC. */
    public static byte[] serverHello(Secret secret, byte[] clientHello, int id, int sliceSize, int sliceCount,
                                     byte[] address, String profile) {
        ByteBuffer b = hello(SERVER_HELLO, id, sliceSize, sliceCount, address, profile, MAC_LENGTH);
        byte[] unsigned = Arrays.copyOf(b.array(), b.position());
        b.put(secret.mac(SERVER_LABEL, clientHello, unsigned));
        return b.array();
    }

    /** The client's proof for a server hello that checked out. */
    public static byte[] finish(Secret secret, byte[] clientHello, byte[] serverHello) {
        ByteBuffer b = header(FINISH, MAC_LENGTH);
        b.put(secret.mac(CLIENT_LABEL, clientHello, serverHello));
        return b.array();
    }

    /** A frame without a body: {@link #READY} or {@link #PLAIN}. */
    public static byte[] signal(byte kind) {
        return header(kind, 0).array();
    }

    private static ByteBuffer hello(byte kind, int id, int sliceSize, int sliceCount, byte[] address, String profile,
                                    int extra) {
        byte[] p = profile.getBytes(StandardCharsets.US_ASCII);
        if (p.length > MAX_PROFILE_LENGTH) {
            throw new IllegalArgumentException("endpoint profile too long: " + profile);
        }
        ByteBuffer b = header(kind, HELLO_FIXED + address.length + p.length + extra);
        b.put(nonce()).putInt(id).putInt(sliceSize).putInt(sliceCount).putShort((short) address.length).put(address)
                .put((byte) p.length).put(p);
        return b;
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
            case SERVER_HELLO -> HELLO_FIXED + MAX_ADDRESS_LENGTH + MAX_PROFILE_LENGTH + MAC_LENGTH;
            case FINISH -> MAC_LENGTH;
            case READY, PLAIN -> 0;
            default -> throw new ProtocolException("handshake: unknown message kind " + kind);
        };
        int min = switch (kind) {
            case CLIENT_HELLO -> HELLO_FIXED + 1;
            case SERVER_HELLO -> HELLO_FIXED + 1 + MAC_LENGTH;
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
     * Decodes a complete hello frame of the expected kind, checking every field.
     *
     * @throws ProtocolException when it is of another kind or a field is out of bounds
     */
    public static Hello decodeHello(byte[] frame, byte expectedKind) throws ProtocolException {
        if (frame.length < HEADER_LENGTH || kind(frame) != expectedKind) {
            throw new ProtocolException("handshake: expected a hello of kind " + expectedKind + ", got kind "
                    + (frame.length > 5 ? frame[5] : -1));
        }
        ByteBuffer b = ByteBuffer.wrap(frame).order(ByteOrder.BIG_ENDIAN);
        if (b.getInt(0) != MAGIC || b.get(4) != VERSION || frame.length < HEADER_LENGTH + HELLO_FIXED
                || Short.toUnsignedInt(b.getShort(6)) != frame.length - HEADER_LENGTH) {
            throw new ProtocolException("handshake: malformed hello frame of " + frame.length + " bytes");
        }
        b.position(HEADER_LENGTH + NONCE_LENGTH);
        int id = b.getInt();
        int sliceSize = b.getInt();
        int sliceCount = b.getInt();
        int addressLength = Short.toUnsignedInt(b.getShort());
        int mac = expectedKind == SERVER_HELLO ? MAC_LENGTH : 0;
        if (sliceSize < MIN_SLICE_SIZE || sliceSize > MAX_SLICE_SIZE) {
            throw new ProtocolException("handshake: slice size " + sliceSize + " out of range");
        }
        if (sliceCount < 2 || sliceCount > MAX_SLICE_COUNT) {
            throw new ProtocolException("handshake: slice count " + sliceCount + " out of range");
        }
        if (addressLength < 1 || addressLength > MAX_ADDRESS_LENGTH || addressLength > b.remaining() - mac - 1) {
            throw new ProtocolException("handshake: worker address length " + addressLength + " does not fit");
        }
        byte[] address = new byte[addressLength];
        b.get(address);
        int profileLength = Byte.toUnsignedInt(b.get());
        if (profileLength > MAX_PROFILE_LENGTH || profileLength != b.remaining() - mac) {
            throw new ProtocolException("handshake: endpoint profile length " + profileLength + " does not fit");
        }
        byte[] profile = new byte[profileLength];
        b.get(profile);
        return new Hello(id, sliceSize, sliceCount, address, new String(profile, StandardCharsets.US_ASCII), frame);
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
}
