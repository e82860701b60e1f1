package io.hadronio;

import io.hadronio.config.HadronioConfig;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.path.ChannelInternals;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.time.Duration;
import java.util.Iterator;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Connections that start at once ({@code hadronio.upgrade=true}): a local connection
 * opens as plain TCP, carries bytes at once, and moves to UCX in the background, one
 * direction at a time, with nothing lost, duplicated or reordered at the switch; a
 * direction that never switched ends with the kernel's FIN. Both ends in one JVM, through
 * the public NIO API.
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(120)
class UpgradeTest {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    static HadronioProvider upgrading;
    static SelectorProvider jdk;
    static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void start() {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        // no delay, and at the second write: every connection here tries to move at once (the
        // tests of when a connection moves set their own)
        p.setProperty("hadronio.upgrade.delay", "0");
        p.setProperty("hadronio.upgrade.writes", "1");
        // kernel TCP (what a connection between two users, or two versions, starts on):
        // LocalStreamTest and the cross-JVM tests cover the local stream's upgrade
        p.setProperty("hadronio.local.stream", "false");
        upgrading = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(upgrading.isAccelerated());
        jdk = upgrading.platform();
    }

    @AfterAll
    static void stop() {
        THREADS.shutdownNow();
    }

    static String transport(SocketChannel c) throws IOException {
        return c.getOption(HadronioSocketOptions.TRANSPORT);
    }

    /** Echoes everything until end-of-stream, then closes; blocking. */
    static CompletableFuture<Long> blockingEcho(SocketChannel peer, int bufferSize) {
        return CompletableFuture.supplyAsync(() -> {
            try (peer) {
                ByteBuffer buf = ByteBuffer.allocateDirect(bufferSize);
                long total = 0;
                while (peer.read(buf) >= 0) {
                    buf.flip();
                    total += buf.remaining();
                    while (buf.hasRemaining()) {
                        peer.write(buf);
                    }
                    buf.clear();
                }
                return total;
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, THREADS);
    }

    /**
     * Writes {@code total} bytes in random chunks with random scatter/gather while another
     * thread reads the echo; returns the CRC of what came back, which must equal what went.
     */
    static void streamAndCheck(SocketChannel client, long total, long seed) throws Exception {
        CompletableFuture<long[]> reader = CompletableFuture.supplyAsync(() -> {
            try {
                CRC32C crc = new CRC32C();
                Random r = new Random(seed + 1);
                long got = 0;
                while (true) {
                    ByteBuffer a = ByteBuffer.allocate(1 + r.nextInt(70_000));
                    ByteBuffer b = r.nextBoolean() ? ByteBuffer.allocateDirect(1 + r.nextInt(3000)) : ByteBuffer.allocate(1);
                    long n = client.read(new ByteBuffer[] {a, b});
                    if (n < 0) {
                        break;
                    }
                    crc.update(a.flip());
                    crc.update(b.flip());
                    got += n;
                }
                return new long[] {got, crc.getValue()};
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, THREADS);
        Random r = new Random(seed);
        CRC32C sent = new CRC32C();
        long left = total;
        while (left > 0) {
            int n1 = (int) Math.min(left, 1 + r.nextInt(r.nextInt(10) == 0 ? 300_000 : 2_000));
            int n2 = (int) Math.min(left - n1, r.nextInt(500));
            byte[] d1 = new byte[n1];
            byte[] d2 = new byte[n2];
            r.nextBytes(d1);
            r.nextBytes(d2);
            sent.update(d1);
            sent.update(d2);
            ByteBuffer b1 = ByteBuffer.wrap(d1);
            ByteBuffer b2 = ByteBuffer.allocateDirect(n2).put(d2).flip();
            ByteBuffer[] both = {b1, b2};
            while (b1.hasRemaining() || b2.hasRemaining()) {
                client.write(both);
            }
            left -= n1 + n2;
            if (r.nextInt(50) == 0) {
                Thread.sleep(1);
            }
        }
        client.shutdownOutput();
        long[] got = reader.get(60, TimeUnit.SECONDS);
        assertEquals(total, got[0], "bytes echoed");
        assertEquals(sent.getValue(), got[1], "CRC of the echo");
    }

    /**
     * With a delay the connection is surely plain at first (nothing starts the upgrade before
     * the client's first write after it; with no delay both sides may have moved already,
     * idle outputs included, by the time connect returns).
     */
    @Test
    void shouldCarryBytesAtOnceAndMoveToUcxMidStream() throws Exception {
        HadronioProvider delayed = upgradingAfter(50_000);
        try (ServerSocketChannel server = delayed.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = delayed.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                SocketChannel accepted = server.accept();
                assertEquals("tcp", transport(client), "a connection opens plain");
                CompletableFuture<Long> echo = blockingEcho(accepted, 65536);
                streamAndCheck(client, 24L << 20, 7);
                assertTrue(transport(client).startsWith("ucx:"), "moved to UCX: " + transport(client));
                assertEquals(24L << 20, echo.get(30, TimeUnit.SECONDS));
                assertEquals(-1, client.read(ByteBuffer.allocate(1)));
            }
        }
    }

    /** Request/response ping-pong across the switch: each message is answered whole and in order. */
    @Test
    void shouldKeepRequestResponseInOrderAcrossTheSwitch() throws Exception {
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = upgrading.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                CompletableFuture<Long> echo = blockingEcho(server.accept(), 16);
                ByteBuffer out = ByteBuffer.allocate(8);
                ByteBuffer in = ByteBuffer.allocate(8);
                for (long i = 0; i < 20_000; i++) {
                    roundTrip(client, out, in, i);
                }
                assertTrue(transport(client).startsWith("ucx:"), transport(client));
                client.shutdownOutput();
                assertEquals(-1, client.read(in.clear()));
                assertEquals(20_000L * 8, echo.get(30, TimeUnit.SECONDS));
            }
        }
    }

    /**
     * A blocking reader that waits on the socket while its input switches to UCX is woken by the
     * switch, not by the end of its wait's slice. Its peer's SWITCHED record follows the raw
     * bytes and wakes a poll on the socket, but once the input switched the control thread reads
     * the socket's records, and a poll that found the record taken slept on: 20 ms in the middle of
     * a request and its answer, for one connection in ten that moved this way. Each echo here
     * answers at once, so no wait should ever last its slice.
     */
    @Test
    void shouldWakeABlockingReaderWhenTheInputSwitches() throws Exception {
        long slicesOut = io.hadronio.path.UpgradingKernelPath.waitSlicesOut();
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            for (int c = 0; c < 40; c++) {
                try (SocketChannel client = upgrading.openSocketChannel()) {
                    client.connect(server.getLocalAddress());
                    CompletableFuture<Long> echo = blockingEcho(server.accept(), 8);
                    pingPongUntilUcx(client, Duration.ofSeconds(10));
                    ByteBuffer out = ByteBuffer.allocate(8);
                    ByteBuffer in = ByteBuffer.allocate(8);
                    for (long i = 0; i < 20; i++) {
                        roundTrip(client, out, in, i);
                    }
                    client.shutdownOutput();
                    assertEquals(-1, client.read(in.clear()));
                    echo.get(30, TimeUnit.SECONDS);
                }
            }
        }
        assertEquals(slicesOut, io.hadronio.path.UpgradingKernelPath.waitSlicesOut(),
                "blocking reads that waited a slice out while their peer answered at once");
    }

