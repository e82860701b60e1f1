package io.hadronio.connection;

import io.hadronio.platform.UnixSeqpacket;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The local rendezvous's messages ({@link LocalRendezvous}, {@link UpgradeSession}): an
 * 8-byte header (magic, version, kind, body length), the listener's CHALLENGE (a nonce), the
 * client's REGISTER (destination and client address and port, MAC over the nonce) and the
 * listener's REGISTERED (its MAC) or NOT_HERE. Every message is checked field by field before
 * anything in it is used; one that is malformed or does not authenticate is no message.
 */
public final class RendezvousMessages {
    static final int MAGIC = HandshakeMessages.MAGIC;
    static final byte CHALLENGE = 10;
    static final byte REGISTER = 11;
    static final byte REGISTERED = 12;
    static final byte NOT_HERE = 13;
    // a client already connected over TCP asks to upgrade that connection (see UpgradeSession)
    static final byte REGISTER_UPGRADE = 14;
    static final int HEADER = 8;
    /** The header's length. */
    public static final int HEADER_LENGTH = HEADER;
    static final int MAX_MESSAGE = 128;
    static final byte[] REGISTER_LABEL = "hadroNIO/2 register".getBytes(StandardCharsets.US_ASCII);
    static final byte[] REGISTERED_LABEL = "hadroNIO/2 registered".getBytes(StandardCharsets.US_ASCII);
    static final byte[] UPGRADE_LABEL = "hadroNIO/2 upgrade".getBytes(StandardCharsets.US_ASCII);
    static final byte[] UPGRADED_LABEL = "hadroNIO/2 upgrade accepted".getBytes(StandardCharsets.US_ASCII);

    private RendezvousMessages() {
    }

    /** What a REGISTER says: the client's bound address (null when bound to the wildcard) and port, and its destination port. */
    record Registration(InetAddress clientAddress, int clientPort, int destinationPort) {
    }

    static ByteBuffer header(byte kind, int bodyLength) {
        return ByteBuffer.allocate(HEADER + bodyLength).putInt(MAGIC).put(HandshakeMessages.VERSION).put(kind)
                .putShort((short) bodyLength);
    }

    /** REGISTER body: destination port(2) address length(1) address, client port(2) address length(1, 0: wildcard) address, MAC. */
    static byte[] encodeRegister(Secret secret, byte[] nonce, InetAddress destination, int destinationPort,
                                 InetAddress client, int clientPort) {
        return encodeRegister(secret, nonce, destination, destinationPort, client, clientPort, REGISTER, REGISTER_LABEL);
    }

    static byte[] encodeRegister(Secret secret, byte[] nonce, InetAddress destination, int destinationPort,
                                 InetAddress client, int clientPort, byte kind, byte[] label) {
        byte[] d = normalize(destination).getAddress();
        byte[] c = client == null ? new byte[0] : normalize(client).getAddress();
        int body = 2 + 1 + d.length + 2 + 1 + c.length + HandshakeMessages.MAC_LENGTH;
        ByteBuffer b = header(kind, body);
        b.putShort((short) destinationPort).put((byte) d.length).put(d).putShort((short) clientPort)
                .put((byte) c.length).put(c);
        byte[] unsigned = java.util.Arrays.copyOf(b.array(), b.position());
        b.put(secret.mac(label, nonce, unsigned));
        return b.array();
    }

    /** The registration in a REGISTER message, or null when it is malformed or does not authenticate. */
    static Registration decodeRegister(Secret secret, byte[] m, byte[] nonce, boolean truncated,
                                                       byte kind, byte[] label) {
        try {
            if (truncated || m.length < HEADER + 2 + 1 + 4 + 2 + 1 + HandshakeMessages.MAC_LENGTH) {
                return null;
            }
            ByteBuffer b = ByteBuffer.wrap(m);
            if (b.getInt() != MAGIC || b.get() != HandshakeMessages.VERSION || b.get() != kind
                    || Short.toUnsignedInt(b.getShort()) != m.length - HEADER) {
                return null;
            }
            int destinationPort = Short.toUnsignedInt(b.getShort());
            byte[] d = address(b);
            int clientPort = Short.toUnsignedInt(b.getShort());
            byte[] c = address(b);
            if (d == null || d.length == 0 || c == null || b.remaining() != HandshakeMessages.MAC_LENGTH) {
                return null;
            }
            byte[] unsigned = java.util.Arrays.copyOf(m, b.position());
            byte[] mac = java.util.Arrays.copyOfRange(m, b.position(), m.length);
            if (!Secret.matches(secret.mac(label, nonce, unsigned), mac)) {
                return null;
            }
            return new Registration(c.length == 0 ? null : InetAddress.getByAddress(c), clientPort, destinationPort);
        } catch (RuntimeException | UnknownHostException e) {
            return null;
        }
    }

    static InetAddress destinationOf(byte[] register) throws UnknownHostException {
        ByteBuffer b = ByteBuffer.wrap(register);
        b.position(HEADER + 2);
        return normalize(InetAddress.getByAddress(address(b)));
    }

    /** A length-prefixed address: 0, 4 or 16 bytes; null for any other length. */
    static byte[] address(ByteBuffer b) {
        int n = Byte.toUnsignedInt(b.get());
        if (n != 0 && n != 4 && n != 16) {
            return null;
        }
        byte[] a = new byte[n];
        b.get(a);
        return a;
    }

    /** IPv4-mapped IPv6 addresses as IPv4, so that both sides name one host alike. */
    public static InetAddress normalize(InetAddress a) {
        if (a instanceof Inet6Address) {
            byte[] b = a.getAddress();
            boolean mapped = b[10] == (byte) 0xFF && b[11] == (byte) 0xFF;
            for (int i = 0; i < 10 && mapped; i++) {
                mapped = b[i] == 0;
            }
            if (mapped) {
                try {
                    return Inet4Address.getByAddress(new byte[] {b[12], b[13], b[14], b[15]});
                } catch (UnknownHostException e) {
                    return a;
                }
            }
        }
        return a;
    }

    static boolean isHeader(byte[] m, byte kind) {
        ByteBuffer b = ByteBuffer.wrap(m);
        return b.getInt() == MAGIC && b.get() == HandshakeMessages.VERSION && b.get() == kind
                && Short.toUnsignedInt(b.getShort()) == m.length - HEADER;
    }

    /** The next message before {@code deadline}; null at its end, past the deadline, or for a truncated one. */
    static byte[] receive(UnixSeqpacket s, long deadline) throws IOException {
        while (true) {
            byte[] m = s.receive(MAX_MESSAGE);
            if (m != null) {
                return s.truncated() ? null : m;
            }
            if (s.status() == UnixSeqpacket.EOF || !s.awaitReadable(deadline)) {
                return null;
            }
        }
    }
}
