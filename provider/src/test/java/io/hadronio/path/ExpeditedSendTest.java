package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which messages go expedited (SendSlots, Expedited sends): every message of a request/response,
 * each of which follows one from the peer with the writer never a quarter of the peer's window
 * ahead; of a one-way stream, only the first. And the bytes of an expedited bulk message that
 * arrives before its reader reads (it waits in UCX's receive buffers) land intact and in order.
 */
@Timeout(60)
class ExpeditedSendTest {
    private static final int MESSAGE = 64 * 1024;

    private static Connection connectionOf(SocketChannel channel) throws ReflectiveOperationException {
        return (Connection) ChannelInternals.lifeOf(channel).connection();
    }

    private static void fill(ByteBuffer b, int seed) {
        for (int i = 0; i < b.capacity(); i += 8) {
            b.putLong(i, seed * 1_000_003L + i);
        }
    }

    private static void check(ByteBuffer b, int seed) {
        for (int i = 0; i < b.capacity(); i += 8) {
            assertEquals(seed * 1_000_003L + i, b.getLong(i), "message " + seed + ", byte " + i);
        }
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws Exception {
        b.clear();
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    private static void readFully(SocketChannel c, ByteBuffer b) throws Exception {
        b.clear();
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new java.io.EOFException();
            }
        }
    }

    @Test
    void shouldExpediteEveryMessageOfARequestResponseAndLandABulkMessageReadLate() throws Exception {
        HadronioProvider provider = io.hadronio.EagerProvider.get();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel peer = server.accept()) {
                    Connection out = connectionOf(client);
                    ByteBuffer request = ByteBuffer.allocateDirect(MESSAGE);
                    // direct and a slice long: the peer's reads take bulk messages in place
                    ByteBuffer in = ByteBuffer.allocateDirect(MESSAGE);
                    ByteBuffer answer = ByteBuffer.allocateDirect(8);
                    long sentBefore = out.messagesSent();
                    long expeditedBefore = out.expeditedSends();
                    int roundTrips = 64;
                    for (int i = 0; i < roundTrips; i++) {
                        fill(request, i);
                        writeFully(client, request);
                        readFully(peer, in);
                        check(in, i);
                        answer.clear().putLong(0, i);
                        writeFully(peer, answer);
                        readFully(client, answer);
                        assertEquals(i, answer.getLong(0));
                    }
                    long sent = out.messagesSent() - sentBefore;
                    assertTrue(sent >= roundTrips, "messages sent: " + sent);
                    assertEquals(sent, out.expeditedSends() - expeditedBefore,
                            "every message of the request/response expedited");

                    // the last one written while the reader is away: with credits that ask for bulk
                    // messages by now, its bytes wait in UCX until the read takes them in place
                    long inPlace = ReceiveSlices.bulkReceivedDirect();
                    fill(request, roundTrips);
                    writeFully(client, request);
                    Thread.sleep(100);
                    readFully(peer, in);
                    check(in, roundTrips);
                    assertTrue(ReceiveSlices.bulkReceivedDirect() > inPlace, "the late read took a bulk message in place");
                }
            }
        }
    }

    @Test
    void shouldExpediteOnlyAStreamsFirstMessages() throws Exception {
        HadronioProvider provider = io.hadronio.EagerProvider.get();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel peer = server.accept()) {
                    Connection out = connectionOf(client);
                    client.configureBlocking(false);
                    ByteBuffer b = ByteBuffer.allocateDirect(MESSAGE);
                    // the peer reads nothing yet: the writer runs its window full
                    int written = 0;
                    long took;
                    do {
                        fill(b, written);
                        b.clear();
                        took = client.write(b);
                        if (took == MESSAGE) {
                            written++;
                        } else {
                            assertTrue(took == 0 || written > 0, "a partial write of " + took);
                            break;
                        }
                    } while (written < 1_000);
                    long partial = took;
                    // the first message (nothing had come from the peer, nothing was unconsumed)
                    // and none after it: each followed ours with nothing from the peer in between
                    assertEquals(1, out.expeditedSends(), "expedited of " + out.messagesSent() + " messages");
                    assertTrue(out.messagesSent() > 1, "the stream went past its first message");
                    ByteBuffer in = ByteBuffer.allocateDirect(MESSAGE);
                    for (int i = 0; i < written; i++) {
                        readFully(peer, in);
                        check(in, i);
                    }
                    if (partial > 0) {
                        // the partial write's bytes, then the rest of that message
                        b.position((int) partial);
                        while (b.hasRemaining()) {
                            client.write(b);
                        }
                        readFully(peer, in);
                        check(in, written);
                    }
                }
            }
        }
    }
}