    /**
     * A connection moves once it has made hadronio.upgrade.writes writes on its first path, or
     * written 64 KiB: before that, a move would cost more than it could give back (a connection of
     * a few requests is over first), so nothing starts it.
     */
    @Test
    void shouldMoveOnlyAfterItsWritesOrA64KiBStream() throws Exception {
        // 16 writes: none of them may start the move (the 17th may)
        try (ServerSocketChannel server = movingAfterWrites(16).openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = server.provider().openSocketChannel()) {
                client.connect(server.getLocalAddress());
                CompletableFuture<Long> echo = blockingEcho(server.accept(), 8);
                ByteBuffer out = ByteBuffer.allocate(8);
                ByteBuffer in = ByteBuffer.allocate(8);
                for (long i = 0; i < 16; i++) {
                    roundTrip(client, out, in, i);
                }
                Thread.sleep(200);
                assertEquals("tcp", transport(client), "moved before its 17th write");
                pingPongUntilUcx(client, Duration.ofSeconds(10));
                client.shutdownOutput();
                assertEquals(-1, client.read(in.clear()));
                echo.get(30, TimeUnit.SECONDS);
            }
        }
        // as good as no number of writes: 64 KiB written is what moves it
        try (ServerSocketChannel server = movingAfterWrites(1_000_000_000).openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = server.provider().openSocketChannel()) {
                client.connect(server.getLocalAddress());
                CompletableFuture<Long> echo = blockingEcho(server.accept(), 64 << 10);
                ByteBuffer big = ByteBuffer.allocate(64 << 10);
                while (big.hasRemaining()) {
                    client.write(big);
                }
                ByteBuffer back = ByteBuffer.allocate(64 << 10);
                while (back.hasRemaining()) {
                    assertTrue(client.read(back) >= 0);
                }
                pingPongUntilUcx(client, Duration.ofSeconds(10));
                client.shutdownOutput();
                assertEquals(-1, client.read(ByteBuffer.allocate(8)));
                echo.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /**
     * A connection whose move begins long after its accept still moves: a client begins once the
     * connection carried traffic, which a slow one reaches late (128 writes at a few a second),
     * so the server's side waits for its session as long as the connection is open. Here the
     * move begins three handshake timeouts after the connect; a server that gave up after one
     * kept the connection on the kernel for good.
     */
    @Test
    void shouldMoveAConnectionWhoseMoveBeginsLongAfterItsAccept() throws Exception {
        Properties p = upgradeProperties(900_000, 1);
        p.setProperty("hadronio.handshake.timeout", "300");
        HadronioProvider slow = new HadronioProvider(HadronioConfig.from(p));
        try (ServerSocketChannel server = slow.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = slow.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                CompletableFuture<Long> echo = blockingEcho(server.accept(), 8);
                ByteBuffer out = ByteBuffer.allocate(8);
                ByteBuffer in = ByteBuffer.allocate(8);
                roundTrip(client, out, in, 0);
                roundTrip(client, out, in, 1);
                assertEquals("tcp", transport(client));
                Thread.sleep(1000);
                pingPongUntilUcx(client, Duration.ofSeconds(10));
                client.shutdownOutput();
                assertEquals(-1, client.read(in.clear()));
                echo.get(30, TimeUnit.SECONDS);
            }
        }
    }

