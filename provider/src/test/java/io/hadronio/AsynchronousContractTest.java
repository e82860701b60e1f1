package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AcceptPendingException;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.InterruptedByTimeoutException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.ReadPendingException;
import java.nio.channels.ShutdownChannelGroupException;
import java.nio.channels.WritePendingException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * NIO.2's contract, as {@code java.nio.channels} documents it, on the JDK's own
 * {@link AsynchronousChannelProvider} and on hadroNIO's: a test that passes on both tests
 * the contract, not our implementation. Connections are made in this JVM: between two
 * channels of the provider (hadroNIO to hadroNIO, the accelerated pairing), and with a
 * plain {@code java.net} peer on either side.
 */
@Timeout(60)
class AsynchronousContractTest extends ContractSupport {
    static final HadronioAsynchronousChannelProvider ASYNC = new HadronioAsynchronousChannelProvider(HADRONIO);

    static Stream<Named<AsynchronousChannelProvider>> asyncProviders() {
        assertTrue(HADRONIO.isAccelerated(), "UCX must be available");
        return Stream.of(Named.of("jdk", ASYNC.platform()), Named.of("hadronio", ASYNC));
    }

    /** Threads named {@code prefix-n}, so a test can tell the group's threads. */
    static ThreadFactory named(String prefix) {
        AtomicInteger n = new AtomicInteger();
        return r -> {
            Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
            t.setDaemon(true);
            return t;
        };
    }

    /** A group of two threads named {@code group-n}, shut down when the test ends. */
    record Group(AsynchronousChannelGroup group) implements AutoCloseable {
        static Group fixed(AsynchronousChannelProvider provider) throws IOException {
            return new Group(provider.openAsynchronousChannelGroup(2, named("group")));
        }

        @Override
        public void close() throws Exception {
            group.shutdownNow();
            assertTrue(group.awaitTermination(10, TimeUnit.SECONDS), "group did not terminate");
        }
    }

