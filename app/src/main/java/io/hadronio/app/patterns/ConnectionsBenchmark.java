package io.hadronio.app.patterns;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.Transports;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Short-lived connections, one after another, as a client that opens a connection per session
 * (an HTTP/1.1 client whose server closes after so many requests, a connection per job): each
 * connection is opened, carries {@code requests} blocking 64-byte request/responses through the
 * echo server ({@code patterns -s --pattern echo}) and is closed. On hadroNIO a connection starts
 * on the kernel (or a local stream) and moves to UCX in the middle of its requests, so this
 * measures what a connection's set-up, move and close cost the application, beside the JDK's.
 *
 * <p>One more connection stays open, idle, for the whole run: the echo server ends when its
 * last connection closes.
 */
final class ConnectionsBenchmark {
    private static final int SIZE = 64;

    private ConnectionsBenchmark() {
    }

    /**
     * What the measured part did: connections per second, every request's round trip, every
     * connection's life (open to closed), the paths the connections ended on, and how many
     * answers were wrong.
     */
    record Outcome(long connections, double seconds, LatencySummary roundTrips, LatencySummary lifetimes,
            String transports, long failures) {
    }

    static Outcome run(InetSocketAddress remote, int requests, double warmupSeconds, double durationSeconds)
            throws IOException {
        try (SocketChannel keeper = SocketChannel.open(remote)) {
            ByteBuffer out = ByteBuffer.allocateDirect(SIZE);
            ByteBuffer in = ByteBuffer.allocateDirect(SIZE);
            long[] seq = {0};
            long failures = 0;
            long warmEnd = System.nanoTime() + (long) (warmupSeconds * 1e9);
            while (System.nanoTime() < warmEnd) {
                failures += connection(remote, requests, out, in, seq, null, null);
            }
            MeasurementWindow.open();
            long[] trips = new long[1 << 20];
            long[] lives = new long[1 << 14];
            int[] counts = new int[2];
            List<String> paths = new ArrayList<>();
            long start = System.nanoTime();
            long end = start + (long) (durationSeconds * 1e9);
            long now = start;
            long connections = 0;
            while (now < end) {
                if (counts[0] + requests > trips.length) {
                    trips = Arrays.copyOf(trips, trips.length * 2);
                }
                if (counts[1] == lives.length) {
                    lives = Arrays.copyOf(lives, lives.length * 2);
                }
                long t0 = now;
                failures += connection(remote, requests, out, in, seq, new Recorder(trips, counts), paths);
                now = System.nanoTime();
                lives[counts[1]++] = now - t0;
                connections++;
            }
            double seconds = (now - start) / 1e9;
            return new Outcome(connections, seconds, LatencySummary.of(Arrays.copyOf(trips, counts[0])),
                    LatencySummary.of(Arrays.copyOf(lives, counts[1])), Transports.summary(paths), failures);
        }
    }

    /** Where a measured connection's round trips go: {@code counts[0]} of them in {@code trips}. */
    private record Recorder(long[] trips, int[] counts) {
        void add(long nanos) {
            trips[counts[0]++] = nanos;
        }
    }

    /** One connection: open, {@code requests} round trips, close; returns the wrong answers. */
    private static int connection(InetSocketAddress remote, int requests, ByteBuffer out, ByteBuffer in, long[] seq,
            Recorder recorder, List<String> paths) throws IOException {
        int failures = 0;
        try (SocketChannel c = SocketChannel.open(remote)) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            for (int i = 0; i < requests; i++) {
                long t0 = System.nanoTime();
                long s = ++seq[0];
                out.clear();
                out.putLong(0, s);
                while (out.hasRemaining()) {
                    c.write(out);
                }
                in.clear();
                while (in.hasRemaining()) {
                    if (c.read(in) < 0) {
                        throw new EOFException("the server closed the connection");
                    }
                }
                if (recorder != null) {
                    recorder.add(System.nanoTime() - t0);
                }
                if (in.getLong(0) != s) {
                    failures++;
                }
            }
            if (paths != null) {
                paths.add(Transports.path(c));
            }
        }
        return failures;
    }
}
