package io.hadronio.path;

import io.hadronio.worker.WorkerGroup;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.EagerProvider;
import io.hadronio.HadronioProvider;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Threads blocked in writes on one worker are woken for their own connection (a credit, a
 * completed send), not for every event of the worker. Regression: every progress that handled
 * events woke every blocked writer, so three writers blocked on slow readers were woken
 * thousands of times by another connection's ping-pong, and queued for the worker's lock.
 * Counted: wake-ups for events ({@code WorkerGroup.writerWakes} of the writers' worker); the hand-over of the worker's
 * watch, which wakes one waiter whenever the watcher leaves, is a wake-up of another kind.
 */
@Timeout(120)
class WriterWakeTest {
    private static final int WRITERS = 3;
    private static final int ROUND_TRIPS = 2_000;
    private static final int BYTES = 4 << 20;

    @Test
    void shouldNotWakeBlockedWritersForOtherConnectionsTraffic() throws Exception {
        HadronioProvider provider = EagerProvider.get();
        // the peers on workers of their own (another provider instance): between two channels of
        // one worker a send completes the peer's receive inside the call, and everyone is woken
        java.util.Properties props = new java.util.Properties();
        props.putAll(System.getProperties());
        props.setProperty("hadronio.upgrade", "false");
        HadronioProvider other = new HadronioProvider(io.hadronio.config.HadronioConfig.from(props));
        try (ServerSocketChannel server = other.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            List<SocketChannel> clients = new ArrayList<>();
            List<SocketChannel> peers = new ArrayList<>();
            List<CompletableFuture<Void>> writes = new ArrayList<>();
            try {
                for (int i = 0; i < WRITERS + 1; i++) {
                    SocketChannel c = provider.openSocketChannel();
                    clients.add(c);
                    c.connect(server.getLocalAddress());
                    peers.add(server.accept());
                }
                // writers 0..WRITERS-1 block: their peers read nothing yet
                for (int i = 0; i < WRITERS; i++) {
                    SocketChannel c = clients.get(i);
                    writes.add(CompletableFuture.runAsync(() -> {
                        try {
                            ByteBuffer b = ByteBuffer.allocateDirect(BYTES);
                            while (b.hasRemaining()) {
                                c.write(b);
                            }
                        } catch (Exception e) {
                            throw new RuntimeException(e);
                        }
                    }, r -> new Thread(r, "writer").start()));
                }
                Thread.sleep(500);
                for (CompletableFuture<Void> w : writes) {
                    assertTrue(!w.isDone(), "a writer did not block");
                }
                WorkerGroup group = groupOf(clients.get(0));
                assertTrue(group == groupOf(clients.get(WRITERS)), "the writers and the pinger share a worker");
                long before = group.writerWakes.sum();
                // another connection's ping-pong: thousands of events on the same worker
                SocketChannel pinger = clients.get(WRITERS);
                SocketChannel echo = peers.get(WRITERS);
                CompletableFuture<Void> echoing = CompletableFuture.runAsync(() -> {
                    try {
                        ByteBuffer b = ByteBuffer.allocateDirect(8);
                        for (int i = 0; i < ROUND_TRIPS; i++) {
                            b.clear();
                            while (b.hasRemaining()) {
                                echo.read(b);
                            }
                            b.flip();
                            while (b.hasRemaining()) {
                                echo.write(b);
                            }
                        }
                    } catch (Exception e) {
                        throw new RuntimeException(e);
                    }
                }, r -> new Thread(r, "echo").start());
                ByteBuffer b = ByteBuffer.allocateDirect(8);
                for (int i = 0; i < ROUND_TRIPS; i++) {
                    b.clear().putLong(0, i);
                    while (b.hasRemaining()) {
                        pinger.write(b);
                    }
                    b.clear();
                    while (b.hasRemaining()) {
                        pinger.read(b);
                    }
                    assertEquals(i, b.getLong(0));
                }
                echoing.get(30, TimeUnit.SECONDS);
                long wakes = group.writerWakes.sum() - before;
                System.out.println("blocked writers woken for events during " + ROUND_TRIPS + " round trips of another connection: "
                        + wakes);
                // (the worker's watch, handed over when a watcher leaves, still wakes one waiter: not counted)
                assertTrue(wakes < ROUND_TRIPS / 10, "blocked writers woken " + wakes + " times");
                // and the writers still finish once their peers read
                for (int i = 0; i < WRITERS; i++) {
                    ByteBuffer in = ByteBuffer.allocateDirect(1 << 20);
                    long left = BYTES;
                    while (left > 0) {
                        in.clear();
                        left -= peers.get(i).read(in);
                    }
                    writes.get(i).get(30, TimeUnit.SECONDS);
                }
            } finally {
                for (SocketChannel c : clients) {
                    c.close();
                }
                for (SocketChannel p : peers) {
                    p.close();
                }
            }
        }
    }

    private static WorkerGroup groupOf(SocketChannel c) throws ReflectiveOperationException {
        return ((Connection) ChannelInternals.lifeOf(c).connection()).group();
    }
}
