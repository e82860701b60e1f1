package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** The handshake's frames: bounds, authentication, replay and reflection. */
class HandshakeMessagesTest {
    private static final Secret KEY = Secret.of(bytes(32, 1));
    private static final Secret OTHER_KEY = Secret.of(bytes(32, 2));
    private static final byte[] ADDRESS = bytes(300, 3);
    private static final String PROFILE = "peer+mm+cma";

    private static byte[] bytes(int n, long seed) {
        byte[] b = new byte[n];
        new Random(seed).nextBytes(b);
        return b;
    }

    /** Feeds a frame to {@link HandshakeMessages#frameLength} as a reader would. */
    private static int length(byte[] frame, int received) throws ProtocolException {
        ByteBuffer b = ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH);
        b.put(frame, 0, Math.min(received, HandshakeMessages.HEADER_LENGTH));
        return HandshakeMessages.frameLength(b);
    }

    @Test
    void shouldDecodeWhatItEncodes() throws Exception {
        byte[] client = HandshakeMessages.clientHello(77, 65536, 8, ADDRESS, PROFILE);
        assertEquals(client.length, length(client, 8));
        assertEquals(-1, length(client, 7));
        HandshakeMessages.Hello h = HandshakeMessages.decodeHello(client, HandshakeMessages.CLIENT_HELLO);
        assertEquals(77, h.connectionId());
        assertEquals(65536, h.sliceSize());
        assertEquals(8, h.sliceCount());
        assertArrayEquals(ADDRESS, h.workerAddress());
        assertEquals(PROFILE, h.profile());

        byte[] server = HandshakeMessages.serverHello(KEY, client, 5, 4096, 16, ADDRESS, PROFILE);
        assertEquals(server.length, length(server, 8));
        HandshakeMessages.Hello s = HandshakeMessages.decodeHello(server, HandshakeMessages.SERVER_HELLO);
        assertEquals(5, s.connectionId());
        assertArrayEquals(ADDRESS, s.workerAddress());
    }

    @Test
    void shouldAuthenticateBothSidesWithTheKey() {
        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        byte[] server = HandshakeMessages.serverHello(KEY, client, 2, 65536, 8, ADDRESS, PROFILE);
        assertTrue(HandshakeMessages.verifyServerHello(KEY, client, server));
        assertFalse(HandshakeMessages.verifyServerHello(OTHER_KEY, client, server));
        byte[] finish = HandshakeMessages.finish(KEY, client, server);
        assertTrue(HandshakeMessages.verifyFinish(KEY, client, server, finish));
        assertFalse(HandshakeMessages.verifyFinish(OTHER_KEY, client, server, finish));
        byte[] flipped = server.clone();
        flipped[HandshakeMessages.HEADER_LENGTH + 20] ^= 1;
        assertFalse(HandshakeMessages.verifyServerHello(KEY, client, flipped));
    }

    @Test
    void shouldRefuseReplayedAndReflectedMessages() {
        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        byte[] server = HandshakeMessages.serverHello(KEY, client, 2, 65536, 8, ADDRESS, PROFILE);
        byte[] finish = HandshakeMessages.finish(KEY, client, server);
        // replay: the same client hello and FINISH against a fresh server hello (a new nonce)
        byte[] freshServer = HandshakeMessages.serverHello(KEY, client, 2, 65536, 8, ADDRESS, PROFILE);
        assertFalse(Arrays.equals(server, freshServer));
        assertFalse(HandshakeMessages.verifyFinish(KEY, client, freshServer, finish));
        // a server hello meant for another client hello
        byte[] otherClient = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        assertFalse(HandshakeMessages.verifyServerHello(KEY, otherClient, server));
        // reflection: a server's MAC presented as a client's
        byte[] reflected = HandshakeMessages.finish(KEY, client, server);
        System.arraycopy(server, server.length - HandshakeMessages.MAC_LENGTH, reflected,
                HandshakeMessages.HEADER_LENGTH, HandshakeMessages.MAC_LENGTH);
        assertFalse(HandshakeMessages.verifyFinish(KEY, client, server, reflected));
    }

    @Test
    void shouldRefuseForeignAndOutOfBoundsFrames() {
        assertThrows(ProtocolException.class, () -> length("GET / HTTP/1.1\r\n".getBytes(), 8));
        assertThrows(ProtocolException.class, () -> length("GE".getBytes(), 2));
        byte[] v1 = {'H', 'N', 'I', 'O', 0, 1, 0, 0};
        assertThrows(ProtocolException.class, () -> length(v1, 8));
        byte[] unknownKind = {'H', 'N', 'I', 'O', 2, 99, 0, 0};
        assertThrows(ProtocolException.class, () -> length(unknownKind, 8));
        byte[] tooLong = {'H', 'N', 'I', 'O', 2, HandshakeMessages.CLIENT_HELLO, (byte) 0xFF, (byte) 0xFF};
        assertThrows(ProtocolException.class, () -> length(tooLong, 8));
        byte[] readyWithBody = {'H', 'N', 'I', 'O', 2, HandshakeMessages.READY, 0, 1};
        assertThrows(ProtocolException.class, () -> length(readyWithBody, 8));

        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        for (int[] field : new int[][] {{8 + 16 + 4, 1}, {8 + 16 + 4, 1 << 30}, {8 + 16 + 8, 1}, {8 + 16 + 8, 5000}}) {
            byte[] bad = client.clone();
            ByteBuffer.wrap(bad).putInt(field[0], field[1]);
            assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeHello(bad,
                    HandshakeMessages.CLIENT_HELLO));
        }
        byte[] badLength = client.clone();
        ByteBuffer.wrap(badLength).putShort(8 + 16 + 12, (short) 299);
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeHello(badLength,
                HandshakeMessages.CLIENT_HELLO));
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeHello(client,
                HandshakeMessages.SERVER_HELLO));
    }

    @Test
    void shouldSurviveRandomGarbage() {
        Random r = new Random(7);
        for (int i = 0; i < 100_000; i++) {
            byte[] frame = new byte[r.nextInt(200)];
            r.nextBytes(frame);
            if (r.nextBoolean() && frame.length >= 6) {
                frame[0] = 'H';
                frame[1] = 'N';
                frame[2] = 'I';
                frame[3] = 'O';
                frame[4] = 2;
                frame[5] = (byte) r.nextInt(6);
            }
            try {
                HandshakeMessages.decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
            } catch (ProtocolException expected) {
                // refused: fine
            }
            try {
                if (frame.length >= 8) {
                    length(frame, 8);
                }
            } catch (ProtocolException expected) {
                // refused: fine
            }
        }
    }
}
