package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A peer that does not read makes our blocking write block once its receive window is full,
 * and a non-blocking one return 0 once the window and our send buffer are full
 * ({@code hadronio.send.buffer}: non-blocking writes of less than a slice may wait in our send
 * slots, as they would in the kernel's send buffer); when it starts reading, everything arrives.
 */
@Timeout(60)
class BackPressureTest extends ItSupport {
    static final long TOTAL = 32 << 20;
    static final int CHUNK = 64 * 1024;

    /** Bytes the peer's receive slices hold: the most a writer can hand over while it does not read. */
    static long window() {
        return (long) provider().config().sliceSize() * provider().config().sliceCount();
    }

    @Test
    void shouldBlockAWriterWhileThePeerDoesNotReadThenDeliverEverything() throws Exception {
        assertTrue(TOTAL > 16 * window(), "the test writes far more than the window");
        try (ChildJvm quiet = ChildJvm.withProvider(EAGER_MODE, "server")) {
            SocketChannel ch = onUcx(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            AtomicLong accepted = new AtomicLong();
            CountDownLatch done = new CountDownLatch(1);
            Task<Void> writer = start("writer", () -> {
                ByteBuffer buf = ByteBuffer.allocateDirect(CHUNK);
                for (long off = 0; off < TOTAL; off += CHUNK) {
                    buf.clear();
                    for (int k = 0; k < CHUNK; k++) {
                        buf.put(Data.at(off + k));
                    }
                    buf.flip();
                    while (buf.hasRemaining()) {
                        ch.write(buf);
                    }
                    accepted.addAndGet(CHUNK);
                }
                done.countDown();
                ch.close();
                return null;
            });
            awaitBlockedIn(writer.thread(), ItSupport::hadronioWait);
            // the peer reads nothing: the writer must stay blocked
            assertFalse(done.await(1, TimeUnit.SECONDS), "a write to a peer that does not read finished");
            assertTrue(accepted.get() <= window(), "writes completed for " + accepted.get()
                    + " bytes, more than the peer's receive window of " + window());
            quiet.send("GO");
            assertTrue(done.await(30, TimeUnit.SECONDS), "the writer finishes once the peer reads");
            assertEquals(null, writer.failure());
            Data.Received r = Data.Received.parse(quiet.expect("RECEIVED "));
            assertEquals(TOTAL, r.count());
            assertEquals(-1, r.firstMismatch());
            assertEquals(Data.crc(TOTAL), r.crc());
        }
    }

    @Test
    void shouldReturnZeroFromANonBlockingWriteWhileThePeerDoesNotRead() throws Exception {
        try (ChildJvm quiet = ChildJvm.withProvider(EAGER_MODE, "server")) {
            SocketChannel ch = onUcx(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            ch.configureBlocking(false);
            ByteBuffer buf = ByteBuffer.allocate(CHUNK);
            long accepted = 0;
            long offered = 0;
            // offer chunks until a write takes nothing, or far more than the window was taken
            while (offered < TOTAL) {
                buf.clear();
                for (int k = 0; k < CHUNK; k++) {
                    buf.put(Data.at(accepted + k));
                }
                buf.flip();
                int n = ch.write(buf);
                offered += CHUNK;
                accepted += n;
                if (n < CHUNK) {
                    break;
                }
            }
            assertTrue(accepted < offered, "every non-blocking write took everything");
            // writes of a slice or more: the window, and one more message waiting in our slots
            long slice = provider().config().sliceSize();
            assertTrue(accepted <= window() + slice, "took " + accepted + " bytes, more than the window "
                    + window() + " and a slice");
            // small writes go on into the send buffer, as into the kernel's, until it is full too;
            // then a write takes nothing (a send buffer that took more would fail here, not loop)
            long sendBuffer = provider().config().sendBufferBytes();
            long small = 0;
            while (true) {
                int n = ch.write(ByteBuffer.wrap(Data.bytes(accepted, 100)));
                if (n == 0) {
                    break;
                }
                accepted += n;
                small += n;
                assertTrue(small <= sendBuffer + slice, "small writes took " + small + " bytes, more than the send "
                        + "buffer " + sendBuffer + " and a slice");
            }
            assertEquals(0, ch.write(ByteBuffer.wrap(Data.bytes(accepted, 100))), "a full send buffer takes nothing");
            // now let the peer read, and send the rest in blocking mode
            quiet.send("GO");
            ch.configureBlocking(true);
            ByteBuffer rest = ByteBuffer.allocate(CHUNK);
            long more = 3 * window() + 5;
            for (long off = accepted; off < accepted + more; off += rest.capacity()) {
                int len = (int) Math.min(rest.capacity(), accepted + more - off);
                rest.clear();
                for (int k = 0; k < len; k++) {
                    rest.put(Data.at(off + k));
                }
                rest.flip();
                while (rest.hasRemaining()) {
                    ch.write(rest);
                }
            }
            ch.close();
            Data.Received r = Data.Received.parse(quiet.expect("RECEIVED "));
            assertEquals(accepted + more, r.count());
            assertEquals(-1, r.firstMismatch());
        }
    }
}
