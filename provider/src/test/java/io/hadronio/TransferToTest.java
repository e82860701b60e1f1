package io.hadronio;

import static java.nio.channels.SelectionKey.OP_WRITE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.nio.SocketChannelFactory;
import io.hadronio.path.UpgradedPairs;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.FileChannel;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code FileChannel.transferTo} into a socket channel and {@code transferFrom} out of one, on
 * every path a hadroNIO channel's bytes take (UCX between two hadroNIO channels; the kernel
 * socket with a JDK peer, as server and as client) and on the JDK's own pair, the reference:
 * every byte arrives, in order with the writes around the transfer, and a channel shut or
 * closed fails the transfer as the JDK's does. The sizes straddle the JDK's ways: below 16 KiB
 * it copies through a heap buffer; from there on it maps the file 8 MiB at a time for a
 * channel it trusts (ours, see SocketChannelFactory).
 */
@Timeout(120)
class TransferToTest extends ContractSupport {
    private static final SelectorProvider JDK = HADRONIO.platform();
    private static final byte[] HEAD = {'h', 'e', 'a', 'd', 0, 1, 2, 3};
    private static final byte[] TAIL = {'t', 'a', 'i', 'l', 4, 5, 6, 7};
    private static final long[] SIZES = {0, 1, (16 << 10) - 1, 16 << 10, (8 << 20) + 1, 64L << 20};

    @TempDir
    static Path dir;
    private static final ConcurrentHashMap<Long, Path> FILES = new ConcurrentHashMap<>();

    /** Where the sending channel's bytes go: which providers the two ends are from. */
    enum Route {
        // both ends the JDK's: what the others must match
        JDK_PAIR,
        // both ends hadroNIO, moved to UCX; the accepted channel sends (a broker serving a fetch)
        UCX,
        // a hadroNIO server's accepted channel on kernel TCP, a JDK client reads
        KERNEL_ACCEPTED,
        // a hadroNIO client on kernel TCP, a JDK server's accepted channel reads
        KERNEL_CONNECTED
    }

