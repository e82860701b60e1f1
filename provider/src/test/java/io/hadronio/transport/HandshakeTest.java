package io.hadronio.transport;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.ByteArrayInputStream;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class HandshakeTest {
    private static final byte[] ADDRESS = {1, 2, 3, 4, 5, 6, 7, 8, 9};

    private static byte[] hello() {
        ByteBuffer b = Handshake.encode(77, 65536, 8, ADDRESS);
        byte[] bytes = new byte[b.remaining()];
        b.get(bytes);
        return bytes;
    }

    private static Handshake.Hello read(byte[] bytes) throws Exception {
        return Handshake.read(new ByteArrayInputStream(bytes));
    }

    @Test
    void shouldRoundTripAHello() throws Exception {
        Handshake.Hello h = read(hello());
        assertEquals(77, h.connectionId());
        assertEquals(65536, h.sliceSize());
        assertEquals(8, h.sliceCount());
        assertArrayEquals(ADDRESS, h.workerAddress());
    }

    @Test
    void shouldRefuseForeignProtocols() {
        byte[] http = "GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII);
        ProtocolException e = assertThrows(ProtocolException.class, () -> read(http));
        assertEquals(true, e.getMessage().contains("not a hadroNIO peer"), e.getMessage());
    }

    @Test
    void shouldRefuseTruncatedHellos() {
        byte[] full = hello();
        for (int n = 0; n < full.length; n++) {
            byte[] cut = Arrays.copyOf(full, n);
            assertThrows(ProtocolException.class, () -> read(cut), "truncated to " + n);
        }
    }

    @Test
    void shouldRefuseACorruptedAddress() {
        byte[] bad = hello();
        bad[bad.length - 1] ^= 0x10;
        assertThrows(ProtocolException.class, () -> read(bad));
    }

    @Test
    void shouldRefuseOutOfRangeFields() {
        int[][] cases = {{20, Handshake.MAX_ADDRESS_LENGTH + 1}, {20, 0}, {12, 10}, {12, Handshake.MAX_SLICE_SIZE + 1},
            {16, 1}, {16, Handshake.MAX_SLICE_COUNT + 1}};
        for (int[] c : cases) {
            byte[] bad = hello();
            ByteBuffer.wrap(bad).putInt(c[0], c[1]);
            assertThrows(ProtocolException.class, () -> read(bad), "field at " + c[0] + " = " + c[1]);
        }
        byte[] version = hello();
        ByteBuffer.wrap(version).putShort(4, (short) 99);
        assertThrows(ProtocolException.class, () -> read(version));
    }
}
