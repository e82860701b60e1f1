package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.ReentrantLock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every credit a reader owes reaches the writer, although the reader reads no more until the
 * writer sends again. A CREDIT message waits in UCX while the writer's shared-memory FIFO is
 * full (the writer's worker has not progressed), and a reader that consumes many messages
 * meanwhile finds all its credit slots held by such sends. It used to leave the credit to its
 * next read: with the writer out of credits there was none, and both sides waited for ever
 * (the eager soak's hang, docs/RELIABILITY.md: the reader had consumed 30 messages and reported
 * 11). The control loop now sends a credit that could not go.
 *
 * <p>Two providers, as two JVMs would have. The test holds the writer's worker still (its
 * lock) and fills the writer's FIFO with the reader's own small messages, so that every
 * credit the reader sends waits in UCX.
 */
@Timeout(120)
class CreditReturnTest {
    private static final int SMALL = 1024;
    private static final int SMALL_COUNT = 24;
    private static final int LARGE = 65536;
    private static final int LARGE_COUNT = 16;
    private static final long TOTAL = (long) SMALL * SMALL_COUNT + (long) LARGE * LARGE_COUNT;
    // more than UCX's shared-memory FIFO holds (64 elements by default): the rest wait in UCX
    private static final int FILLERS = 80;


    private static byte at(long offset) {
        return (byte) (offset * 31 + 7);
    }

    @Test
    void shouldReturnEveryCreditThatCouldNotGoWhenItWasDue() throws Exception {
        // the writer takes 4 x 32 messages: the reader's fillers all go out at once
        HadronioProvider writerSide = EagerProviders.eager(32);
        HadronioProvider readerSide = EagerProviders.eager(8);
        try (ServerSocketChannel server = readerSide.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel writer = writerSide.openSocketChannel()) {
                writer.connect(server.getLocalAddress());
                try (SocketChannel reader = server.accept()) {
                    assertTrue(writer.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"),
                            writer.getOption(HadronioSocketOptions.TRANSPORT));
                    Connection out = (Connection) ChannelInternals.lifeOf(writer).connection();

                    // small messages first (each takes a credit of its own), then full slices until
                    // the window is spent: the writer blocks with a slice held back for a credit
                    CompletableFuture<Void> writes = CompletableFuture.runAsync(() -> {
                        try {
                            long offset = 0;
                            for (int i = 0; i < SMALL_COUNT + LARGE_COUNT; i++) {
                                ByteBuffer b = ByteBuffer.allocate(i < SMALL_COUNT ? SMALL : LARGE);
                                while (b.hasRemaining()) {
                                    b.put(at(offset++));
                                }
                                b.flip();
                                while (b.hasRemaining()) {
                                    writer.write(b);
                                }
                            }
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    });

                    // the reader's worker takes in what was posted (a selection progresses it, reads
                    // nothing) until the writer is out of credits and its sends have all left it
                    ReentrantLock writerWorker = ChannelInternals.workerLockOf(writer);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    reader.configureBlocking(false);
                    try (Selector selector = readerSide.openSelector()) {
                        reader.register(selector, SelectionKey.OP_READ);
                        while (true) {
                            selector.selectNow();
                            selector.selectedKeys().clear();
                            writerWorker.lock();
                            if (out.heldBackWrites() > 0 && !out.sendsInFlight()) {
                                break;
                            }
                            writerWorker.unlock();
                            assertTrue(System.nanoTime() < deadline, "the writer never ran out of credits: "
                                    + out.messagesSent() + " messages sent");
                            Thread.sleep(1);
                        }
                    }
                    // the writer's worker stands still from here
                    ByteBuffer in = ByteBuffer.allocate(LARGE);
                    long[] received = {0};
                    try {
                        reader.configureBlocking(true);
                        // our messages fill its FIFO, and every credit after them waits in UCX
                        ByteBuffer filler = ByteBuffer.allocate(8);
                        for (int i = 0; i < FILLERS; i++) {
                            filler.clear();
                            while (filler.hasRemaining()) {
                                reader.write(filler);
                            }
                        }
                        // what was posted, one message per read, so that credits fall due often
                        long posted = (long) SMALL * SMALL_COUNT + (long) LARGE * (out.messagesSent() - SMALL_COUNT);
                        while (received[0] < posted) {
                            int message = received[0] < (long) SMALL * SMALL_COUNT ? SMALL : LARGE;
                            received[0] += readChecked(reader, in.clear().limit(message), received[0]);
                        }
                    } finally {
                        writerWorker.unlock();
                    }

                    // the rest needs the credits the reader owes
                    CompletableFuture<Void> rest = CompletableFuture.runAsync(() -> {
                        try {
                            while (received[0] < TOTAL) {
                                received[0] += readChecked(reader, in.clear(), received[0]);
                            }
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    });
                    try {
                        rest.get(30, TimeUnit.SECONDS);
                    } catch (TimeoutException e) {
                        throw new AssertionError(received[0] + " of " + TOTAL
                                + " bytes arrived: the writer waits for a credit the reader did not send", e);
                    }
                    writes.get(30, TimeUnit.SECONDS);
                    assertEquals(TOTAL, received[0]);
                }
            }
        }
    }

    private static long readChecked(SocketChannel ch, ByteBuffer b, long offset) throws IOException {
        if (ch.read(b) < 0) {
            throw new EOFException("end of stream at " + offset);
        }
        return check(b.flip(), offset);
    }

    private static long check(ByteBuffer b, long offset) {
        int n = b.remaining();
        for (int i = 0; i < n; i++) {
            assertEquals(at(offset + i), b.get(), "byte " + (offset + i));
        }
        return n;
    }
}
