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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The handshake's frames (version 3): bounds, authentication, replay and reflection. */
// no provider, no connection mode: test.sh's eager pass leaves it out
@Tag("own-properties")
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

        byte[] server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        assertEquals(server.length, length(server, 8));
        HandshakeMessages.ServerHello s = HandshakeMessages.decodeServerHello(server);
        assertArrayEquals(ADDRESS, s.workerAddress());
        assertEquals(PROFILE, s.profile());

        byte[] ready = HandshakeMessages.ready(KEY, client, server, 5, 4096, 16);
        assertEquals(ready.length, length(ready, 8));
        HandshakeMessages.Ready r = HandshakeMessages.decodeReady(ready);
        assertEquals(5, r.connectionId());
        assertEquals(4096, r.sliceSize());
        assertEquals(16, r.sliceCount());
    }

    /**
     * The server's hello holds what all its connections share and nothing of the
     * connection's own (the server has made nothing for it yet): nonce, worker address,
     * profile, MAC, and not a byte more.
     */
    @Test
    void shouldCarryNoConnectionOfItsOwnInTheServersHello() throws Exception {
        byte[] client = HandshakeMessages.clientHello(77, 65536, 8, ADDRESS, PROFILE);
        byte[] server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        assertEquals(HandshakeMessages.HEADER_LENGTH + HandshakeMessages.NONCE_LENGTH + 2 + ADDRESS.length + 1
                + PROFILE.length() + HandshakeMessages.MAC_LENGTH, server.length);
        assertEquals(HandshakeMessages.VERSION, server[4]);
        assertEquals(3, HandshakeMessages.VERSION, "the version that moved the connection's fields into READY");
    }

    @Test
    void shouldAuthenticateBothSidesWithTheKey() {
        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        byte[] server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        assertTrue(HandshakeMessages.verifyServerHello(KEY, client, server));
        assertFalse(HandshakeMessages.verifyServerHello(OTHER_KEY, client, server));
        byte[] finish = HandshakeMessages.finish(KEY, client, server);
        assertTrue(HandshakeMessages.verifyFinish(KEY, client, server, finish));
        assertFalse(HandshakeMessages.verifyFinish(OTHER_KEY, client, server, finish));
        byte[] flipped = server.clone();
        flipped[HandshakeMessages.HEADER_LENGTH + 20] ^= 1;
        assertFalse(HandshakeMessages.verifyServerHello(KEY, client, flipped));
        // READY: the connection's own fields, proven with the key and bound to both hellos
        byte[] ready = HandshakeMessages.ready(KEY, client, server, 9, 65536, 8);
        assertTrue(HandshakeMessages.verifyReady(KEY, client, server, ready));
        assertFalse(HandshakeMessages.verifyReady(OTHER_KEY, client, server, ready));
        for (int at = HandshakeMessages.HEADER_LENGTH; at < ready.length; at++) {
            byte[] changed = ready.clone();
            changed[at] ^= 1;
            assertFalse(HandshakeMessages.verifyReady(KEY, client, server, changed), "READY changed at byte " + at);
        }
    }

    @Test
    void shouldRefuseReplayedAndReflectedMessages() {
        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        byte[] server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        byte[] finish = HandshakeMessages.finish(KEY, client, server);
        byte[] ready = HandshakeMessages.ready(KEY, client, server, 2, 65536, 8);
        // replay: the same client hello and FINISH against a fresh server hello (a new nonce)
        byte[] freshServer = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        assertFalse(Arrays.equals(server, freshServer));
        assertFalse(HandshakeMessages.verifyFinish(KEY, client, freshServer, finish));
        // a READY replayed into another handshake
        assertFalse(HandshakeMessages.verifyReady(KEY, client, freshServer, ready));
        // a server hello meant for another client hello
        byte[] otherClient = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        assertFalse(HandshakeMessages.verifyServerHello(KEY, otherClient, server));
        assertFalse(HandshakeMessages.verifyReady(KEY, otherClient, server, ready));
        // reflection: a server's MAC presented as a client's
        byte[] reflected = HandshakeMessages.finish(KEY, client, server);
        System.arraycopy(server, server.length - HandshakeMessages.MAC_LENGTH, reflected,
                HandshakeMessages.HEADER_LENGTH, HandshakeMessages.MAC_LENGTH);
        assertFalse(HandshakeMessages.verifyFinish(KEY, client, server, reflected));
        // ... or as a READY's
        byte[] reflectedReady = ready.clone();
        System.arraycopy(server, server.length - HandshakeMessages.MAC_LENGTH, reflectedReady,
                ready.length - HandshakeMessages.MAC_LENGTH, HandshakeMessages.MAC_LENGTH);
        assertFalse(HandshakeMessages.verifyReady(KEY, client, server, reflectedReady));
        // a client's FINISH MAC presented as the server's READY MAC
        byte[] finishAsReady = ready.clone();
        System.arraycopy(finish, HandshakeMessages.HEADER_LENGTH, finishAsReady,
                ready.length - HandshakeMessages.MAC_LENGTH, HandshakeMessages.MAC_LENGTH);
        assertFalse(HandshakeMessages.verifyReady(KEY, client, server, finishAsReady));
    }

    @Test
    void shouldRefuseForeignAndOutOfBoundsFrames() {
        assertThrows(ProtocolException.class, () -> length("GET / HTTP/1.1\r\n".getBytes(), 8));
        assertThrows(ProtocolException.class, () -> length("GE".getBytes(), 2));
        byte[] v1 = {'H', 'N', 'I', 'O', 0, 1, 0, 0};
        assertThrows(ProtocolException.class, () -> length(v1, 8));
        byte[] unknownKind = {'H', 'N', 'I', 'O', 3, 99, 0, 0};
        assertThrows(ProtocolException.class, () -> length(unknownKind, 8));
        byte[] tooLong = {'H', 'N', 'I', 'O', 3, HandshakeMessages.CLIENT_HELLO, (byte) 0xFF, (byte) 0xFF};
        assertThrows(ProtocolException.class, () -> length(tooLong, 8));
        // READY has exactly its fields and MAC; PLAIN nothing
        byte[] readyWithoutBody = {'H', 'N', 'I', 'O', 3, HandshakeMessages.READY, 0, 0};
        assertThrows(ProtocolException.class, () -> length(readyWithoutBody, 8));
        byte[] readyTooLong = {'H', 'N', 'I', 'O', 3, HandshakeMessages.READY, 0, 12 + 32 + 1};
        assertThrows(ProtocolException.class, () -> length(readyTooLong, 8));
        byte[] plainWithBody = {'H', 'N', 'I', 'O', 3, HandshakeMessages.PLAIN, 0, 1};
        assertThrows(ProtocolException.class, () -> length(plainWithBody, 8));

        // a frame of the previous version is not ours, whatever it holds (both sides run one version)
        byte[] client = HandshakeMessages.clientHello(1, 65536, 8, ADDRESS, PROFILE);
        byte[] v2 = client.clone();
        v2[4] = 2;
        assertThrows(ProtocolException.class, () -> length(v2, 8));
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeHello(v2,
                HandshakeMessages.CLIENT_HELLO));
        byte[] v2Server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        v2Server[4] = 2;
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeServerHello(v2Server));

        // READY's fields are bounded as a hello's
        byte[] server = HandshakeMessages.serverHello(KEY, client, ADDRESS, PROFILE);
        for (int[] field : new int[][] {{8 + 4, 1}, {8 + 4, 1 << 30}, {8 + 8, 1}, {8 + 8, 5000}}) {
            byte[] bad = HandshakeMessages.ready(KEY, client, server, 1, 65536, 8);
            ByteBuffer.wrap(bad).putInt(field[0], field[1]);
            assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeReady(bad));
        }
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeReady(server));
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeServerHello(client));

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
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeHello(server,
                HandshakeMessages.CLIENT_HELLO));
        // a server hello whose address or profile length lies
        byte[] badServer = server.clone();
        ByteBuffer.wrap(badServer).putShort(8 + 16, (short) (ADDRESS.length + 1));
        assertThrows(ProtocolException.class, () -> HandshakeMessages.decodeServerHello(badServer));
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
                frame[4] = HandshakeMessages.VERSION;
                frame[5] = (byte) r.nextInt(6);
            }
            try {
                HandshakeMessages.decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
            } catch (ProtocolException expected) {
                // refused: fine
            }
            try {
                HandshakeMessages.decodeServerHello(frame);
            } catch (ProtocolException expected) {
                // refused: fine
            }
            try {
                HandshakeMessages.decodeReady(frame);
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
