package io.hadronio.app.patterns;

import io.hadronio.app.LatencySummary;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * One hop through a selector, in one JVM: how long from {@code wakeup()} until
 * {@code select()} has returned. The selector has one idle connection registered for
 * {@code OP_READ} (so that hadroNIO's selector has a worker to watch), and nothing ever
 * arrives on it.
 *
 * <ul>
 *   <li><b>self</b>: the selector's own thread calls {@code wakeup()} and then {@code select()},
 *       which returns at once (a framework that queues work for its own loop).</li>
 *   <li><b>other, after D µs</b>: the selector's thread enters {@code select()} and another
 *       thread calls {@code wakeup()} D µs later; the hop ends when the selector's thread has
 *       returned. A small D catches a selector that still spins (hadroNIO's adaptive wait spins
 *       up to {@code hadronio.polling.spin}, 100 µs); a large one a selector asleep.</li>
 * </ul>
 */
final class WakeupBenchmark implements AutoCloseable {
    private final Selector selector;
    private final ServerSocketChannel server;
    private final SocketChannel client;
    private final SocketChannel accepted;

    WakeupBenchmark() throws IOException {
        selector = Selector.open();
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        client = SocketChannel.open(server.getLocalAddress());
        accepted = server.accept();
        client.configureBlocking(false);
        client.register(selector, SelectionKey.OP_READ);
    }

    /** The selector's own thread: wakeup() then select(), {@code seconds} long; one time per pair. */
    LatencySummary self(double seconds) throws IOException {
        long[] times = new long[1 << 16];
        int n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        for (long now = System.nanoTime(); now < end; ) {
            long t0 = now;
            selector.wakeup();
            selector.select();
            now = System.nanoTime();
            if (n == times.length) {
                times = Arrays.copyOf(times, n * 2);
            }
            times[n++] = now - t0;
        }
        return LatencySummary.of(Arrays.copyOf(times, n));
    }

    /**
     * Another thread wakes the selector {@code delayMicros} after its thread announced it
     * enters {@code select()}, for {@code seconds}; one time per hop, from just before
     * {@code wakeup()} until the selector's thread has returned from {@code select()}.
     */
    LatencySummary other(long delayMicros, double seconds) throws Exception {
        // a wakeup left from the case before (its last hop's, or its stop's) would make the first
        // select return by itself and put the selector's thread a hop ahead of this one
        selector.selectNow();
        Hops hops = new Hops(selector);
        Thread t = new Thread(hops, "selector");
        t.setDaemon(true);
        t.start();
        long[] times = new long[1 << 16];
        int n = 0;
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long delay = delayMicros * 1000;
        for (long hop = 1; System.nanoTime() < end; hop++) {
            // the selector's thread is about to select for this hop (or a later one: a select may
            // return by itself, and waiting for this hop's number would then wait for ever)
            long entering;
            while ((entering = hops.entering) < hop) {
                hops.check(t);
                Thread.yield();
            }
            hop = entering;
            long t0 = hops.enteredAt + delay;
            if (delay >= 200_000) {
                LockSupport.parkNanos(t0 - System.nanoTime() - 100_000);
            }
            long now;
            while ((now = System.nanoTime()) < t0) {
                Thread.onSpinWait();
            }
            selector.wakeup();
            while (hops.returned < hop) {
                hops.check(t);
                Thread.yield();
            }
            if (n == times.length) {
                times = Arrays.copyOf(times, n * 2);
            }
            times[n++] = hops.returnedAt - now;
        }
        hops.stop = true;
        selector.wakeup();
        t.join();
        return LatencySummary.of(Arrays.copyOf(times, n));
    }

    /** The selector's thread in {@link #other}: announces each select and its return. */
    private static final class Hops implements Runnable {
        private final Selector selector;
        volatile long entering;
        volatile long enteredAt;
        volatile long returned;
        volatile long returnedAt;
        volatile boolean stop;
        volatile Throwable failure;

        Hops(Selector selector) {
            this.selector = selector;
        }

        /** Throws when the selector's thread {@code t} has ended with a failure. */
        void check(Thread t) {
            if (!t.isAlive()) {
                throw new IllegalStateException("the selector's thread ended", failure);
            }
        }

        @Override
        public void run() {
            try {
                for (long hop = 1; !stop; hop++) {
                    enteredAt = System.nanoTime();
                    entering = hop;
                    selector.select();
                    returnedAt = System.nanoTime();
                    returned = hop;
                }
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
    }

    String transport() {
        return io.hadronio.app.Transports.path(client);
    }

    @Override
    public void close() throws IOException {
        client.close();
        accepted.close();
        server.close();
        selector.close();
    }
}
