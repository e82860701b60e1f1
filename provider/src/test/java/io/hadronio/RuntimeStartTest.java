package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.nio.HadronioSocketChannel;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The runtime's start runs in the background (UcxRuntime, BackgroundStart): a connection made
 * while it runs starts on the kernel exactly like any other, carries its bytes there, and moves
 * to UCX once the start has finished; a start that fails leaves it on the kernel for good, says
 * why in one WARNING, and every later channel is the JDK's. The start is held (or failed) through
 * the provider's test seam, which runs first on the start's thread.
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
class RuntimeStartTest {
    private static HadronioProvider server;

    @BeforeAll
    static void start() {
        server = new HadronioProvider(HadronioConfig.from(upgradeMode()));
        assertTrue(server.isAccelerated());
    }

    @AfterAll
    static void stop() {
        // the providers' threads are daemons
    }

    /** Upgrade mode over kernel TCP (the local stream has tests of its own), the usual delay. */
    private static Properties upgradeMode() {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        p.setProperty("hadronio.local.stream", "false");
        return p;
    }

    /** A provider whose runtime's start waits for {@code gate}, then fails with {@code failure} (null: starts). */
    private static HadronioProvider heldProvider(CountDownLatch gate, RuntimeException failure) {
        return new HadronioProvider(HadronioConfig.from(upgradeMode()), () -> {
            try {
                gate.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            if (failure != null) {
                throw failure;
            }
        });
    }

    private static final java.net.InetAddress LOOPBACK = java.net.InetAddress.getLoopbackAddress();

    private static String transport(SocketChannel c) throws java.io.IOException {
        return c.getOption(HadronioSocketOptions.TRANSPORT);
    }

    /** Echoes everything until end-of-stream on a thread of its own, then closes; the bytes echoed. */
    private static CompletableFuture<Long> echo(SocketChannel peer) {
        CompletableFuture<Long> done = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try (peer) {
                ByteBuffer buf = ByteBuffer.allocateDirect(65536);
                long total = 0;
                while (peer.read(buf) >= 0) {
                    buf.flip();
                    total += buf.remaining();
                    while (buf.hasRemaining()) {
                        peer.write(buf);
                    }
                    buf.clear();
                }
                done.complete(total);
            } catch (Throwable e) {
                done.completeExceptionally(e);
            }
        }, "echo");
        t.setDaemon(true);
        t.start();
        return done;
    }

    /**
     * Writes {@code total} bytes of a pattern (from {@code seed}) in chunks of varying size while
     * a thread reads the echo and checks it, then shuts the output down and checks the end.
     */
    private static void stream(SocketChannel client, long total, int seed) throws Exception {
        CompletableFuture<Long> checked = new CompletableFuture<>();
        Thread reader = new Thread(() -> {
            try {
                ByteBuffer in = ByteBuffer.allocate(70_000);
                long got = 0;
                while (true) {
                    int n = client.read(in.clear());
                    if (n < 0) {
                        break;
                    }
                    in.flip();
                    while (in.hasRemaining()) {
                        if (in.get() != (byte) (seed + got)) {
                            throw new AssertionError("byte " + got + " differs");
                        }
                        got++;
                    }
                }
                checked.complete(got);
            } catch (Throwable e) {
                checked.completeExceptionally(e);
            }
        }, "stream-reader");
        reader.setDaemon(true);
        reader.start();
        java.util.Random r = new java.util.Random(seed);
        long sent = 0;
        while (sent < total) {
            int n = (int) Math.min(total - sent, 1 + r.nextInt(r.nextInt(10) == 0 ? 300_000 : 2_000));
            ByteBuffer out = ByteBuffer.allocate(n);
            for (int i = 0; i < n; i++) {
                out.put((byte) (seed + sent + i));
            }
            out.flip();
            while (out.hasRemaining()) {
                client.write(out);
            }
            sent += n;
        }
        client.shutdownOutput();
        assertEquals(total, checked.get(60, TimeUnit.SECONDS), "bytes echoed");
    }

    private static boolean started(SocketChannel c) {
        return ((HadronioSocketChannel) c).runtime().started();
    }

    /** One round trip of {@code n} bytes through the echo. */
    private static void roundTrip(SocketChannel c, int n, byte fill) throws Exception {
        ByteBuffer out = ByteBuffer.allocate(n);
        while (out.hasRemaining()) {
            out.put(fill);
        }
        out.flip();
        while (out.hasRemaining()) {
            c.write(out);
        }
        ByteBuffer in = ByteBuffer.allocate(n);
        while (in.hasRemaining()) {
            assertTrue(c.read(in) >= 0, "the echo ended early");
        }
        in.flip();
        while (in.hasRemaining()) {
            assertEquals(fill, in.get());
        }
    }

    @Test
    void shouldCarryAConnectionMadeBeforeTheStartAndMoveItToUcxOnceStarted() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        HadronioProvider held = heldProvider(gate, null);
        try (ServerSocketChannel listener = server.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = held.openSocketChannel()) {
                assertInstanceOf(HadronioSocketChannel.class, client, "a channel of ours while the start runs");
                client.connect(listener.getLocalAddress());
                CompletableFuture<Long> echo = echo(listener.accept());
                assertFalse(started(client), "the connect did not wait for the start");
                // the upgrade is due after the first write (hadronio.upgrade.delay): it asks for
                // the start, which is held, so the bytes keep going over the kernel meanwhile
                for (int i = 0; i < 50; i++) {
                    roundTrip(client, 1000, (byte) i);
                    Thread.sleep(1);
                }
                assertFalse(started(client));
                assertEquals("tcp", transport(client));
                gate.countDown();
                assertTrue(held.isAccelerated(), "the start finished");
                // the next writes begin the upgrade; round trips go on over the kernel until it switches
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                int trips = 0;
                while (!transport(client).startsWith("ucx:") && System.nanoTime() - deadline < 0) {
                    roundTrip(client, 1000, (byte) trips++);
                }
                assertTrue(transport(client).startsWith("ucx:"),
                        "moved to UCX once started: " + transport(client));
                stream(client, 8L << 20, 3);
                assertEquals(50L * 1000 + trips * 1000L + (8L << 20), echo.get(30, TimeUnit.SECONDS));
            }
        } finally {
            gate.countDown();
        }
    }

    /** One round trip through the echo, non-blocking, waiting on {@code selector} (at most 10 s per wait). */
    private static void selectedRoundTrip(java.nio.channels.Selector selector, SocketChannel c, int n, byte fill)
            throws Exception {
        ByteBuffer out = ByteBuffer.allocate(n);
        while (out.hasRemaining()) {
            out.put(fill);
        }
        out.flip();
        ByteBuffer in = ByteBuffer.allocate(n);
        java.nio.channels.SelectionKey key = c.keyFor(selector);
        while (in.hasRemaining()) {
            if (out.hasRemaining()) {
                c.write(out);
            }
            key.interestOps(out.hasRemaining()
                    ? java.nio.channels.SelectionKey.OP_READ | java.nio.channels.SelectionKey.OP_WRITE
                    : java.nio.channels.SelectionKey.OP_READ);
            selector.selectedKeys().clear();
            int ready = selector.select(10_000);
            int got = c.read(in);
            assertTrue(got >= 0, "the echo ended early");
            assertTrue(ready > 0 || got > 0, "the selector saw nothing within 10 s");
        }
        in.flip();
        while (in.hasRemaining()) {
            assertEquals(fill, in.get());
        }
    }

    @Test
    void shouldSelectAConnectionThatMovesToUcxWithASelectorMadeBeforeTheStart() throws Exception {
        CountDownLatch gate = new CountDownLatch(1);
        HadronioProvider held = heldProvider(gate, null);
        try (ServerSocketChannel listener = server.openServerSocketChannel();
             java.nio.channels.Selector selector = held.openSelector()) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = held.openSocketChannel()) {
                client.connect(listener.getLocalAddress());
                CompletableFuture<Long> echo = echo(listener.accept());
                client.configureBlocking(false);
                client.register(selector, java.nio.channels.SelectionKey.OP_READ);
                for (int i = 0; i < 20; i++) {
                    selectedRoundTrip(selector, client, 1000, (byte) i);
                }
                assertFalse(started(client), "the selector and the connection did not wait for the start");
                gate.countDown();
                assertTrue(held.isAccelerated());
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                int trips = 20;
                while (!transport(client).startsWith("ucx:") && System.nanoTime() - deadline < 0) {
                    selectedRoundTrip(selector, client, 1000, (byte) trips++);
                }
                assertTrue(transport(client).startsWith("ucx:"), "moved to UCX: " + transport(client));
                // on UCX now: the selector (made before the workers existed) must wake on its messages
                for (int i = 0; i < 200; i++) {
                    selectedRoundTrip(selector, client, 1000, (byte) (trips++));
                }
                client.shutdownOutput();
                assertEquals(trips * 1000L, echo.get(30, TimeUnit.SECONDS));
            }
        } finally {
            gate.countDown();
        }
    }

    @Test
    void shouldLeaveEveryConnectionOnTheKernelWhenTheStartFails() throws Exception {
        List<LogRecord> warnings = new CopyOnWriteArrayList<>();
        Logger log = Logger.getLogger(HadronioProvider.class.getName());
        Handler capture = new Handler() {
            @Override
            public void publish(LogRecord r) {
                warnings.add(r);
            }

            @Override
            public void flush() {
            }

            @Override
            public void close() {
            }
        };
        log.addHandler(capture);
        CountDownLatch gate = new CountDownLatch(1);
        HadronioProvider failing = heldProvider(gate, new IllegalStateException("no UCX here (test)"));
        try (ServerSocketChannel listener = server.openServerSocketChannel();
             ServerSocketChannel early = failing.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = failing.openSocketChannel()) {
                assertInstanceOf(HadronioSocketChannel.class, client);
                client.connect(listener.getLocalAddress());
                CompletableFuture<Long> echo = echo(listener.accept());
                roundTrip(client, 1000, (byte) 1);
                // a listener made before the failure binds once the start has ended: plain
                CompletableFuture<Void> bound = CompletableFuture.runAsync(() -> {
                    try {
                        early.bind(new InetSocketAddress(LOOPBACK, 0));
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                gate.countDown();
                assertFalse(failing.isAccelerated());
                bound.get(30, TimeUnit.SECONDS);
                assertTrue(warnings.stream().anyMatch(r -> r.getLevel() == java.util.logging.Level.WARNING
                                && r.getMessage().contains("no UCX here (test)")),
                        "one WARNING names the reason: " + warnings.stream().map(LogRecord::getMessage).toList());
                stream(client, 4L << 20, 5);
                assertEquals("tcp", transport(client), "stays on the kernel");
                assertEquals(1000L + (4L << 20), echo.get(30, TimeUnit.SECONDS));

                // an accelerated client of the plain listener stays plain too (it offers no rendezvous)
                try (SocketChannel toEarly = server.openSocketChannel()) {
                    toEarly.connect(early.getLocalAddress());
                    CompletableFuture<Long> earlyEcho = echo(early.accept());
                    stream(toEarly, 4L << 20, 9);
                    assertEquals("tcp", transport(toEarly));
                    assertEquals(4L << 20, earlyEcho.get(30, TimeUnit.SECONDS));
                }
            }
            try (SocketChannel late = failing.openSocketChannel()) {
                assertEquals("sun.nio.ch.SocketChannelImpl", late.getClass().getName(),
                        "once the start failed, channels are the JDK's");
            }
        } finally {
            gate.countDown();
            log.removeHandler(capture);
        }
    }
}