    /** Moves a connection once it made {@code writes} writes (or carried 64 KiB), 1 us after its connect (0 would begin every move at the connect). */
    static HadronioProvider movingAfterWrites(int writes) {
        return upgradeProvider(1, writes);
    }

    /** A server that closes its listener right after accept: the connection still moves. */
    @Test
    void shouldUpgradeAConnectionWhoseListenerClosed() throws Exception {
        SocketChannel accepted;
        SocketChannel client = upgrading.openSocketChannel();
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            client.connect(server.getLocalAddress());
            accepted = server.accept();
        }
        try (client) {
            CompletableFuture<Long> echo = blockingEcho(accepted, 4096);
            // the move runs in the background: a 4 MiB stream may end (in some 30 ms) before it
            // has, so small round trips go on until it did (or the deadline says it never will)
            pingPongUntilUcx(client, Duration.ofSeconds(10));
            streamAndCheck(client, 4L << 20, 11);
            assertTrue(transport(client).startsWith("ucx:"), transport(client));
            echo.get(30, TimeUnit.SECONDS);
        }
    }

    /** 8-byte round trips through an echo until the connection reports a UCX transport; fails after {@code limit}. */
    static void pingPongUntilUcx(SocketChannel client, Duration limit) throws IOException {
        ByteBuffer out = ByteBuffer.allocate(8);
        ByteBuffer in = ByteBuffer.allocate(8);
        long deadline = System.nanoTime() + limit.toNanos();
        for (long i = 0; !transport(client).startsWith("ucx:"); i++) {
            assertTrue(System.nanoTime() - deadline < 0, "still on " + transport(client) + " after " + limit);
            roundTrip(client, out, in, i);
        }
    }

    /** Writes {@code i} as 8 bytes and reads the echo, which must be {@code i}. */
    static void roundTrip(SocketChannel client, ByteBuffer out, ByteBuffer in, long i) throws IOException {
        out.clear().putLong(0, i);
        while (out.hasRemaining()) {
            client.write(out);
        }
        in.clear();
        while (in.hasRemaining()) {
            assertTrue(client.read(in) >= 0);
        }
        assertEquals(i, in.getLong(0));
    }

    /** Closed before anything switched: the peer reads every byte, then end-of-stream, as with the JDK. */
    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldEndAConnectionClosedBeforeItsSwitchWithTheKernelsFin(boolean shutdownFirst) throws Exception {
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            for (int round = 0; round < 50; round++) {
                SocketChannel client = upgrading.openSocketChannel();
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    client.write(ByteBuffer.wrap(new byte[] {1, 2, 3, (byte) round}));
                    if (shutdownFirst) {
                        client.shutdownOutput();
                    }
                    client.close();
                    ByteBuffer b = ByteBuffer.allocate(16);
                    while (b.position() < 4) {
                        assertTrue(accepted.read(b) > 0, "bytes before end-of-stream");
                    }
                    assertArrayEquals(new byte[] {1, 2, 3, (byte) round}, java.util.Arrays.copyOf(b.array(), 4));
                    assertEquals(-1, accepted.read(b));
                }
            }
        }
    }

    /** Half-close after the switch: FIN after the last UCX message, and the other direction goes on. */
    @Test
    void shouldHalfCloseAfterTheSwitch() throws Exception {
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = upgrading.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                SocketChannel accepted = server.accept();
                // the server answers only after the client's end: it counts, then sends the count back
                CompletableFuture<Long> counted = CompletableFuture.supplyAsync(() -> {
                    try (accepted) {
                        ByteBuffer buf = ByteBuffer.allocate(10_000);
                        long total = 0;
                        long n;
                        while ((n = accepted.read(buf.clear())) >= 0) {
                            total += n;
                        }
                        ByteBuffer answer = ByteBuffer.allocate(8).putLong(0, total);
                        while (answer.hasRemaining()) {
                            accepted.write(answer);
                        }
                        return total;
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                ByteBuffer chunk = ByteBuffer.allocate(1000);
                long sent = 0;
                for (int i = 0; i < 3000; i++) {
                    chunk.clear();
                    while (chunk.hasRemaining()) {
                        sent += client.write(chunk);
                    }
                }
                client.shutdownOutput();
                ByteBuffer answer = ByteBuffer.allocate(8);
                while (answer.hasRemaining()) {
                    assertTrue(client.read(answer) >= 0);
                }
                assertEquals(sent, answer.getLong(0));
                assertEquals(sent, counted.get(30, TimeUnit.SECONDS));
                assertEquals(-1, client.read(ByteBuffer.allocate(1)));
            }
        }
    }

    /**
     * The server ends its output raw (shutdownOutput before it moved), the client's output moves
     * to UCX, and the server closes without reading on: the client's writes fail, as against a
     * closed TCP peer, and the server's raw bytes still read to their end. The upgrade session,
     * closed once both sides were done, was the only way to learn of that close (no record can
     * follow raw bytes without a switch): the client's writes were held back for ever. A server
     * that closes before its reader reached the client's switch point never took the switch:
     * the client's raw input must outlive that reset too (it was reset with the output).
     */
    @ParameterizedTest
    @CsvSource({"false, true", "true, true", "false, false", "true, false"})
    void shouldFailWritesOverUcxOnceAPeerWhoseOutputEndedRawCloses(boolean blockingWriter, boolean serverReadsOn)
            throws Exception {
        try (ServerSocketChannel server = upgrading.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = upgrading.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                SocketChannel accepted = server.accept();
                accepted.write(ByteBuffer.wrap(new byte[] {7, 8, 9}));
                accepted.shutdownOutput();
                java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
                CompletableFuture<Void> drain = CompletableFuture.runAsync(() -> {
                    try (accepted) {
                        ByteBuffer b = ByteBuffer.allocate(65536);
                        while (serverReadsOn && !stop.get() && accepted.read(b.clear()) >= 0) {
                            // take what the client writes until told to close
                        }
                        while (!serverReadsOn && !outputMoved(client)) {
                            Thread.onSpinWait(); // one that never reads closes the moment the client moved
                        }
                    } catch (ReflectiveOperationException | IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                ByteBuffer chunk = ByteBuffer.allocate(1000);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                // (non-blocking: a server that never reads lets the raw path fill up)
                client.configureBlocking(false);
                while (!outputMoved(client)) {
                    assertTrue(System.nanoTime() - deadline < 0, "the client's output never moved to UCX");
                    client.write(chunk.clear());
                    Thread.sleep(1);
                }
                stop.set(true);
                IOException failed = null;
                try {
                    // one more write wakes the server's reader, which then closes (one that never
                    // reads may have closed already: this write may be the first to fail)
                    client.write(chunk.clear());
                } catch (IOException e) {
                    failed = e;
                }
                drain.get(30, TimeUnit.SECONDS);
                client.configureBlocking(blockingWriter);
                long failBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (failed == null) {
                    // (a blocking writer held back for ever ends at the test's timeout)
                    assertTrue(System.nanoTime() - failBy < 0, "writes to the closed peer never failed: " + client);
                    try {
                        client.write(chunk.clear());
                        if (!blockingWriter) {
                            Thread.sleep(1);
                        }
                    } catch (IOException e) {
                        failed = e;
                    }
                }
                ByteBuffer rest = ByteBuffer.allocate(8);
                client.configureBlocking(true);
                while (rest.position() < 3) {
                    assertTrue(client.read(rest) > 0, "the server's raw bytes before its end-of-stream");
                }
                assertArrayEquals(new byte[] {7, 8, 9}, java.util.Arrays.copyOf(rest.array(), 3));
                assertEquals(-1, client.read(rest));
            }
        }
    }

    /**
     * The server's idle output moves to UCX after a few raw bytes, which the client never reads,
     * then the server ends its output and closes while the client writes over UCX: the client's
     * writes fail, and the server's raw bytes still read to their end. The server's FIN and CLOSE
     * records follow its raw bytes on the TCP connection, so they wait for a reader that never
     * comes; the upgrade session, closed once both directions had moved, was the only other way
     * to learn of the close: the client wrote into the closed peer for ever (found under load in
     * the test above, whose server's output moved between its write and its shutdownOutput).
     */
    @Test
    void shouldFailWritesOverUcxOnceAPeerWhoseOutputMovedAfterRawBytesCloses() throws Exception {
        // (with a delay, nothing moves before the client's second write: the server's bytes go raw)
        HadronioProvider delayed = upgradingAfter(1);
        try (ServerSocketChannel server = delayed.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            try (SocketChannel client = delayed.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                SocketChannel accepted = server.accept();
                accepted.write(ByteBuffer.wrap(new byte[] {7, 8, 9}));
                ByteBuffer chunk = ByteBuffer.allocate(1000);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                client.configureBlocking(false);
                while (!outputMoved(client) || !outputMoved(accepted)) {
                    assertTrue(System.nanoTime() - deadline < 0, "the outputs never moved: " + client);
                    client.write(chunk.clear());
                    Thread.sleep(1);
                }
                // the server's idle output moved with no writer inside: after its raw bytes
                assertEquals(3, ChannelInternals.switchPoint(accepted), "the server's switch point");
                accepted.shutdownOutput();
                accepted.close();
                IOException failed = null;
                long failBy = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (failed == null) {
                    assertTrue(System.nanoTime() - failBy < 0, "writes to the closed peer never failed: " + client);
                    try {
                        client.write(chunk.clear());
                        Thread.sleep(1);
                    } catch (IOException e) {
                        failed = e;
                    }
                }
                ByteBuffer rest = ByteBuffer.allocate(8);
                client.configureBlocking(true);
                while (rest.position() < 3) {
                    assertTrue(client.read(rest) > 0, "the server's raw bytes before its end-of-stream");
                }
                assertArrayEquals(new byte[] {7, 8, 9}, java.util.Arrays.copyOf(rest.array(), 3));
                assertEquals(-1, client.read(rest));
            }
        }
    }

    /** True once the channel's own output has moved to UCX (its transport option says so only for both directions). */
    static boolean outputMoved(SocketChannel c) throws ReflectiveOperationException {
        return !ChannelInternals.lifeOf(c).outputRaw();
    }

    /** A selector-driven echo server: readiness follows the raw fd, then UCX, with nothing lost. */
    @Test
    void shouldServeASelectorAcrossTheSwitch() throws Exception {
        try (ServerSocketChannel server = upgrading.openServerSocketChannel();
             Selector selector = upgrading.openSelector()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0));
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            CompletableFuture<Void> loop = CompletableFuture.runAsync(() -> {
                try {
                    int open = 0;
                    int served = 0;
                    while (served < 3 || open > 0) {
                        selector.select(100);
                        for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                            SelectionKey k = it.next();
                            it.remove();
                            if (k.isAcceptable()) {
                                SocketChannel c = server.accept();
                                if (c != null) {
                                    c.configureBlocking(false);
                                    c.register(selector, SelectionKey.OP_READ, ByteBuffer.allocate(20_000));
                                    open++;
                                }
                                continue;
                            }
                            SocketChannel c = (SocketChannel) k.channel();
                            ByteBuffer buf = (ByteBuffer) k.attachment();
                            if (k.isReadable()) {
                                int n = c.read(buf);
                                if (n < 0) {
                                    c.close();
                                    open--;
                                    served++;
                                    continue;
                                }
                            }
                            buf.flip();
                            c.write(buf);
                            buf.compact();
                            k.interestOps(buf.position() > 0 ? SelectionKey.OP_WRITE
                                    : SelectionKey.OP_READ);
                        }
                    }
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, THREADS);
            for (int i = 0; i < 3; i++) {
                try (SocketChannel client = upgrading.openSocketChannel()) {
                    client.connect(server.getLocalAddress());
                    streamAndCheck(client, 3L << 20, 100 + i);
                }
            }
            loop.get(60, TimeUnit.SECONDS);
        }
    }

    /** Peers without hadroNIO on either side: plain TCP, byte for byte, and nothing of ours is sent. */
    @Test
    void shouldStayPlainWithJdkPeers() throws Exception {
        for (SelectorProvider[] pair : new SelectorProvider[][] {{upgrading, jdk}, {jdk, upgrading}}) {
            try (ServerSocketChannel server = pair[0].openServerSocketChannel()) {
                server.bind(new InetSocketAddress(LOOPBACK, 0));
                try (SocketChannel client = pair[1].openSocketChannel()) {
                    client.connect(server.getLocalAddress());
                    CompletableFuture<Long> echo = blockingEcho(server.accept(), 8192);
                    streamAndCheck(client, 2L << 20, 5);
                    assertEquals(2L << 20, echo.get(30, TimeUnit.SECONDS));
                    if (pair[1] == upgrading) {
                        assertEquals("tcp", transport(client));
                    }
                }
            }
        }
    }

    /**
     * A server that echoes until end-of-stream and closes, against a client that writes
     * everything at once, shuts its output and waits for the server's end-of-stream: the
     * server's idle output moves to UCX (on the rendezvous thread, under the channel's write
     * lock) about when the application closes it. A close that found that lock taken left
     * its last step to the holder, which never took it: the server stayed CLOSING and the
     * client waited for end-of-stream for ever (once in 25–250 rounds here). 1,500 rounds
     * with the default upgrade delay, so that the upgrade starts mid-stream.
     */
    @Test
    @Timeout(120)
    void shouldEndTheStreamWhenTheServerClosesAsItsIdleOutputMoves() throws Exception {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        HadronioProvider provider = new HadronioProvider(HadronioConfig.from(p));
        byte[] data = new byte[300_000];
        for (int round = 0; round < 1_500; round++) {
            new Random(round).nextBytes(data);
            try (ServerSocketChannel server = provider.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
                 SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                CompletableFuture<Long> echo = blockingEcho(server.accept(), 8192);
                CompletableFuture<Void> writer = CompletableFuture.runAsync(() -> {
                    try {
                        ByteBuffer b = ByteBuffer.wrap(data);
                        while (b.hasRemaining()) {
                            client.write(b);
                        }
                        client.shutdownOutput();
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                ByteBuffer back = ByteBuffer.allocate(data.length);
                CompletableFuture<Integer> reader = CompletableFuture.supplyAsync(() -> {
                    try {
                        while (back.hasRemaining()) {
                            if (client.read(back) < 0) {
                                return back.position();
                            }
                        }
                        return client.read(ByteBuffer.allocate(1));
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                int end;
                try {
                    end = reader.get(20, TimeUnit.SECONDS);
                } catch (java.util.concurrent.TimeoutException e) {
                    throw new AssertionError("round " + round + ": no end-of-stream after " + back.position()
                            + " bytes; client " + client + ", server echo done: " + echo.isDone(), e);
                }
                assertEquals(-1, end, "round " + round + ": end-of-stream after the echo");
                assertArrayEquals(data, back.array(), "round " + round);
                writer.get(20, TimeUnit.SECONDS);
                assertEquals(data.length, echo.get(20, TimeUnit.SECONDS));
            }
        }
    }

    /**
     * A short local connection stays a plain one (its blocking reads sleep in the kernel, as
     * with the JDK); the socket turns non-blocking only when the upgrade goes on, and only
     * when no thread is inside the channel. Here the server has a reader asleep in the kernel
     * when the client's upgrade session comes (the client only read so far: a 64 KiB stream
     * from the server's second thread), so the server converts later, when that reader wakes.
     * Bytes keep flowing both ways meanwhile, nothing is lost, and the connection still moves.
     */
    @Test
    void shouldMoveOnceAReaderAsleepInTheKernelWakes() throws Exception {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        HadronioProvider provider = new HadronioProvider(HadronioConfig.from(p));
        try (ServerSocketChannel server = provider.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel client = provider.openSocketChannel()) {
            client.connect(server.getLocalAddress());
            SocketChannel accepted = server.accept();
            // the server: one thread only reads (asleep until the client writes), one only writes
            CompletableFuture<long[]> serverReader = CompletableFuture.supplyAsync(() -> drain(accepted), THREADS);
            java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
            CompletableFuture<long[]> serverWriter = CompletableFuture.supplyAsync(() -> {
                try {
                    long[] sent = pour(accepted, 21, stop);
                    accepted.shutdownOutput();
                    return sent;
                } catch (IOException e) {
                    throw new RuntimeException(e);
                }
            }, THREADS);
            java.util.concurrent.atomic.AtomicLong clientGot = new java.util.concurrent.atomic.AtomicLong();
            CompletableFuture<long[]> clientReader = CompletableFuture.supplyAsync(() -> drain(client, clientGot), THREADS);
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (clientGot.get() < (1 << 20) && System.nanoTime() < until) {
                Thread.sleep(1);
            }
            assertTrue(clientGot.get() >= 1 << 20, "the server's stream flows before the client writes");
            // now the client writes: the server's reader wakes, and the connection may convert
            long[] clientSent = pour(client, 22, null, () -> transport(client).startsWith("ucx:")
                    || System.nanoTime() > until);
            assertTrue(transport(client).startsWith("ucx:"), "moved to UCX: " + transport(client));
            client.shutdownOutput();
            stop.set(true);
            long[] serverSent = serverWriter.get(30, TimeUnit.SECONDS);
            assertArrayEquals(clientSent, serverReader.get(30, TimeUnit.SECONDS), "client to server: bytes, CRC");
            assertArrayEquals(serverSent, clientReader.get(30, TimeUnit.SECONDS), "server to client: bytes, CRC");
        }
    }

    /**
     * The CI hang (docs/RELIABILITY.md, "a blocking 64 KiB round trip that stopped"): one side's
     * output on UCX while its input is still raw, and a message above UCX's eager limit. Such a
     * message is a UCX rendezvous, which the receiver cannot complete until the sender's worker
     * progresses again; the sender's blocking reader waits on the kernel socket, where it
     * progresses nothing, and the peer's output moves only at its next write, which waits for
     * that message. Here the state is made on purpose, by cause and effect rather than timing:
     * the client's UCX half becomes ready while its writer is inside a long raw write, so its
     * output stays raw while the server's (idle) moves at once. Then the server writes 64 KiB
     * and waits for the answer on its raw input. Two providers, as two JVMs: with one, the
     * client's progress would be the server's too, and would send the message for it.
     */
    @Test
    void shouldAnswerALargeMessageSentFromUcxToARawInput() throws Exception {
        // the upgrade begins at the client's second write, however soon it comes
        HadronioProvider serverSide = upgradingAfter(1);
        HadronioProvider clientSide = upgradingAfter(1);
        try (ServerSocketChannel server = serverSide.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel client = clientSide.openSocketChannel()) {
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept()) {
                client.write(ByteBuffer.wrap(new byte[] {1}));
                ByteBuffer first = ByteBuffer.allocate(1);
                while (first.hasRemaining()) {
                    accepted.read(first);
                }
                // a server thread asleep in the kernel's read(2) holds the server's conversion, and so
                // both UCX halves, back until that read returns, which takes the client's raw bytes:
                // the client's writer is inside its raw write by then, past its own switch point check
                ByteBuffer second = ByteBuffer.allocate(1);
                AtomicReference<Thread> sleeper = new AtomicReference<>();
                CompletableFuture<Integer> asleep = CompletableFuture.supplyAsync(() -> {
                    sleeper.set(Thread.currentThread());
                    try {
                        return accepted.read(second);
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!inKernelRead(sleeper.get()) && System.nanoTime() < until) {
                    Thread.sleep(1);
                }
                assertTrue(inKernelRead(sleeper.get()), "a server read asleep in the kernel");
                // the second write starts the upgrade and stays inside until the server reads on
                byte[] bulk = new byte[64 << 20];
                new Random(31).nextBytes(bulk);
                CompletableFuture<Void> bulkWrite = writeAll(client, bulk, new AtomicReference<>());
                assertEquals(1, asleep.get(30, TimeUnit.SECONDS));
                io.hadronio.connection.ConnectionLifecycle clientLife = ChannelInternals.lifeOf(client);
                until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!(clientLife.connection() != null && !clientLife.inputRaw()) && System.nanoTime() < until) {
                    Thread.sleep(1);
                }
                assertTrue(clientLife.connection() != null && !clientLife.inputRaw(),
                        "the server's idle output moved to UCX: " + clientLife);
                assertTrue(clientLife.outputRaw(), "the client's busy output stays raw: " + clientLife);
                ByteBuffer in = ByteBuffer.allocate(bulk.length).put(second.flip());
                while (in.hasRemaining()) {
                    assertTrue(accepted.read(in) >= 0);
                }
                assertArrayEquals(bulk, in.array(), "the raw bytes before the switch");
                bulkWrite.get(30, TimeUnit.SECONDS);
                assertTrue(clientLife.outputRaw(), "the client's output moves only at its next write: " + clientLife);

                // the hang's round trip: the server (output on UCX, input raw) writes first
                CompletableFuture<Void> echo = CompletableFuture.runAsync(() -> {
                    try {
                        ByteBuffer b = ByteBuffer.allocateDirect(65536);
                        for (int i = 0; i < 20; i++) {
                            b.clear();
                            while (b.hasRemaining()) {
                                if (client.read(b) < 0) {
                                    throw new java.io.EOFException("round " + i);
                                }
                            }
                            b.flip();
                            while (b.hasRemaining()) {
                                client.write(b);
                            }
                        }
                    } catch (IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                ByteBuffer out = ByteBuffer.allocateDirect(65536);
                ByteBuffer back = ByteBuffer.allocateDirect(65536);
                for (int i = 0; i < 20; i++) {
                    out.clear();
                    while (out.hasRemaining()) {
                        out.put((byte) (i + out.position()));
                    }
                    out.flip();
                    while (out.hasRemaining()) {
                        accepted.write(out);
                    }
                    back.clear();
                    CompletableFuture<Integer> answer = CompletableFuture.supplyAsync(() -> {
                        try {
                            while (back.hasRemaining()) {
                                if (accepted.read(back) < 0) {
                                    return back.position();
                                }
                            }
                            return back.position();
                        } catch (IOException e) {
                            throw new RuntimeException(e);
                        }
                    }, THREADS);
                    try {
                        assertEquals(65536, answer.get(30, TimeUnit.SECONDS), "round " + i);
                    } catch (java.util.concurrent.TimeoutException e) {
                        throw new AssertionError("round " + i + ": no answer to a 64 KiB message; client "
                                + clientLife + ", server " + ChannelInternals.lifeOf(accepted), e);
                    }
                    assertEquals(out.flip(), back.flip(), "round " + i);
                }
                echo.get(30, TimeUnit.SECONDS);
                assertTrue(transport(client).startsWith("ucx:"), "both directions moved: " + transport(client));
                assertTrue(transport(accepted).startsWith("ucx:"), "both directions moved: " + transport(accepted));
            }
        }
    }

    /**
     * The accepted side converts for the upgrade only when no thread is inside the channel. Here
     * its session comes while a server thread sleeps in the kernel's write(2); the write then
     * returns and nothing reads or writes the accepted channel again. Its conversion must happen
     * as that thread leaves. Regression: it waited for the next read or write, so an accepted
     * side that went idle (or only shut its output down) never moved, and its client's output
     * stayed raw for good (AbruptCloseMemoryTest, in a clean-clone run).
     */
    @Test
    void shouldMoveOnceTheThreadInsideAtTheSessionLeavesAndTheChannelStaysIdle() throws Exception {
        // the upgrade begins at the client's second write, not at its connect
        HadronioProvider provider = upgradingAfter(1);
        try (ServerSocketChannel server = provider.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0));
             SocketChannel client = provider.openSocketChannel()) {
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept()) {
                byte[] bulk = new byte[32 << 20];
                new Random(41).nextBytes(bulk);
                AtomicReference<Thread> writer = new AtomicReference<>();
                CompletableFuture<Void> serverWrite = writeAll(accepted, bulk, writer);
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!inKernelWrite(writer.get()) && System.nanoTime() < until) {
                    Thread.sleep(1);
                }
                assertTrue(inKernelWrite(writer.get()), () -> "a server write asleep in the kernel: "
                        + java.util.Arrays.toString(writer.get().getStackTrace()));
                // the client's second write begins its upgrade; the session reaches the server,
                // whose conversion waits for the writer
                ByteBuffer one = ByteBuffer.allocate(1);
                client.write(one.clear());
                client.write(one.clear());
                while (!ChannelInternals.conversionPending(accepted) && System.nanoTime() < until) {
                    Thread.sleep(1);
                }
                assertTrue(ChannelInternals.conversionPending(accepted), "the server's conversion waits for its writer");
                ByteBuffer in = ByteBuffer.allocate(bulk.length);
                while (in.hasRemaining()) {
                    assertTrue(client.read(in) >= 0);
                }
                assertArrayEquals(bulk, in.array(), "the server's raw bytes");
                serverWrite.get(30, TimeUnit.SECONDS);
                // the accepted channel stays idle from here on; the client's output moves
                io.hadronio.connection.ConnectionLifecycle clientLife = ChannelInternals.lifeOf(client);
                while (clientLife.outputRaw() && System.nanoTime() < until) {
                    client.write(one.clear());
                    Thread.sleep(1);
                }
                assertTrue(!clientLife.outputRaw(), "the client's output moved to UCX: client " + clientLife
                        + ", accepted " + ChannelInternals.lifeOf(accepted));
            }
        }
    }

    /**
     * A client's new connection comes from the port of an earlier one that its client reset while
     * the server's application had not read from it (the server's lifecycle still says open), and
     * the new connection's upgrade session reaches the server before the application accepts it.
     * The session is the new connection's: attached to the reset one, the new connection's bytes
     * after its switch came out of the old channel.
     */
    @Test
    void shouldNotGiveANewConnectionsSessionToAResetOneFromTheSamePort() throws Exception {
        // a provider of its own: the parked sessions counted here are this test's
        HadronioProvider provider = io.hadronio.path.UpgradedPairs.upgradingAtOnce();
        try (ServerSocketChannel server = provider.openServerSocketChannel().bind(new InetSocketAddress(LOOPBACK, 0))) {
            // the earlier connection: a JDK client (it never upgrades), reset once accepted
            SocketChannel old = jdk.openSocketChannel();
            old.setOption(java.net.StandardSocketOptions.SO_REUSEADDR, true);
            old.bind(new InetSocketAddress(LOOPBACK, 0));
            int port = ((InetSocketAddress) old.getLocalAddress()).getPort();
            old.connect(server.getLocalAddress());
            try (SocketChannel oldAccepted = server.accept()) {
                old.setOption(java.net.StandardSocketOptions.SO_LINGER, 0);
                old.close();
                // the new connection from that port upgrades at once (no delay), unaccepted yet
                try (SocketChannel client = provider.openSocketChannel()) {
                    client.setOption(java.net.StandardSocketOptions.SO_REUSEADDR, true);
                    client.bind(new InetSocketAddress(LOOPBACK, port));
                    client.connect(server.getLocalAddress());
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (ChannelInternals.parkedUpgradeSessions(oldAccepted) == 0
                            && !ChannelInternals.lifeOf(oldAccepted).isUpgradable() && System.nanoTime() < until) {
                        Thread.sleep(1);
                    }
                    assertTrue(!ChannelInternals.lifeOf(oldAccepted).isUpgradable(),
                            "the reset connection took the new one's session: " + ChannelInternals.lifeOf(oldAccepted));
                    assertEquals(1, ChannelInternals.parkedUpgradeSessions(oldAccepted), "the session waits for its connection");
                    try (SocketChannel accepted = server.accept()) {
                        // the new connection moves to UCX, its bytes whole and in order
                        io.hadronio.path.UpgradedPairs.moveToUcx(client, accepted);
                    }
                }
            }
        }
    }

    /** A provider whose local connections open plain and may move to UCX {@code delayMillis} after their connect. */
    /** Moves a connection at its second write once {@code delayMicros} (hadronio.upgrade.delay) passed. */
    static HadronioProvider upgradingAfter(long delayMicros) {
        return upgradeProvider(delayMicros, 1);
    }

    /** Upgrade mode on kernel TCP, moving after {@code delayMicros} and {@code writes} writes. */
    static HadronioProvider upgradeProvider(long delayMicros, int writes) {
        return new HadronioProvider(HadronioConfig.from(upgradeProperties(delayMicros, writes)));
    }

    /** The properties of {@link #upgradeProvider}, for a test that sets more. */
    static Properties upgradeProperties(long delayMicros, int writes) {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        p.setProperty("hadronio.upgrade.delay", Long.toString(delayMicros));
        p.setProperty("hadronio.upgrade.writes", Integer.toString(writes));
        p.setProperty("hadronio.local.stream", "false");
        return p;
    }

    /** Writes all of {@code bytes} on a pool thread (blocking), which it names in {@code writer} first. */
    static CompletableFuture<Void> writeAll(SocketChannel c, byte[] bytes, AtomicReference<Thread> writer) {
        return CompletableFuture.runAsync(() -> {
            writer.set(Thread.currentThread());
            try {
                ByteBuffer b = ByteBuffer.wrap(bytes);
                while (b.hasRemaining()) {
                    c.write(b);
                }
            } catch (IOException e) {
                throw new RuntimeException(e);
            }
        }, THREADS);
    }

    /** The thread sleeps in the kernel socket's own blocking write. */
    static boolean inKernelWrite(Thread t) {
        return inKernel(t, "write");
    }

    /** The thread sleeps in the kernel socket's own blocking read, as a plain connection's reader does. */
    static boolean inKernelRead(Thread t) {
        return inKernel(t, "read");
    }

    /** The thread is inside the JDK's socket dispatcher's {@code read*} or {@code write*} (a blocking system call). */
    private static boolean inKernel(Thread t, String call) {
        if (t == null) {
            return false;
        }
        for (StackTraceElement e : t.getStackTrace()) {
            if (e.getClassName().equals("sun.nio.ch.SocketDispatcher") && e.getMethodName().startsWith(call)) {
                return true;
            }
        }
        return false;
    }

    /** Reads until end-of-stream: {bytes, CRC}. */
    static long[] drain(SocketChannel c) {
        return drain(c, new java.util.concurrent.atomic.AtomicLong());
    }

    static long[] drain(SocketChannel c, java.util.concurrent.atomic.AtomicLong got) {
        try {
            CRC32C crc = new CRC32C();
            ByteBuffer b = ByteBuffer.allocate(50_000);
            while (c.read(b.clear()) >= 0) {
                crc.update(b.flip());
                got.addAndGet(b.limit());
            }
            return new long[] {got.get(), crc.getValue()};
        } catch (IOException e) {
            throw new RuntimeException(e);
        }
    }

    /** Writes random chunks until {@code stop}: {bytes, CRC}. */
    static long[] pour(SocketChannel c, long seed, java.util.concurrent.atomic.AtomicBoolean stop) throws IOException {
        return pour(c, seed, null, stop::get);
    }

    interface Condition {
        boolean met() throws IOException;
    }

    static long[] pour(SocketChannel c, long seed, Void unused, Condition done) throws IOException {
        Random r = new Random(seed);
        CRC32C crc = new CRC32C();
        long total = 0;
        byte[] chunk = new byte[40_000];
        while (!done.met()) {
            r.nextBytes(chunk);
            ByteBuffer b = ByteBuffer.wrap(chunk, 0, 1 + r.nextInt(chunk.length));
            crc.update(b.duplicate());
            total += b.remaining();
            while (b.hasRemaining()) {
                c.write(b);
            }
        }
        return new long[] {total, crc.getValue()};
    }
}
