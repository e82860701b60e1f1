package io.hadronio.app.patterns;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A framework's request/response from an application thread: the caller queues an 8-byte
 * request on the session ({@link Session#write}, which wakes the I/O thread's selector),
 * the I/O thread writes it, reads the echoed answer and hands it back through a
 * {@link BlockingQueue}, on which the caller waits. Two hand-offs between threads per round
 * trip on the client, on top of the transport's; the server ({@code patterns -s}) echoes on
 * its I/O thread.
 */
final class HandoffBenchmark {
    private static final int SIZE = Long.BYTES;

    private HandoffBenchmark() {
    }

    /** What the run measured: round trips of the measured part, and whether every answer was right. */
    record Outcome(LatencySummary latency, double seconds, long failures, String transport) {
    }

    static Outcome run(InetSocketAddress remote, double warmupSeconds, double durationSeconds) throws Exception {
        try (EventLoop loop = new EventLoop("io")) {
            Answers session = new Answers(loop, remote);
            loop.start();
            ByteBuffer request = ByteBuffer.allocateDirect(SIZE);
            long seq = 0;
            long failures = 0;
            long warmEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
            while (System.nanoTime() < warmEnd) {
                failures += call(loop, session, request, ++seq);
            }
            MeasurementWindow.open();
            long[] times = new long[1 << 20];
            int n = 0;
            long start = System.nanoTime();
            long end = start + (long) (durationSeconds * 1e9);
            long now = start;
            while (now < end) {
                long t0 = now;
                failures += call(loop, session, request, ++seq);
                now = System.nanoTime();
                if (n == times.length) {
                    times = java.util.Arrays.copyOf(times, n * 2);
                }
                times[n++] = now - t0;
            }
            double seconds = (now - start) / 1e9;
            String transport = io.hadronio.app.Transports.path(session.channel);
            session.channel.close();
            return new Outcome(LatencySummary.of(java.util.Arrays.copyOf(times, n)), seconds, failures, transport);
        }
    }

    /** One round trip; 1 when the answer was not the request. */
    private static int call(EventLoop loop, Answers session, ByteBuffer request, long seq) throws Exception {
        request.clear();
        request.putLong(0, seq);
        session.write(request);
        Long answer;
        while ((answer = session.answers.poll(1, TimeUnit.SECONDS)) == null) {
            loop.check();
        }
        return answer == seq ? 0 : 1;
    }

    /** The client's session: reads echoed answers and hands each to the caller's queue. */
    private static final class Answers extends Session {
        // the I/O thread puts, the caller takes (a framework's promise or response queue)
        final BlockingQueue<Long> answers = new LinkedBlockingQueue<>();
        private final ByteBuffer in = ByteBuffer.allocateDirect(64 * SIZE);

        Answers(EventLoop loop, InetSocketAddress remote) throws IOException {
            super(loop, SocketChannel.open(remote));
        }

        @Override
        void readable() throws IOException {
            if (channel.read(in) < 0) {
                throw new EOFException("the server closed the connection");
            }
            in.flip();
            while (in.remaining() >= SIZE) {
                answers.add(in.getLong());
            }
            in.compact();
        }
    }
}
