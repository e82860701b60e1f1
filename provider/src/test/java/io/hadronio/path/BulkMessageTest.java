package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bulk messages (Connection: a message of {@link WireFormat#BULK_MIN} bytes or more, once the
 * reader reads into direct buffers with room for any message, goes as an empty DATA message
 * and its bytes under their own tag, received straight into the reader's buffer): every byte
 * arrives once and in order while the reader keeps changing what it reads into - direct
 * buffers that take a bulk message whole, heap buffers, small direct ones, scattering arrays,
 * so that bulk messages meet readers that must take them through a slice - and while the
 * writer mixes small and large writes from heap and direct buffers.
 */
@Timeout(120)
class BulkMessageTest {
    private static final long TOTAL = 48L << 20;

    @ParameterizedTest(name = "upgraded {0}")
    @ValueSource(booleans = {false, true})
    void shouldDeliverEveryByteInOrderWhateverTheReaderReadsInto(boolean upgraded) throws Exception {
        HadronioProvider provider = upgraded ? UpgradedPairs.upgradingAtOnce() : io.hadronio.EagerProvider.get();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    if (upgraded) {
                        UpgradedPairs.moveToUcx(client, accepted);
                    }
                    long direct = ReceiveSlices.bulkReceivedDirect();
                    long staged = ReceiveSlices.bulkReceivedStaged();
                    CompletableFuture<long[]> writer = CompletableFuture.supplyAsync(() -> write(client));
                    long[] read = read(accepted);
                    long[] written = writer.get(60, TimeUnit.SECONDS);
                    assertEquals(written[0], read[0], "bytes");
                    assertEquals(written[1], read[1], "CRC32C of the stream");
                    // both ways of taking a bulk message were exercised
                    assertTrue(ReceiveSlices.bulkReceivedDirect() > direct, "bulk messages received in place");
                    assertTrue(ReceiveSlices.bulkReceivedStaged() > staged, "bulk messages received through a slice");
                }
            }
        }
    }

    /** Writes TOTAL bytes of a seeded stream in writes of 1 B .. 200 KiB from heap and direct buffers, then shuts down. */
    private static long[] write(SocketChannel ch) {
        SplittableRandom random = new SplittableRandom(7);
        SplittableRandom data = new SplittableRandom(11);
        CRC32C crc = new CRC32C();
        ByteBuffer heap = ByteBuffer.allocate(200 * 1024);
        ByteBuffer direct = ByteBuffer.allocateDirect(200 * 1024);
        long sent = 0;
        try {
            while (sent < TOTAL) {
                int n = (int) Math.min(TOTAL - sent, random.nextInt(4) == 0 ? 1 + random.nextInt(1024)
                        : 1 + random.nextInt(200 * 1024));
                ByteBuffer b = random.nextBoolean() ? heap : direct;
                b.clear().limit(n);
                for (int i = 0; i < n; i++) {
                    b.put(i, (byte) data.nextInt());
                }
                crc.update(b.duplicate());
                while (b.hasRemaining()) {
                    ch.write(b);
                }
                sent += n;
            }
            ch.shutdownOutput();
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
        return new long[] {sent, crc.getValue()};
    }

    /** Reads to end-of-stream, changing every few reads what it reads into. */
    private static long[] read(SocketChannel ch) throws IOException {
        SplittableRandom random = new SplittableRandom(13);
        CRC32C crc = new CRC32C();
        ByteBuffer bigDirect = ByteBuffer.allocateDirect(192 * 1024);
        ByteBuffer sliceDirect = ByteBuffer.allocateDirect(64 * 1024);
        ByteBuffer heap = ByteBuffer.allocate(96 * 1024);
        ByteBuffer smallDirect = ByteBuffer.allocateDirect(3000);
        long received = 0;
        int kind = 0;
        int left = 0;
        while (true) {
            if (left-- == 0) {
                kind = random.nextInt(5);
                left = random.nextInt(40);
            }
            long n;
            switch (kind) {
                case 0 -> n = readInto(ch, bigDirect.clear().position(random.nextInt(64 * 1024)), crc);
                case 1 -> n = readInto(ch, sliceDirect.clear(), crc);
                case 2 -> n = readInto(ch, heap.clear(), crc);
                case 3 -> n = readInto(ch, smallDirect.clear(), crc);
                default -> {
                    ByteBuffer[] parts = {smallDirect.clear().limit(100), bigDirect.clear(), heap.clear().limit(10)};
                    n = ch.read(parts);
                    for (ByteBuffer p : parts) {
                        crc.update(p.flip());
                    }
                }
            }
            if (n < 0) {
                break;
            }
            assertTrue(n > 0, "a blocking read returned 0");
            received += n;
        }
        return new long[] {received, crc.getValue()};
    }

    private static long readInto(SocketChannel ch, ByteBuffer b, CRC32C crc) throws IOException {
        int from = b.position();
        int n = ch.read(b);
        if (n > 0) {
            crc.update(b.duplicate().flip().position(from));
        }
        return n;
    }
}