    /** Both ends of one connection, made with futures. */
    record Pair(AsynchronousSocketChannel client, AsynchronousSocketChannel server) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            try {
                client.close();
            } finally {
                server.close();
            }
        }
    }

    static Pair connect(AsynchronousChannelProvider provider, AsynchronousChannelGroup group) throws Exception {
        try (AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(group)) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0), 16);
            AsynchronousSocketChannel client = provider.openAsynchronousSocketChannel(group);
            Future<AsynchronousSocketChannel> accepted = listener.accept();
            assertNull(client.connect(listener.getLocalAddress()).get(10, TimeUnit.SECONDS));
            return new Pair(client, accepted.get(10, TimeUnit.SECONDS));
        }
    }

    static byte[] random(int size, long seed) {
        byte[] b = new byte[size];
        new SplittableRandom(seed).nextBytes(b);
        return b;
    }

    /** Writes all of {@code data} with handlers, each write started in the previous one's handler. */
    static CompletableFuture<Void> writeAll(AsynchronousSocketChannel ch, ByteBuffer data) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ch.write(data, 10, TimeUnit.SECONDS, null, new CompletionHandler<Integer, Void>() {
            @Override
            public void completed(Integer n, Void a) {
                if (data.hasRemaining()) {
                    ch.write(data, 10, TimeUnit.SECONDS, null, this);
                } else {
                    done.complete(null);
                }
            }

            @Override
            public void failed(Throwable e, Void a) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    /** Reads until {@code into} is full, with handlers; fails at an early end of stream. */
    static CompletableFuture<Void> readFully(AsynchronousSocketChannel ch, ByteBuffer into) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ch.read(into, 10, TimeUnit.SECONDS, null, new CompletionHandler<Integer, Void>() {
            @Override
            public void completed(Integer n, Void a) {
                if (n < 0) {
                    done.completeExceptionally(new IOException("end of stream at " + into.position()));
                } else if (into.hasRemaining()) {
                    ch.read(into, 10, TimeUnit.SECONDS, null, this);
                } else {
                    done.complete(null);
                }
            }

            @Override
            public void failed(Throwable e, Void a) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldCarryDataBothWaysByteForByte(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            for (int size : new int[] {1, 65536, 4 << 20}) {
                byte[] data = random(size, size);
                ByteBuffer got = ByteBuffer.allocate(size);
                CompletableFuture<Void> read = readFully(p.server(), got);
                writeAll(p.client(), ByteBuffer.wrap(data)).get(30, TimeUnit.SECONDS);
                read.get(30, TimeUnit.SECONDS);
                assertArrayEquals(data, got.array());
                // and back with futures
                ByteBuffer back = ByteBuffer.wrap(data);
                ByteBuffer got2 = ByteBuffer.allocateDirect(size);
                while (back.hasRemaining() || got2.hasRemaining()) {
                    Future<Integer> w = back.hasRemaining() ? p.server().write(back) : null;
                    if (got2.hasRemaining()) {
                        assertTrue(p.client().read(got2).get(30, TimeUnit.SECONDS) > 0);
                    }
                    if (w != null) {
                        assertTrue(w.get(30, TimeUnit.SECONDS) > 0);
                    }
                }
                byte[] copy = new byte[size];
                got2.flip().get(copy);
                assertArrayEquals(data, copy);
            }
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldReadZeroWithoutRoomAndMinusOneAtEndOfStream(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            assertEquals(0, p.server().read(ByteBuffer.allocate(0)).get(5, TimeUnit.SECONDS));
            p.client().write(ByteBuffer.wrap(new byte[] {7})).get(5, TimeUnit.SECONDS);
            p.client().shutdownOutput();
            ByteBuffer b = ByteBuffer.allocate(8);
            assertEquals(1, p.server().read(b).get(5, TimeUnit.SECONDS));
            assertEquals(-1, p.server().read(b).get(5, TimeUnit.SECONDS));
            // and again: end of stream stays
            assertEquals(-1, p.server().read(b).get(5, TimeUnit.SECONDS));
            // a scattering read says it in a long
            CompletableFuture<Long> scattered = new CompletableFuture<>();
            p.server().read(new ByteBuffer[] {ByteBuffer.allocate(4)}, 0, 1, 5, TimeUnit.SECONDS, null,
                    handler(scattered));
            assertEquals(-1L, scattered.get(5, TimeUnit.SECONDS));
            // the output shut down: a write fails with ClosedChannelException
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> p.client().write(ByteBuffer.wrap(new byte[1])).get(5, TimeUnit.SECONDS));
            assertInstanceOf(ClosedChannelException.class, e.getCause());
        }
    }

    static <V> CompletionHandler<V, Object> handler(CompletableFuture<V> f) {
        return new CompletionHandler<>() {
            @Override
            public void completed(V v, Object a) {
                f.complete(v);
            }

            @Override
            public void failed(Throwable e, Object a) {
                f.completeExceptionally(e);
            }
        };
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldTimeOutAReadAndRefuseReadingAfterwards(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            CompletableFuture<Integer> read = new CompletableFuture<>();
            p.server().read(ByteBuffer.allocate(8), 100, TimeUnit.MILLISECONDS, null, handler(read));
            ExecutionException e = assertThrows(ExecutionException.class, () -> read.get(10, TimeUnit.SECONDS));
            assertInstanceOf(InterruptedByTimeoutException.class, e.getCause());
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> p.server().read(ByteBuffer.allocate(8)));
            assertEquals("Reading not allowed due to timeout or cancellation", refused.getMessage());
            // writing is still allowed, and so is the peer's reading
            p.server().write(ByteBuffer.wrap(new byte[] {1, 2})).get(5, TimeUnit.SECONDS);
            assertEquals(2, p.client().read(ByteBuffer.allocate(8)).get(5, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldTimeOutAScatteringReadAndCompleteATimedGatheringWrite(AsynchronousChannelProvider provider)
            throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            CompletableFuture<Long> written = new CompletableFuture<>();
            ByteBuffer[] srcs = {ByteBuffer.wrap(new byte[] {1, 2, 3}), ByteBuffer.wrap(new byte[] {4, 5})};
            p.client().write(srcs, 0, 2, 5, TimeUnit.SECONDS, null, handler(written));
            assertEquals(5L, written.get(5, TimeUnit.SECONDS));
            ByteBuffer[] dsts = {ByteBuffer.allocate(2), ByteBuffer.allocate(2), ByteBuffer.allocate(8)};
            long total = 0;
            while (total < 5) {
                CompletableFuture<Long> read = new CompletableFuture<>();
                p.server().read(dsts, 0, 3, 5, TimeUnit.SECONDS, null, handler(read));
                total += read.get(5, TimeUnit.SECONDS);
            }
            assertArrayEquals(new byte[] {1, 2}, dsts[0].array());
            assertArrayEquals(new byte[] {3, 4}, dsts[1].array());
            assertEquals(5, dsts[2].get(0));
            CompletableFuture<Long> late = new CompletableFuture<>();
            p.server().read(dsts, 2, 1, 50, TimeUnit.MILLISECONDS, null, handler(late));
            ExecutionException e = assertThrows(ExecutionException.class, () -> late.get(10, TimeUnit.SECONDS));
            assertInstanceOf(InterruptedByTimeoutException.class, e.getCause());
            assertThrows(IllegalStateException.class,
                    () -> p.server().read(dsts, 2, 1, 1, TimeUnit.SECONDS, null, handler(new CompletableFuture<>())));
            assertThrows(IndexOutOfBoundsException.class,
                    () -> p.client().write(srcs, 1, 2, 1, TimeUnit.SECONDS, null, handler(new CompletableFuture<>())));
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldTimeOutAWriteAndRefuseWritingAfterwards(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            // the peer reads nothing: writes complete until the socket buffers are full, then one times out
            ByteBuffer big = ByteBuffer.allocate(64 << 20);
            Throwable failure = null;
            while (failure == null) {
                assertTrue(big.hasRemaining(), "64 MiB written that no one reads");
                CompletableFuture<Integer> written = new CompletableFuture<>();
                p.client().write(big, 200, TimeUnit.MILLISECONDS, null, handler(written));
                try {
                    written.get(10, TimeUnit.SECONDS);
                } catch (ExecutionException e) {
                    failure = e.getCause();
                }
            }
            assertInstanceOf(InterruptedByTimeoutException.class, failure);
            IllegalStateException refused = assertThrows(IllegalStateException.class,
                    () -> p.client().write(ByteBuffer.allocate(1)));
            assertEquals("Writing not allowed due to timeout or cancellation", refused.getMessage());
            // reading is still allowed
            p.server().write(ByteBuffer.wrap(new byte[] {3})).get(5, TimeUnit.SECONDS);
            assertEquals(1, p.client().read(ByteBuffer.allocate(4)).get(5, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldRefuseASecondPendingReadOrWrite(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            Future<Integer> pending = p.server().read(ByteBuffer.allocate(8));
            assertThrows(ReadPendingException.class, () -> p.server().read(ByteBuffer.allocate(8)));
            pending.cancel(false);
        }
        try (Group g = Group.fixed(provider); Stalled stalled = Stalled.open(provider, g.group())) {
            Future<Integer> w = stalled.pendingWrite();
            assertThrows(WritePendingException.class, () -> stalled.channel().write(ByteBuffer.allocate(1)));
            assertFalse(w.isDone());
        }
    }

    /**
     * A channel of the provider connected to a {@code java.net} peer that reads nothing, over
     * kernel TCP whatever the provider: once a write of it is pending, it stays pending.
     */
    record Stalled(AsynchronousSocketChannel channel, ServerSocket listener, Socket peer) implements AutoCloseable {
        static Stalled open(AsynchronousChannelProvider provider, AsynchronousChannelGroup group) throws Exception {
            ServerSocket listener = new ServerSocket();
            listener.setReceiveBufferSize(4096);
            listener.bind(new InetSocketAddress(LOOPBACK, 0), 1);
            AsynchronousSocketChannel channel = provider.openAsynchronousSocketChannel(group);
            channel.connect(listener.getLocalSocketAddress()).get(10, TimeUnit.SECONDS);
            return new Stalled(channel, listener, listener.accept());
        }

        /** Writes until a write stays pending (the socket buffers are full); returns it. */
        Future<Integer> pendingWrite() throws Exception {
            ByteBuffer big = ByteBuffer.allocate(64 << 20);
            while (true) {
                assertTrue(big.hasRemaining(), "64 MiB written that no one reads");
                Future<Integer> w = channel.write(big);
                Thread.sleep(1);
                if (!w.isDone()) {
                    return w;
                }
                w.get();
            }
        }

        @Override
        public void close() throws IOException {
            try {
                channel.close();
            } finally {
                peer.close();
                listener.close();
            }
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldFailEveryPendingOperationOnClose(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider)) {
            Pair p = connect(provider, g.group());
            CompletableFuture<Integer> read = new CompletableFuture<>();
            p.server().read(ByteBuffer.allocate(8), null, handler(read));
            // a pending read with a future, on a second connection
            Pair p2 = connect(provider, g.group());
            Future<Integer> clientRead = p2.client().read(ByteBuffer.allocate(8));
            Stalled stalled = Stalled.open(provider, g.group());
            Future<Integer> w = stalled.pendingWrite();
            AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(g.group())
                    .bind(new InetSocketAddress(LOOPBACK, 0));
            Future<AsynchronousSocketChannel> accept = listener.accept();
            assertThrows(AcceptPendingException.class, listener::accept);
            p.server().close();
            p.client().close();
            p2.close();
            stalled.close();
            listener.close();
            assertInstanceOf(AsynchronousCloseException.class,
                    assertThrows(ExecutionException.class, () -> read.get(5, TimeUnit.SECONDS)).getCause());
            assertInstanceOf(AsynchronousCloseException.class,
                    assertThrows(ExecutionException.class, () -> clientRead.get(5, TimeUnit.SECONDS)).getCause());
            Future<Integer> write = w;
            assertInstanceOf(AsynchronousCloseException.class,
                    assertThrows(ExecutionException.class, () -> write.get(5, TimeUnit.SECONDS)).getCause());
            assertInstanceOf(AsynchronousCloseException.class,
                    assertThrows(ExecutionException.class, () -> accept.get(5, TimeUnit.SECONDS)).getCause());
            // closed: operations fail with ClosedChannelException, through the handler or the future
            assertInstanceOf(ClosedChannelException.class, assertThrows(ExecutionException.class,
                    () -> p.server().read(ByteBuffer.allocate(1)).get(5, TimeUnit.SECONDS)).getCause());
            CompletableFuture<Integer> afterClose = new CompletableFuture<>();
            p.server().write(ByteBuffer.allocate(1), null, handler(afterClose));
            assertInstanceOf(ClosedChannelException.class,
                    assertThrows(ExecutionException.class, () -> afterClose.get(5, TimeUnit.SECONDS)).getCause());
            assertThrows(ClosedChannelException.class, () -> p.server().getLocalAddress());
            assertFalse(p.server().isOpen());
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldCancelAPendingReadAndRefuseReadingAfterwards(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            Future<Integer> read = p.server().read(ByteBuffer.allocate(8));
            assertTrue(read.cancel(false));
            assertTrue(read.isCancelled());
            assertThrows(java.util.concurrent.CancellationException.class, read::get);
            assertThrows(IllegalStateException.class, () -> p.server().read(ByteBuffer.allocate(8)));
            assertTrue(p.server().isOpen());
            // cancel(true) closes the channel
            Future<Integer> other = p.client().read(ByteBuffer.allocate(8));
            assertTrue(other.cancel(true));
            assertFalse(p.client().isOpen());
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldFailOperationsBeforeConnect(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider);
             AsynchronousSocketChannel ch = provider.openAsynchronousSocketChannel(g.group())) {
            assertThrows(NotYetConnectedException.class, () -> ch.read(ByteBuffer.allocate(1)));
            assertThrows(NotYetConnectedException.class, () -> ch.write(ByteBuffer.allocate(1)));
            assertThrows(NotYetConnectedException.class, ch::shutdownInput);
            assertNull(ch.getRemoteAddress());
            assertThrows(IllegalArgumentException.class, () -> ch.read(ByteBuffer.allocate(1).asReadOnlyBuffer()));
            assertThrows(NullPointerException.class,
                    () -> ch.read(ByteBuffer.allocate(1), null, (CompletionHandler<Integer, Object>) null));
            // a refused connect fails and closes the channel
            int port;
            try (ServerSocket gone = new ServerSocket(0, 1, LOOPBACK)) {
                port = gone.getLocalPort();
            }
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> ch.connect(new InetSocketAddress(LOOPBACK, port)).get(10, TimeUnit.SECONDS));
            assertInstanceOf(IOException.class, e.getCause());
            assertFalse(ch.isOpen());
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldAcceptWithHandlersAndFuturesAndKeepOptions(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider);
             AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(g.group())) {
            assertThrows(java.nio.channels.NotYetBoundException.class, listener::accept);
            listener.setOption(StandardSocketOptions.SO_REUSEADDR, true);
            listener.bind(new InetSocketAddress(LOOPBACK, 0), 1);
            assertTrue(listener.getOption(StandardSocketOptions.SO_REUSEADDR));
            List<AsynchronousSocketChannel> open = new ArrayList<>();
            try {
                for (int i = 0; i < 4; i++) {
                    AsynchronousSocketChannel client = provider.openAsynchronousSocketChannel(g.group());
                    open.add(client);
                    client.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    assertTrue(client.getOption(StandardSocketOptions.TCP_NODELAY));
                    assertThrows(UnsupportedOperationException.class,
                            () -> client.setOption(StandardSocketOptions.SO_LINGER, 0));
                    CompletableFuture<Void> connected = new CompletableFuture<>();
                    client.connect(listener.getLocalAddress(), null, handler(connected));
                    AsynchronousSocketChannel server;
                    if (i % 2 == 0) {
                        server = listener.accept().get(10, TimeUnit.SECONDS);
                    } else {
                        CompletableFuture<AsynchronousSocketChannel> accepted = new CompletableFuture<>();
                        listener.accept(null, handler(accepted));
                        server = accepted.get(10, TimeUnit.SECONDS);
                    }
                    open.add(server);
                    connected.get(10, TimeUnit.SECONDS);
                    assertEquals(client.getLocalAddress(), server.getRemoteAddress());
                    assertEquals(server.getLocalAddress(), client.getRemoteAddress());
                    assertThrows(java.nio.channels.AlreadyConnectedException.class,
                            () -> client.connect(listener.getLocalAddress()));
                    assertTrue(server.supportedOptions().contains(StandardSocketOptions.SO_RCVBUF));
                    assertFalse(server.supportedOptions().contains(StandardSocketOptions.SO_LINGER));
                }
            } finally {
                for (AsynchronousSocketChannel c : open) {
                    c.close();
                }
            }
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldWorkThroughStreams(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            byte[] data = random(300_000, 3);
            OutputStream out = Channels.newOutputStream(p.client());
            InputStream in = Channels.newInputStream(p.server());
            Task<Void> writer = start("writer", () -> {
                out.write(data);
                out.close();
                return null;
            });
            assertArrayEquals(data, in.readAllBytes());
            writer.result().get(10, TimeUnit.SECONDS);
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldShutDownInput(AsynchronousChannelProvider provider) throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            p.server().shutdownInput();
            assertEquals(-1, p.server().read(ByteBuffer.allocate(4)).get(5, TimeUnit.SECONDS));
            // the other direction is unaffected
            p.server().write(ByteBuffer.wrap(new byte[] {9})).get(5, TimeUnit.SECONDS);
            assertEquals(1, p.client().read(ByteBuffer.allocate(4)).get(5, TimeUnit.SECONDS));
        }
    }

    /**
     * Handlers run on the group's threads, never on the thread that started the operation
     * (unless it is one of them), and the depth of handlers invoked directly on one stack is
     * bounded (the JDK: 16) however many operations complete at once.
     */
    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldRunHandlersOnTheGroupsThreadsWithBoundedRecursion(AsynchronousChannelProvider provider)
            throws Exception {
        try (Group g = Group.fixed(provider); Pair p = connect(provider, g.group())) {
            int n = 2000;
            p.client().write(ByteBuffer.wrap(random(n, 5))).get(5, TimeUnit.SECONDS);
            // let it all arrive, so that every read but the first completes at once
            Thread.sleep(200);
            ThreadLocal<int[]> depth = ThreadLocal.withInitial(() -> new int[1]);
            AtomicInteger maxDepth = new AtomicInteger();
            List<String> threads = java.util.Collections.synchronizedList(new ArrayList<>());
            CountDownLatch done = new CountDownLatch(1);
            ByteBuffer one = ByteBuffer.allocate(1);
            AtomicInteger got = new AtomicInteger();
            p.server().read(one, null, new CompletionHandler<Integer, Void>() {
                @Override
                public void completed(Integer r, Void a) {
                    maxDepth.accumulateAndGet(++depth.get()[0], Math::max);
                    try {
                        threads.add(Thread.currentThread().getName());
                        if (got.addAndGet(r) < n) {
                            one.clear();
                            p.server().read(one, null, this);
                        } else {
                            done.countDown();
                        }
                    } finally {
                        depth.get()[0]--;
                    }
                }

                @Override
                public void failed(Throwable e, Void a) {
                    done.countDown();
                }
            });
            assertTrue(done.await(20, TimeUnit.SECONDS));
            assertEquals(n, got.get());
            assertTrue(threads.stream().allMatch(t -> t.startsWith("group-")), () -> "handler threads: "
                    + threads.stream().distinct().toList());
            // the JDK: the handler of the event, and up to 16 more invoked directly on its stack
            assertTrue(maxDepth.get() <= 17, "handlers nested " + maxDepth.get() + " deep on one thread");
        }
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldRunGroupsOfEveryKindAndShutThemDown(AsynchronousChannelProvider provider) throws Exception {
        ExecutorService cached = Executors.newCachedThreadPool(named("cached"));
        ExecutorService pool = Executors.newCachedThreadPool(named("pool"));
        List<AsynchronousChannelGroup> groups = List.of(provider.openAsynchronousChannelGroup(3, named("fixed")),
                provider.openAsynchronousChannelGroup(cached, 1), provider.openAsynchronousChannelGroup(pool, 0));
        List<String> prefixes = List.of("fixed-", "cached-", "pool-");
        for (int i = 0; i < groups.size(); i++) {
            AsynchronousChannelGroup group = groups.get(i);
            Pair p = connect(provider, group);
            CompletableFuture<String> thread = new CompletableFuture<>();
            p.server().read(ByteBuffer.allocate(4), null, new CompletionHandler<Integer, Void>() {
                @Override
                public void completed(Integer r, Void a) {
                    thread.complete(Thread.currentThread().getName());
                }

                @Override
                public void failed(Throwable e, Void a) {
                    thread.completeExceptionally(e);
                }
            });
            p.client().write(ByteBuffer.wrap(new byte[] {1})).get(5, TimeUnit.SECONDS);
            String name = thread.get(5, TimeUnit.SECONDS);
            assertTrue(name.startsWith(prefixes.get(i)), name);
            // a connection to a peer outside the group, which stays open while the group shuts down
            ServerSocket plain = new ServerSocket(0, 1, LOOPBACK);
            AsynchronousSocketChannel toPlain = provider.openAsynchronousSocketChannel(group);
            toPlain.connect(plain.getLocalSocketAddress()).get(10, TimeUnit.SECONDS);
            Socket plainPeer = plain.accept();
            // shutdown: no new channels; the group ends with its last channel
            group.shutdown();
            assertTrue(group.isShutdown());
            assertThrows(ShutdownChannelGroupException.class, () -> provider.openAsynchronousSocketChannel(group));
            assertFalse(group.awaitTermination(50, TimeUnit.MILLISECONDS));
            assertFalse(group.isTerminated());
            if (i == 0) {
                p.close();
                toPlain.close();
            } else {
                // shutdownNow closes them, failing what is pending
                CompletableFuture<Integer> pending = new CompletableFuture<>();
                toPlain.read(ByteBuffer.allocate(4), null, handler(pending));
                group.shutdownNow();
                assertFalse(toPlain.isOpen());
                assertFalse(p.client().isOpen());
                assertFalse(p.server().isOpen());
                assertInstanceOf(AsynchronousCloseException.class,
                        assertThrows(ExecutionException.class, () -> pending.get(5, TimeUnit.SECONDS)).getCause());
            }
            assertTrue(group.awaitTermination(10, TimeUnit.SECONDS));
            assertTrue(group.isTerminated());
            // a handler that must run on the terminated group's threads cannot
            assertThrows(ShutdownChannelGroupException.class,
                    () -> p.client().read(ByteBuffer.allocate(1), null, handler(new CompletableFuture<>())));
            plainPeer.close();
            plain.close();
        }
        assertTrue(cached.isShutdown());
        assertTrue(pool.isShutdown());
    }

    /** The three pairings with a plain peer: both ends the provider's, a plain server, a plain client. */
    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldEchoWithPlainPeersOnEitherSide(AsynchronousChannelProvider provider) throws Exception {
        byte[] data = random(1 << 20, 11);
        try (Group g = Group.fixed(provider)) {
            // an asynchronous client, a java.net server that echoes
            try (ServerSocket plain = new ServerSocket(0, 1, LOOPBACK);
                 AsynchronousSocketChannel client = provider.openAsynchronousSocketChannel(g.group())) {
                Task<Void> echo = start("plain-server", () -> {
                    try (Socket s = plain.accept()) {
                        s.getInputStream().transferTo(s.getOutputStream());
                    }
                    return null;
                });
                client.connect(plain.getLocalSocketAddress()).get(10, TimeUnit.SECONDS);
                echoThrough(client, data);
                echo.result().get(10, TimeUnit.SECONDS);
            }
            // a java.net client, an asynchronous server
            try (AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(g.group())
                    .bind(new InetSocketAddress(LOOPBACK, 0))) {
                InetSocketAddress at = (InetSocketAddress) listener.getLocalAddress();
                Future<AsynchronousSocketChannel> accepted = listener.accept();
                try (Socket s = new Socket(at.getAddress(), at.getPort());
                     AsynchronousSocketChannel server = accepted.get(10, TimeUnit.SECONDS)) {
                    Task<byte[]> reader = start("plain-client", () -> {
                        byte[] back = s.getInputStream().readNBytes(data.length);
                        return back;
                    });
                    s.getOutputStream().write(data);
                    ByteBuffer got = ByteBuffer.allocate(data.length);
                    readFully(server, got).get(30, TimeUnit.SECONDS);
                    writeAll(server, got.flip()).get(30, TimeUnit.SECONDS);
                    assertArrayEquals(data, reader.result().get(30, TimeUnit.SECONDS));
                    server.shutdownOutput();
                    assertEquals(-1, s.getInputStream().read());
                }
            }
            // both ends the provider's
            try (Pair p = connect(provider, g.group())) {
                ByteBuffer got = ByteBuffer.allocate(data.length);
                CompletableFuture<Void> read = readFully(p.server(), got);
                writeAll(p.client(), ByteBuffer.wrap(data)).get(30, TimeUnit.SECONDS);
                read.get(30, TimeUnit.SECONDS);
                assertArrayEquals(data, got.array());
            }
        }
    }

    /** Sends {@code data} through an echoing peer and checks what comes back; then half-closes. */
    private static void echoThrough(AsynchronousSocketChannel ch, byte[] data) throws Exception {
        ByteBuffer got = ByteBuffer.allocate(data.length);
        CompletableFuture<Void> read = readFully(ch, got);
        writeAll(ch, ByteBuffer.wrap(data)).get(30, TimeUnit.SECONDS);
        read.get(30, TimeUnit.SECONDS);
        assertArrayEquals(data, got.array());
        ch.shutdownOutput();
        assertEquals(-1, ch.read(ByteBuffer.allocate(1)).get(10, TimeUnit.SECONDS));
    }

    @ParameterizedTest
    @MethodSource("asyncProviders")
    void shouldServeChannelsOfTheDefaultGroup(AsynchronousChannelProvider provider) throws Exception {
        try (Pair p = connect(provider, null)) {
            CompletableFuture<Boolean> daemon = new CompletableFuture<>();
            p.server().read(ByteBuffer.allocate(1), null, new CompletionHandler<Integer, Void>() {
                @Override
                public void completed(Integer r, Void a) {
                    daemon.complete(Thread.currentThread().isDaemon());
                }

                @Override
                public void failed(Throwable e, Void a) {
                    daemon.completeExceptionally(e);
                }
            });
            p.client().write(ByteBuffer.wrap(new byte[] {1})).get(5, TimeUnit.SECONDS);
            // the default group's threads must not keep the JVM alive
            assertTrue(daemon.get(5, TimeUnit.SECONDS));
        }
    }
}
