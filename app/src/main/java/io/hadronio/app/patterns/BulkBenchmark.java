package io.hadronio.app.patterns;

import io.hadronio.app.MeasurementWindow;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A framework's bulk echo: one application thread queues {@code chunk}-byte writes on every
 * session in turn ({@link Session#write}: queued, the I/O thread woken and flushing them), the
 * server ({@code patterns -s}) echoes, and the I/O thread reads and counts the echo. Each
 * session has a fixed pool of write buffers (a framework's write-buffer high-water mark): the
 * application thread waits for one to come back written before it queues more.
 */
final class BulkBenchmark {
    // write buffers per session: 16 x 64 KiB = 1 MiB queued at most, Netty's default high-water mark is 64 KiB
    // per channel, but frameworks that write from application threads (and the echo) queue more
    private static final int BUFFERS = 16;
    // every STRIDE-th byte of the echo is checked against what was sent
    private static final int STRIDE = 4096;

    private BulkBenchmark() {
    }

    /** The measured passes: bytes echoed back, seconds, wrong bytes seen. */
    record Outcome(long bytes, double seconds, long failures, String transport) {
        double megabytesPerSecond() {
            return bytes / seconds / 1e6;
        }
    }

    static Outcome run(InetSocketAddress remote, int sessions, long bytesPerSession, int chunk, double warmupSeconds,
            int passes) throws Exception {
        if (chunk % STRIDE != 0 || bytesPerSession % chunk != 0) {
            throw new IllegalArgumentException("--chunk must be a multiple of " + STRIDE + " and divide --bytes");
        }
        try (EventLoop loop = new EventLoop("io")) {
            List<Echo> all = new ArrayList<>();
            for (int i = 0; i < sessions; i++) {
                all.add(new Echo(loop, remote, chunk));
            }
            loop.start();
            long warmEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
            do {
                pass(loop, all, bytesPerSession, chunk);
            } while (System.nanoTime() < warmEnd);
            MeasurementWindow.open();
            long start = System.nanoTime();
            for (int p = 0; p < passes; p++) {
                pass(loop, all, bytesPerSession, chunk);
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            long failures = all.stream().mapToLong(e -> e.wrong.get()).sum();
            String transport = io.hadronio.app.Transports.path(all.get(0).channel);
            for (Echo e : all) {
                e.channel.close();
            }
            return new Outcome(passes * sessions * bytesPerSession, seconds, failures, transport);
        }
    }

    /** Every session sends and gets back {@code bytes}; returns when all of it is back. */
    private static void pass(EventLoop loop, List<Echo> all, long bytes, int chunk) throws Exception {
        CountDownLatch done = new CountDownLatch(all.size());
        for (Echo e : all) {
            e.expect(bytes, done);
        }
        long chunks = bytes / chunk;
        for (long c = 0; c < chunks; c++) {
            for (Echo e : all) {
                ByteBuffer b;
                while ((b = e.free.poll(1, TimeUnit.SECONDS)) == null) {
                    loop.check();
                }
                b.clear();
                // the chunk's number in its first byte of every stride: the echo is checked against it
                for (int i = 0; i < chunk; i += STRIDE) {
                    b.put(i, (byte) c);
                }
                e.write(b);
            }
        }
        while (!done.await(1, TimeUnit.SECONDS)) {
            loop.check();
        }
    }

    /** One session: its pool of write buffers, and the count (and check) of what came back. */
    private static final class Echo extends Session {
        final BlockingQueue<ByteBuffer> free = new ArrayBlockingQueue<>(BUFFERS);
        final AtomicLong wrong = new AtomicLong();
        private final ByteBuffer in = ByteBuffer.allocateDirect(256 * 1024);
        private final int chunk;
        // loop thread only: bytes of this pass still to come, and their count so far
        private long expected;
        private long received;
        private volatile CountDownLatch done;

        Echo(EventLoop loop, InetSocketAddress remote, int chunk) throws IOException {
            super(loop, SocketChannel.open(remote));
            this.chunk = chunk;
            for (int i = 0; i < BUFFERS; i++) {
                free.add(ByteBuffer.allocateDirect(chunk));
            }
        }

        /** Before a pass (no byte of it in flight yet): how much comes back, and whom to tell. */
        void expect(long bytes, CountDownLatch latch) {
            // published to the loop thread by the volatile write of done
            expected = bytes;
            received = 0;
            done = latch;
        }

        @Override
        void readable() throws IOException {
            CountDownLatch latch = done;
            int n = channel.read(in);
            if (n < 0) {
                throw new EOFException("the server closed the connection");
            }
            in.flip();
            // the first checked offset in this read: the next multiple of STRIDE
            long first = (received + STRIDE - 1) / STRIDE * STRIDE;
            for (long off = first; off < received + in.limit(); off += STRIDE) {
                if (in.get((int) (off - received)) != (byte) (off / chunk)) {
                    wrong.incrementAndGet();
                }
            }
            received += in.limit();
            in.clear();
            if (received == expected && latch != null) {
                latch.countDown();
            }
        }

        @Override
        void written(ByteBuffer buffer) {
            free.add(buffer);
        }
    }
}
