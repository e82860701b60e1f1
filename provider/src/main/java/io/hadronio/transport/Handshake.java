package io.hadronio.transport;

import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The hello each side sends on the TCP connection before any data: who it is on its
 * UCX worker and how the peer should send to it.
 *
 * <pre>
 *  0       4       6       8          12          16           20          24          28
 * +-------+-------+-------+----------+-----------+------------+-----------+-----------+----------------+
 * | "HNIO"| ver=1 | flags | conn id  | sliceSize | sliceCount | addrLen   | CRC32C    | worker address |
 * +-------+-------+-------+----------+-----------+------------+-----------+-----------+----------------+
 * </pre>
 * Big-endian. Every field is checked against hard bounds before anything is allocated,
 * so garbage, truncated, oversized or foreign (HTTP, ...) input is refused with a
 * {@link ProtocolException} naming what was wrong. The worker address is checked
 * against its CRC32C before UCX sees it: UCX 1.13 trusts addresses and can abort the
 * process on a corrupted one that still looks well-formed.
 *
 * <p>After the hellos the TCP connection carries only {@link #CONTROL_LENGTH}-byte
 * control records: a type byte ({@link #FIN} or {@link #CLOSE}) and a {@code long}.
 */
public final class Handshake {
    public static final int MAGIC = 0x484E494F; // "HNIO"
    public static final short VERSION = 1;
    public static final int HEADER_LENGTH = 28;
    public static final int MAX_ADDRESS_LENGTH = 16 * 1024;
    public static final int MIN_SLICE_SIZE = 1024;
    public static final int MAX_SLICE_SIZE = 16 * 1024 * 1024;
    public static final int MAX_SLICE_COUNT = 1024;

    /** Control record: the sender will send no more DATA than the count it carries. */
    public static final byte FIN = 1;
    /** Control record: the sender closed its channel. */
    public static final byte CLOSE = 2;
    /**
     * Control record: the sender is closing and has messages the receiver must take in
     * (UCX moves large messages only while the receiver progresses): progress until FIN.
     */
    public static final byte NUDGE = 3;
    public static final int CONTROL_LENGTH = 9;

    /** A decoded hello. */
    public record Hello(int connectionId, int sliceSize, int sliceCount, byte[] workerAddress) {
    }

    private Handshake() {
    }

    public static ByteBuffer encode(int connectionId, int sliceSize, int sliceCount, byte[] workerAddress) {
        ByteBuffer b = ByteBuffer.allocate(HEADER_LENGTH + workerAddress.length).order(ByteOrder.BIG_ENDIAN);
        b.putInt(MAGIC).putShort(VERSION).putShort((short) 0).putInt(connectionId).putInt(sliceSize)
                .putInt(sliceCount).putInt(workerAddress.length).putInt(crc(workerAddress, 0, workerAddress.length))
                .put(workerAddress);
        return b.flip();
    }

    /**
     * Validates a complete header (24 bytes, position 0) and returns the address length
     * that follows it.
     */
    public static int checkHeader(ByteBuffer header) throws ProtocolException {
        checkMagic(header);
        short version = header.getShort(4);
        if (version != VERSION) {
            throw new ProtocolException("hadroNIO handshake version " + version + " not supported (this side speaks "
                    + VERSION + ")");
        }
        int sliceSize = header.getInt(12);
        int sliceCount = header.getInt(16);
        int addressLength = header.getInt(20);
        if (sliceSize < MIN_SLICE_SIZE || sliceSize > MAX_SLICE_SIZE) {
            throw new ProtocolException("handshake: slice size " + sliceSize + " out of range");
        }
        if (sliceCount < 2 || sliceCount > MAX_SLICE_COUNT) {
            throw new ProtocolException("handshake: slice count " + sliceCount + " out of range");
        }
        if (addressLength < 1 || addressLength > MAX_ADDRESS_LENGTH) {
            throw new ProtocolException("handshake: worker address length " + addressLength + " out of range");
        }
        return addressLength;
    }

    /** Checks the first four bytes, as soon as they are there: foreign clients are refused at once. */
    public static void checkMagic(ByteBuffer header) throws ProtocolException {
        int magic = header.getInt(0);
        if (magic != MAGIC) {
            throw new ProtocolException(String.format("not a hadroNIO peer (first bytes 0x%08x, expected \"HNIO\")", magic));
        }
    }

    /** Decodes header + address (already checked with {@link #checkHeader}) and verifies the address's checksum. */
    public static Hello decode(ByteBuffer header, ByteBuffer address) throws ProtocolException {
        byte[] addr = new byte[address.remaining()];
        address.get(addr);
        if (crc(addr, 0, addr.length) != header.getInt(24)) {
            throw new ProtocolException("handshake: worker address fails its checksum");
        }
        return new Hello(header.getInt(8), header.getInt(12), header.getInt(16), addr);
    }

    private static int crc(byte[] bytes, int offset, int length) {
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(bytes, offset, length);
        return (int) crc.getValue();
    }

    /** Reads a hello from a blocking stream (the connecting side). */
    public static Hello read(java.io.InputStream in) throws IOException {
        byte[] head = new byte[HEADER_LENGTH];
        System.arraycopy(readFully(in, 4, "handshake header"), 0, head, 0, 4);
        checkMagic(ByteBuffer.wrap(head));
        System.arraycopy(readFully(in, HEADER_LENGTH - 4, "handshake header"), 0, head, 4, HEADER_LENGTH - 4);
        ByteBuffer header = ByteBuffer.wrap(head);
        int length = checkHeader(header);
        return decode(header, ByteBuffer.wrap(readFully(in, length, "worker address")));
    }

    private static byte[] readFully(java.io.InputStream in, int n, String what) throws IOException {
        byte[] b = new byte[n];
        int off = 0;
        while (off < n) {
            int r = in.read(b, off, n - off);
            if (r < 0) {
                throw new ProtocolException("handshake: connection closed by peer after " + off + " of " + n
                        + " bytes of the " + what + " (not a hadroNIO server?)");
            }
            off += r;
        }
        return b;
    }

    public static ByteBuffer control(byte type, long value) {
        return ByteBuffer.allocate(CONTROL_LENGTH).put(type).putLong(value).flip();
    }
}
