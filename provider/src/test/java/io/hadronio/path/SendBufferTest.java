package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A non-blocking write takes about {@code hadronio.send.buffer} bytes ahead of a peer that reads
 * nothing, as the kernel's send buffer would, and nothing of it is lost or reordered. Regression:
 * with one send slot per slice of the peer, a write found no room once the peer's slices were full
 * and one more slice waited, and JGroups' TCP_NIO2, which drops what its writes do not take, lost
 * messages to retransmission (multicast on unpinned members at 0.2-0.4x the JDK's).
 */
@Timeout(60)
class SendBufferTest {
    private static final int WRITE = 1000;

    @Test
    void shouldTakeTheSendBufferAheadOfAPeerThatReadsNothingAndDeliverItInOrder() throws Exception {
        HadronioProvider provider = io.hadronio.EagerProvider.get();
        // slots whose send UCX has not finished yet (at most the peer's window) take no bytes
        long sendBuffer = provider.config().sendBufferBytes()
                - (long) provider.config().sliceCount() * provider.config().sliceSize();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept(); Selector selector = provider.openSelector()) {
                    client.configureBlocking(false);
                    SelectionKey key = client.register(selector, SelectionKey.OP_WRITE);
                    long written = writeUntilFull(client, 0);
                    assertTrue(written >= sendBuffer, "a write found no room after " + written + " bytes, below "
                            + "hadronio.send.buffer less the peer's window (" + sendBuffer + ")");
                    // a slot whose send finished after the last write takes more; a selector that
                    // said writable while writes take nothing would loop here until the timeout
                    while (selector.selectNow() > 0) {
                        selector.selectedKeys().clear();
                        written += writeUntilFull(client, written);
                    }

                    long read = readAndCheck(accepted, 0, written);
                    assertEquals(1, selector.select(10_000), "not writable after the peer read everything");
                    assertTrue(key.isWritable());
                    // and the slots take as much again
                    long more = writeUntilFull(client, written);
                    assertTrue(more >= sendBuffer, "second round: " + more);
                    readAndCheck(accepted, read, more);
                }
            }
        }
    }

    /**
     * Writes of varying sizes against a reader that keeps falling behind: messages wait in the
     * slots, credits come in between writes, and every byte arrives once, in order. Regression:
     * a credit that came in just after a new waiting message was started posted it empty, and an
     * empty DATA message means a bulk message to the reader, which then waited for ever.
     */
    @Test
    void shouldDeliverEveryByteInOrderWhileTheReaderKeepsFallingBehind() throws Exception {
        HadronioProvider provider = io.hadronio.EagerProvider.get();
        long total = 24L << 20;
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    client.configureBlocking(false);
                    java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic.AtomicReference<>();
                    Thread reader = Thread.ofPlatform().start(() -> {
                        try {
                            ByteBuffer b = ByteBuffer.allocate(48 * 1024);
                            long offset = 0;
                            int reads = 0;
                            while (offset < total) {
                                b.clear();
                                int n = accepted.read(b);
                                if (n < 0) {
                                    throw new AssertionError("end of stream at " + offset);
                                }
                                for (int i = 0; i < n; i++) {
                                    if (b.get(i) != pattern(offset + i)) {
                                        throw new AssertionError("byte " + (offset + i) + " is wrong");
                                    }
                                }
                                offset += n;
                                if (++reads % 16 == 0) {
                                    Thread.sleep(1);
                                }
                            }
                        } catch (Exception | AssertionError e) {
                            failure.set(e);
                        }
                    });
                    ByteBuffer b = ByteBuffer.allocateDirect(96 * 1024);
                    java.util.Random random = new java.util.Random(42);
                    long offset = 0;
                    while (offset < total && failure.get() == null) {
                        int size = (int) Math.min(total - offset, 1 + random.nextInt(random.nextBoolean() ? 2048 : b.capacity()));
                        b.clear().limit(size);
                        for (int i = 0; i < size; i++) {
                            b.put(i, pattern(offset + i));
                        }
                        while (b.hasRemaining()) {
                            int n = client.write(b);
                            if (n == 0) {
                                Thread.onSpinWait();
                            }
                        }
                        offset += size;
                    }
                    reader.join(30_000);
                    assertTrue(!reader.isAlive(), "the reader is still waiting");
                    if (failure.get() != null) {
                        throw new AssertionError("reader", failure.get());
                    }
                }
            }
        }
    }

    /** Writes a counting pattern in WRITE-byte writes, starting at stream offset {@code from}, until one takes 0. */
    private static long writeUntilFull(SocketChannel client, long from) throws Exception {
        ByteBuffer b = ByteBuffer.allocateDirect(WRITE);
        long offset = from;
        while (true) {
            b.clear();
            for (int i = 0; i < WRITE; i++) {
                b.put(i, pattern(offset + i));
            }
            int n = client.write(b);
            offset += n;
            if (n < WRITE) {
                return offset - from;
            }
        }
    }

    private static long readAndCheck(SocketChannel accepted, long from, long count) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(64 * 1024);
        long offset = from;
        while (offset < from + count) {
            b.clear().limit((int) Math.min(b.capacity(), from + count - offset));
            int n = accepted.read(b);
            assertTrue(n > 0, "end of stream at " + offset);
            for (int i = 0; i < n; i++) {
                if (b.get(i) != pattern(offset + i)) {
                    throw new AssertionError("byte " + (offset + i) + " is " + b.get(i) + ", not " + pattern(offset + i));
                }
            }
            offset += n;
        }
        return offset;
    }

    private static byte pattern(long offset) {
        return (byte) (offset * 31 + (offset >>> 11));
    }

    @Test
    void shouldHaveAtLeastOneSlotPerSliceOfThePeer() {
        assertEquals(8, SendSlots.slotsFor(0, 64 * 1024, 8));
        assertEquals(32, SendSlots.slotsFor(2L << 20, 64 * 1024, 8));
        assertEquals(33, SendSlots.slotsFor((2L << 20) + 1, 64 * 1024, 8));
        assertEquals(SendSlots.MAX_SLOTS, SendSlots.slotsFor(1L << 30, 1024, 8));
    }
}