    /** The two ends; {@code sender} is the hadroNIO channel on every route but JDK_PAIR. */
    record Link(SocketChannel sender, SocketChannel receiver) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            try {
                sender.close();
            } finally {
                receiver.close();
            }
        }
    }

    static Stream<Route> routes() {
        assertTrue(HADRONIO.isAccelerated(), "UCX must be available");
        return Stream.of(Route.values());
    }

    static Stream<Arguments> routesSizesModes() {
        List<Arguments> all = new ArrayList<>();
        routes().forEach(r -> {
            for (long size : SIZES) {
                all.add(Arguments.of(r, size, true));
                all.add(Arguments.of(r, size, false));
            }
        });
        return all.stream();
    }

    static Link open(Route route) throws Exception {
        return switch (route) {
            case JDK_PAIR -> link(JDK, JDK, false);
            case UCX -> {
                Link l = link(HADRONIO, HADRONIO, true);
                UpgradedPairs.moveToUcx(l.receiver(), l.sender());
                yield l;
            }
            case KERNEL_ACCEPTED -> link(HADRONIO, JDK, true);
            case KERNEL_CONNECTED -> link(JDK, HADRONIO, false);
        };
    }

    /** A connection from a {@code client} channel to a {@code server} listener; {@code acceptedSends}: which end sends. */
    private static Link link(SelectorProvider server, SelectorProvider client, boolean acceptedSends) throws IOException {
        try (ServerSocketChannel listener = server.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            SocketChannel connected = client.openSocketChannel();
            try {
                connected.connect(listener.getLocalAddress());
                SocketChannel accepted = listener.accept();
                return acceptedSends ? new Link(accepted, connected) : new Link(connected, accepted);
            } catch (IOException | RuntimeException e) {
                connected.close();
                throw e;
            }
        }
    }

    private static void expectRoute(Route route, SocketChannel sender) throws IOException {
        String transport = sender.provider() == HADRONIO ? sender.getOption(HadronioSocketOptions.TRANSPORT) : "jdk";
        switch (route) {
            case JDK_PAIR -> assertEquals("jdk", transport);
            case UCX -> assertTrue(transport.startsWith("ucx:"), transport);
            case KERNEL_ACCEPTED, KERNEL_CONNECTED -> assertEquals("tcp", transport);
        }
    }

    /** The file's byte at {@code i}: a mix of every bit of the position, so that a chunk sent out of order shows. */
    static byte fileByte(long i) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L;
        return (byte) (h ^ (h >>> 29) ^ (h >>> 47));
    }

    static Path file(long size) {
        return FILES.computeIfAbsent(size, s -> {
            Path p = dir.resolve("file-" + s);
            ByteBuffer chunk = ByteBuffer.allocateDirect(1 << 20);
            try (FileChannel f = FileChannel.open(p, StandardOpenOption.CREATE_NEW, StandardOpenOption.WRITE)) {
                for (long off = 0; off < s; ) {
                    chunk.clear();
                    int n = (int) Math.min(chunk.capacity(), s - off);
                    for (int i = 0; i < n; i++) {
                        chunk.put(i, fileByte(off + i));
                    }
                    chunk.limit(n);
                    while (chunk.hasRemaining()) {
                        off += f.write(chunk, off);
                    }
                }
            } catch (IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
            return p;
        });
    }

    @ParameterizedTest(name = "{0}, {1} bytes, blocking {2}")
    @MethodSource("routesSizesModes")
    void shouldSendTheWholeFileInOrderWithTheWritesAroundIt(Route route, long size, boolean blocking) throws Exception {
        Path path = file(size);
        try (Link l = open(route); FileChannel f = FileChannel.open(path, StandardOpenOption.READ)) {
            expectRoute(route, l.sender());
            Task<Long> reader = start("reader", () -> readAndCheck(l.receiver(), 0, size));
            if (blocking) {
                send(l.sender(), f, 0, size);
            } else {
                sendNonBlocking(l.sender(), f, 0, size);
            }
            l.sender().shutdownOutput();
            assertEquals(HEAD.length + size + TAIL.length, reader.result().get(100, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void shouldSendARangeOfTheFile(Route route) throws Exception {
        long size = (8 << 20) + 1;
        long from = 4093;
        long count = size - from - 5;
        try (Link l = open(route); FileChannel f = FileChannel.open(file(size), StandardOpenOption.READ)) {
            Task<Long> reader = start("reader", () -> readAndCheck(l.receiver(), from, count));
            sendNonBlocking(l.sender(), f, from, count);
            l.sender().shutdownOutput();
            assertEquals(HEAD.length + count + TAIL.length, reader.result().get(100, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void shouldFailATransferToAChannelWhoseOutputIsShutAsTheJdkDoes(Route route) throws Exception {
        try (Link l = open(route)) {
            l.sender().shutdownOutput();
            for (long size : new long[] {1, 1 << 20}) {
                try (FileChannel f = FileChannel.open(file(size), StandardOpenOption.READ)) {
                    // the JDK's transferTo turns the target's ClosedChannelException into this
                    IOException e = assertThrows(IOException.class, () -> f.transferTo(0, size, l.sender()));
                    assertInstanceOf(AsynchronousCloseException.class, e, e.toString());
                    assertTrue(f.isOpen());
                }
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void shouldFailATransferToAClosedChannelAsTheJdkDoes(Route route) throws Exception {
        try (Link l = open(route)) {
            l.sender().close();
            for (long size : new long[] {1, 1 << 20}) {
                try (FileChannel f = FileChannel.open(file(size), StandardOpenOption.READ)) {
                    assertThrows(ClosedChannelException.class, () -> f.transferTo(0, size, l.sender()));
                    assertTrue(f.isOpen());
                }
            }
        }
    }

    /** The reverse: the sender writes, the receiving channel's bytes go into a file with transferFrom. */
    @ParameterizedTest(name = "{0}")
    @MethodSource("routes")
    void shouldStoreWhatAChannelReceivesWithTransferFrom(Route route) throws Exception {
        long size = (8 << 20) + 1;
        Path into = dir.resolve("into-" + route);
        try (Link l = open(route); FileChannel src = FileChannel.open(file(size), StandardOpenOption.READ);
             FileChannel dst = FileChannel.open(into, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                     StandardOpenOption.TRUNCATE_EXISTING, StandardOpenOption.READ)) {
            // the file's bytes from the sender, read by its peer straight into a file
            Task<Void> writer = start("writer", () -> {
                ByteBuffer b = ByteBuffer.allocateDirect(1 << 16);
                for (long off = 0; off < size; ) {
                    b.clear().limit((int) Math.min(b.capacity(), size - off));
                    src.read(b, off);
                    b.flip();
                    while (b.hasRemaining()) {
                        off += l.sender().write(b);
                    }
                }
                return null;
            });
            long position = 0;
            while (position < size) {
                long n = dst.transferFrom(l.receiver(), position, size - position);
                assertTrue(n > 0, "transferFrom took nothing at " + position);
                position += n;
            }
            writer.result().get(100, TimeUnit.SECONDS);
            assertEquals(size, dst.size());
            ByteBuffer b = ByteBuffer.allocateDirect(1 << 16);
            for (long off = 0; off < size; ) {
                b.clear();
                int n = dst.read(b, off);
                for (int i = 0; i < n; i++) {
                    if (b.get(i) != fileByte(off + i)) {
                        throw new AssertionError("byte " + (off + i) + " differs");
                    }
                }
                off += n;
            }
        }
    }

    /**
     * A JDK selector takes any {@code sun.nio.ch.SelChImpl} (its {@code register} is final, as is
     * the channel's), so it takes a hadroNIO channel too: its next selection then fails with the
     * exception its {@code register} throws for any other foreign channel, instead of never
     * reporting the key; the key, once cancelled, leaves, and the selector closes cleanly.
     */
    @Test
    void shouldMakeAJdkSelectorFailLoudlyOnAHadronioChannel() throws Exception {
        assertTrue(SocketChannelFactory.trusted(), "the trusted channel must load here");
        try (Link l = open(Route.UCX); Selector jdkSelector = JDK.openSelector()) {
            SocketChannel ch = l.sender();
            ch.configureBlocking(false);
            SelectionKey key = ch.register(jdkSelector, OP_WRITE);
            assertNotNull(key);
            assertThrows(IllegalSelectorException.class, jdkSelector::selectNow);
            key.cancel();
            assertEquals(0, jdkSelector.selectNow());
            assertTrue(jdkSelector.keys().isEmpty());
            // the channel still works with its own provider's selector
            try (Selector ours = HADRONIO.openSelector()) {
                SelectionKey k = ch.register(ours, OP_WRITE);
                assertEquals(1, ours.select(5_000));
                assertTrue(k.isWritable());
            }
        }
    }

    private static void writeFully(SocketChannel ch, ByteBuffer b, Selector selector) throws IOException {
        while (b.hasRemaining()) {
            if (ch.write(b) == 0) {
                selector.select();
                selector.selectedKeys().clear();
            }
        }
    }

    private static void send(SocketChannel ch, FileChannel f, long from, long count) throws IOException {
        ByteBuffer head = ByteBuffer.wrap(HEAD);
        while (head.hasRemaining()) {
            ch.write(head);
        }
        for (long done = 0; done < count; ) {
            long n = f.transferTo(from + done, count - done, ch);
            assertTrue(n > 0, "a blocking transferTo took nothing at " + done);
            done += n;
        }
        ByteBuffer tail = ByteBuffer.wrap(TAIL);
        while (tail.hasRemaining()) {
            ch.write(tail);
        }
    }

    /** Sends on the non-blocking channel, waiting in a selector (of the channel's provider) whenever it takes nothing. */
    private static void sendNonBlocking(SocketChannel ch, FileChannel f, long from, long count) throws IOException {
        ch.configureBlocking(false);
        try (Selector selector = ch.provider().openSelector()) {
            ch.register(selector, OP_WRITE);
            writeFully(ch, ByteBuffer.wrap(HEAD), selector);
            for (long done = 0; done < count; ) {
                long n = f.transferTo(from + done, count - done, ch);
                if (n == 0) {
                    selector.select();
                    selector.selectedKeys().clear();
                }
                done += n;
            }
            writeFully(ch, ByteBuffer.wrap(TAIL), selector);
        }
        ch.configureBlocking(true);
    }

    /** Reads the head, {@code count} bytes of the file from {@code from}, the tail, then the end of the stream. */
    private static long readAndCheck(SocketChannel ch, long from, long count) throws IOException {
        ByteBuffer b = ByteBuffer.allocateDirect(1 << 16);
        long total = HEAD.length + count + TAIL.length;
        long p = 0;
        while (true) {
            b.clear();
            int n = ch.read(b);
            if (n < 0) {
                return p;
            }
            for (int i = 0; i < n; i++, p++) {
                byte expected = p < HEAD.length ? HEAD[(int) p]
                        : p < HEAD.length + count ? fileByte(from + p - HEAD.length)
                        : p < total ? TAIL[(int) (p - HEAD.length - count)] : 0;
                if (p >= total || b.get(i) != expected) {
                    throw new AssertionError("stream byte " + p + " of " + total + ": " + b.get(i) + ", expected "
                            + expected);
                }
            }
        }
    }
}
