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
 * A connection that has nothing in its send slots starts again at the first: a connection of
 * one small message at a time (a ping-pong, a mostly idle connection) keeps to the first page
 * of its send area, and a burst uses as many slots as it needs, then starts over. Regression:
 * message {@code m} went to slot {@code m % slots}, so over time every connection of small
 * messages wrote the first page of every one of its 32 slots (128 KiB resident per connection
 * and side; 1,000 mostly idle connections: up to 128 MB, docs/benchmarks/memory.md).
 */
@Timeout(60)
class SendSlotReuseTest {
    private static Connection connectionOf(SocketChannel channel) throws ReflectiveOperationException {
        return (Connection) ChannelInternals.lifeOf(channel).connection();
    }

    private static void writeLong(SocketChannel channel, ByteBuffer b, long value) throws Exception {
        b.clear().putLong(0, value);
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }

    private static long readLong(SocketChannel channel, ByteBuffer b) throws Exception {
        b.clear();
        while (b.hasRemaining()) {
            channel.read(b);
        }
        return b.getLong(0);
    }

    @Test
    void oneMessageAtATimeStaysInTheFirstSlotAndAFullBufferStartsOver() throws Exception {
        HadronioProvider eager = io.hadronio.EagerProvider.get();
        assertTrue(eager.isAccelerated());
        try (ServerSocketChannel server = eager.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = eager.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel peer = server.accept()) {
                    ByteBuffer out = ByteBuffer.allocateDirect(8);
                    ByteBuffer in = ByteBuffer.allocateDirect(8);
                    for (int i = 0; i < 1_000; i++) {
                        writeLong(client, out, i);
                        assertEquals(i, readLong(peer, in));
                        writeLong(peer, out, -i);
                        assertEquals(-i, readLong(client, in));
                    }
                    assertEquals(0, connectionOf(client).highestSendSlotUsed(), "the client's ping-pong left slot 0");
                    assertEquals(0, connectionOf(peer).highestSendSlotUsed(), "the echo's ping-pong left slot 0");

                    // a burst before the peer reads: each small send finished inside its call, so each
                    // message found every slot free again
                    for (int i = 0; i < 5; i++) {
                        writeLong(client, out, 100 + i);
                    }
                    for (int i = 0; i < 5; i++) {
                        assertEquals(100 + i, readLong(peer, in));
                    }
                    assertEquals(0, connectionOf(client).highestSendSlotUsed(), "a burst of small sends left slot 0");

                    // a peer that reads nothing: the send buffer fills its slots, then drains
                    client.configureBlocking(false);
                    ByteBuffer chunk = ByteBuffer.allocateDirect(16 * 1024);
                    long written = 0;
                    for (int zeros = 0; zeros < 1_000; ) {
                        chunk.clear();
                        int n = client.write(chunk);
                        written += n;
                        zeros = n == 0 ? zeros + 1 : 0;
                    }
                    assertTrue(connectionOf(client).highestSendSlotUsed() > 0,
                            "a full send buffer used several slots: " + connectionOf(client).highestSendSlotUsed());
                    ByteBuffer drain = ByteBuffer.allocateDirect(64 * 1024);
                    for (long read = 0; read < written; ) {
                        drain.clear();
                        read += peer.read(drain);
                    }
                    client.configureBlocking(true);
                    for (int i = 0; i < 100; i++) {
                        writeLong(client, out, i);
                        assertEquals(i, readLong(peer, in));
                    }
                    assertEquals(0, connectionOf(client).lastSendSlotUsed(), "after the drain the slots started over");
                }
            }
        }
    }
}
