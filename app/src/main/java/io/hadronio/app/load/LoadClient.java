package io.hadronio.app.load;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.Transports;
import io.hadronio.app.blocking.Endpoints;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;

/**
 * The load mode's client: {@code connections} connections on one Selector, each sending a
 * request of {@code length} bytes at a fixed rate ({@code rate / connections} per second,
 * the connections' schedules staggered evenly) and waiting for its echo. A connection has
 * one request outstanding at a time; a request whose time came while the previous one was
 * still out is sent as soon as the answer arrives, and its response time counts from when it
 * should have been sent (no coordinated omission): past saturation response times grow
 * without bound, as they do for a real client. The loop spins ({@code selectNow}) when the
 * next request is due within 2 ms, so that sending is not late by a timer's granularity.
 *
 * <p>The warm-up is closed-loop (every connection sends its next request as soon as the
 * answer is there) so that both JVMs compile their paths before the paced, measured part
 * starts: paced from a cold start, the first slow answers left a backlog that short runs
 * never worked off. Requests sent in the warm-up are not counted.
 *
 * <p>One client can run several rates one after another on the same connections ({@link #run}
 * once per rate), so that a rate ladder costs one JVM pair, not one per rate.
 */
final class LoadClient implements AutoCloseable {
    private static final long SPIN_NANOS = 2_000_000;
    // after a measured window, the answers still out must come back within this long
    private static final long DRAIN_NANOS = 30_000_000_000L;

    private final int length;
    private final SocketChannel[] channels;
    private final Selector selector;
    // per connection, allocated once for every rate
    private final ByteBuffer[] out;
    private final ByteBuffer[] in;

    private LoadClient(int length, SocketChannel[] channels, Selector selector) {
        this.length = length;
        this.channels = channels;
        this.selector = selector;
        this.out = new ByteBuffer[channels.length];
        this.in = new ByteBuffer[channels.length];
        for (int c = 0; c < channels.length; c++) {
            out[c] = ByteBuffer.allocateDirect(length);
            in[c] = ByteBuffer.allocateDirect(length);
        }
    }

    /** Opens {@code connections} connections to {@code remote} on one Selector. */
    static LoadClient connect(InetSocketAddress remote, int connections, int length)
            throws IOException, InterruptedException {
        SocketChannel[] channels = new SocketChannel[connections];
        Selector selector = Selector.open();
        try {
            for (int c = 0; c < connections; c++) {
                channels[c] = Endpoints.connect(remote);
                channels[c].configureBlocking(false);
                channels[c].register(selector, SelectionKey.OP_READ, c);
            }
            return new LoadClient(length, channels, selector);
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeAll(channels, selector);
            throw e;
        }
    }

    /**
     * What one load run measured; {@code latency} is null when no request was answered in the
     * window; {@code paths} counts the connections on each path at its end ({@link #paths()}).
     */
    record Outcome(LatencySummary latency, long completed, double seconds, String transport, String paths) {
    }

    /**
     * One run at {@code rate} requests per second (all connections together): a closed-loop
     * warm-up of {@code warmupSeconds}, the paced window of {@code seconds}, then the answers
     * still out are awaited, so that the next run starts with every connection idle.
     */
    Outcome run(double rate, double warmupSeconds, double seconds) throws IOException {
        int n = channels.length;
        long interval = (long) (n * 1e9 / rate);
        long[] due = new long[n];
        long[] outstanding = new long[n];
        boolean[] waiting = new boolean[n];
        int pending = 0;
        long start = System.nanoTime();
        long measureFrom = start + (long) (warmupSeconds * 1e9);
        long end = measureFrom + (long) (seconds * 1e9);
        long[] times = new long[(int) Math.min(Integer.MAX_VALUE - 8, rate * seconds * 1.2 + 1024)];
        int count = 0;
        boolean paced = false;
        for (int c = 0; c < n; c++) {
            due[c] = start;
        }
        while (true) {
            long now = System.nanoTime();
            if (!paced && now >= measureFrom) {
                // the paced schedule starts now, staggered over one interval
                for (int c = 0; c < n; c++) {
                    due[c] = now + interval * c / n;
                }
                MeasurementWindow.open();
                paced = true;
            }
            boolean sending = now < end;
            if (!sending && pending == 0) {
                break;
            }
            if (!sending && now - end > DRAIN_NANOS) {
                throw new IOException(pending + " requests still unanswered " + DRAIN_NANOS / 1_000_000_000
                        + " s after the window");
            }
            long next = sending ? end : now + SPIN_NANOS * 2;
            for (int c = 0; c < n && sending; c++) {
                if (!waiting[c] && due[c] <= now) {
                    out[c].clear();
                    channels[c].write(out[c]);
                    if (out[c].hasRemaining()) {
                        channels[c].keyFor(selector).interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
                    }
                    outstanding[c] = paced ? due[c] : now;
                    due[c] = paced ? due[c] + interval : now;
                    waiting[c] = true;
                    pending++;
                }
                if (!waiting[c]) {
                    next = Math.min(next, due[c]);
                }
            }
            long wait = next - System.nanoTime();
            int ready = wait <= SPIN_NANOS ? selector.selectNow() : selector.select(Math.max(1, (wait - SPIN_NANOS) / 1_000_000));
            if (ready == 0) {
                continue;
            }
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                int c = (Integer) key.attachment();
                if (key.isWritable()) {
                    channels[c].write(out[c]);
                    if (!out[c].hasRemaining()) {
                        key.interestOps(SelectionKey.OP_READ);
                    }
                }
                if (key.isReadable()) {
                    if (channels[c].read(in[c]) < 0) {
                        throw new EOFException("the server closed connection " + c);
                    }
                    if (!in[c].hasRemaining()) {
                        long done = System.nanoTime();
                        in[c].clear();
                        waiting[c] = false;
                        pending--;
                        // counted: requests of the paced part answered before its end
                        if (outstanding[c] >= measureFrom && done < end && count < times.length) {
                            times[count++] = done - outstanding[c];
                        }
                    }
                }
            }
        }
        String transport = Endpoints.transport(channels[0]);
        return new Outcome(count == 0 ? null : LatencySummary.of(Arrays.copyOf(times, count)), count, seconds, transport,
                paths());
    }

    /**
     * Every connection's path with how many took it ({@code ucx:cma,sysv(1000)},
     * {@code tcp(3)+ucx:cma,sysv(997)}): a connection still on its kernel socket after the
     * closed-loop warm-up has not finished its move to UCX.
     */
    private String paths() {
        List<String> paths = new ArrayList<>(channels.length);
        for (SocketChannel c : channels) {
            paths.add(Transports.path(c));
        }
        return Transports.summary(paths);
    }

    int length() {
        return length;
    }

    @Override
    public void close() throws IOException {
        closeAll(channels, selector);
    }

    private static void closeAll(SocketChannel[] channels, Selector selector) throws IOException {
        for (SocketChannel ch : channels) {
            if (ch != null) {
                ch.close();
            }
        }
        selector.close();
    }
}
