package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A bulk message lands straight in the reader's direct buffer unless that buffer starts just
 * past a page boundary ({@link ReceiveSlices#aliasProne}): the kernel's process-to-process copy
 * into such an address ran at under half its speed, and {@code ByteBuffer.allocateDirect} of
 * 128 KiB or more gives one (16 bytes past). Such a reader takes the bytes through its slices,
 * every byte still arriving once and in order.
 */
@Timeout(60)
class BulkAlignmentTest {
    private static final int MESSAGE = 64 * 1024;
    private static final int MESSAGES = 64;

    @Test
    void shouldTellTheAddressesJustPastAPageBoundary() {
        assertFalse(ReceiveSlices.aliasProne(0x7f00_0000_0000L));
        assertTrue(ReceiveSlices.aliasProne(0x7f00_0000_0008L));
        assertTrue(ReceiveSlices.aliasProne(0x7f00_0000_0010L));
        assertTrue(ReceiveSlices.aliasProne(0x7f00_0000_1000L + ReceiveSlices.ALIAS_WINDOW - 1));
        assertFalse(ReceiveSlices.aliasProne(0x7f00_0000_1000L + ReceiveSlices.ALIAS_WINDOW));
        assertFalse(ReceiveSlices.aliasProne(0x7f00_0000_0ff0L));
    }

    @Test
    void shouldReceiveInPlaceOnlyIntoBuffersThatDoNotStartJustPastAPage() throws Exception {
        HadronioProvider provider = io.hadronio.EagerProvider.get();
        ByteBuffer area = ByteBuffer.allocateDirect(4 * MESSAGE + 8192).alignedSlice(4096);
        ByteBuffer aligned = area.slice(0, 2 * MESSAGE);
        ByteBuffer pastPage = area.slice(2 * MESSAGE + 4096 + 16, 2 * MESSAGE - 16);
        assertFalse(ReceiveSlices.aliasProne(MemorySegment.ofBuffer(aligned).address()));
        assertTrue(ReceiveSlices.aliasProne(MemorySegment.ofBuffer(pastPage).address()));
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> write(client, 2 * MESSAGES));

                    long direct = ReceiveSlices.bulkReceivedDirect();
                    read(accepted, pastPage, 0, MESSAGES);
                    assertEquals(direct, ReceiveSlices.bulkReceivedDirect(),
                            "bulk messages received in place into a buffer 16 bytes past a page");

                    read(accepted, aligned, MESSAGES, MESSAGES);
                    assertTrue(ReceiveSlices.bulkReceivedDirect() > direct,
                            "bulk messages received in place into a page-aligned buffer");
                    writer.get(30, TimeUnit.SECONDS);
                }
            }
        }
    }

    /** Writes {@code messages} messages of MESSAGE bytes, message m filled with (byte) m. */
    private static void write(SocketChannel ch, int messages) {
        ByteBuffer b = ByteBuffer.allocateDirect(MESSAGE);
        try {
            for (int m = 0; m < messages; m++) {
                b.clear();
                while (b.hasRemaining()) {
                    b.put((byte) m);
                }
                b.flip();
                while (b.hasRemaining()) {
                    ch.write(b);
                }
            }
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    /** Reads messages {@code first ..} ({@code count} of them) into {@code into}, checking every byte. */
    private static void read(SocketChannel ch, ByteBuffer into, int first, int count) throws IOException {
        long total = (long) count * MESSAGE;
        long offset = (long) first * MESSAGE;
        for (long got = 0; got < total; ) {
            into.clear().limit((int) Math.min(into.capacity(), total - got));
            int n = ch.read(into);
            assertTrue(n > 0, "a blocking read returned " + n);
            for (int i = 0; i < n; i++) {
                long at = offset + got + i;
                assertEquals((byte) (at / MESSAGE), into.get(i), "byte " + at);
            }
            got += n;
        }
    }
}
