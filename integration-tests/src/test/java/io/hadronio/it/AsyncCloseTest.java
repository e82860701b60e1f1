package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Blocked reads, writes and accepts end as the NIO contract says: close from another
 * thread gives AsynchronousCloseException, Thread.interrupt gives
 * ClosedByInterruptException and closes the channel.
 */
@Timeout(60)
class AsyncCloseTest extends ItSupport {
    static ChildJvm peer;
    static int port;

    @BeforeAll
    static void startPeer() throws Exception {
        peer = ChildJvm.withProvider("server");
        port = peer.port();
    }

    @AfterAll
    static void stopPeer() {
        if (peer != null) {
            peer.close();
        }
    }

    /** A task that also records whether its thread's interrupt status was set when it ended. */
    private static <T> Task<T> startRecordingInterrupt(AtomicBoolean interrupted, Callable<T> body) {
        return start("blocked", () -> {
            try {
                return body.call();
            } finally {
                interrupted.set(Thread.currentThread().isInterrupted());
            }
        });
    }

    @Test
    void shouldEndABlockedReadWithAsynchronousCloseExceptionWhenAnotherThreadCloses() throws Exception {
        SocketChannel ch = command(port, 'E', 0);
        Task<Integer> reader = start("reader", () -> ch.read(ByteBuffer.allocate(10)));
        awaitBlockedIn(reader.thread(), ItSupport::hadronioWait);
        ch.close();
        assertEquals(AsynchronousCloseException.class, classOf(reader.failure()));
        assertFalse(ch.isOpen());
        assertThrows(ClosedChannelException.class, () -> ch.read(ByteBuffer.allocate(1)));
    }

    @Test
    void shouldEndABlockedScatteringReadWithAsynchronousCloseExceptionWhenAnotherThreadCloses() throws Exception {
        SocketChannel ch = command(port, 'E', 0);
        Task<Long> reader = start("reader", () -> ch.read(new ByteBuffer[] {ByteBuffer.allocate(3),
            ByteBuffer.allocateDirect(5)}));
        awaitBlockedIn(reader.thread(), ItSupport::hadronioWait);
        ch.close();
        assertEquals(AsynchronousCloseException.class, classOf(reader.failure()));
    }

    /**
     * As the JDK's socket channel does (checked on its provider with the same steps): a blocking
     * write that a close from another thread ends after it handed over some of its bytes returns
     * their count, and the buffer's position agrees; only one that handed over none throws.
     */
    @Test
    void shouldReturnWhatABlockedWriteTookWhenAnotherThreadCloses() throws Exception {
        try (ChildJvm quiet = ChildJvm.withProvider("server")) {
            SocketChannel ch = command(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            // 64 KiB first (the socket takes them): in upgrade mode the big write then starts the
            // connection's move (hadronio.upgrade.writes) and blocks in hadroNIO's own wait
            ByteBuffer first = ByteBuffer.allocate(64 << 10);
            while (first.hasRemaining()) {
                ch.write(first);
            }
            ByteBuffer big = ByteBuffer.allocate(16 << 20);
            Task<Integer> writer = start("writer", () -> ch.write(big));
            awaitBlockedIn(writer.thread(), ItSupport::hadronioWait);
            ch.close();
            assertEquals(null, writer.failure());
            int n = writer.result().join();
            assertTrue(n > 0 && n < big.capacity(), "returned " + n);
            assertEquals(n, big.position());
            assertFalse(ch.isOpen());
        }
    }

    @Test
    void shouldEndABlockedWriteThatTookNothingWithAsynchronousCloseException() throws Exception {
        try (ChildJvm quiet = ChildJvm.withProvider(EAGER_MODE, "server")) {
            SocketChannel ch = onUcx(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            // fill everything the peer's window and our send slots take, without blocking
            ch.configureBlocking(false);
            ByteBuffer fill = ByteBuffer.allocate(64 << 10);
            while (true) {
                fill.clear();
                if (ch.write(fill) == 0) {
                    break;
                }
            }
            ch.configureBlocking(true);
            ByteBuffer more = ByteBuffer.allocate(64 << 10);
            Task<Integer> writer = start("writer", () -> ch.write(more));
            awaitBlockedIn(writer.thread(), ItSupport::hadronioWait);
            ch.close();
            assertEquals(AsynchronousCloseException.class, classOf(writer.failure()));
            assertEquals(0, more.position());
            assertFalse(ch.isOpen());
        }
    }

    @Test
    void shouldCloseTheChannelAndThrowClosedByInterruptExceptionWhenABlockedReaderIsInterrupted()
            throws Exception {
        // repeated: the interrupt races with the reader's own wake-ups
        for (int i = 0; i < 10; i++) {
            SocketChannel ch = command(port, 'E', 0);
            AtomicBoolean interrupted = new AtomicBoolean();
            Task<Integer> reader = startRecordingInterrupt(interrupted, () -> ch.read(ByteBuffer.allocate(10)));
            awaitBlockedIn(reader.thread(), ItSupport::hadronioWait);
            reader.thread().interrupt();
            assertEquals(ClosedByInterruptException.class, classOf(reader.failure()), "round " + i);
            assertFalse(ch.isOpen(), "the interrupt closed the channel");
            assertTrue(interrupted.get(), "the reader's interrupt status stays set");
        }
    }

    @Test
    void shouldCloseTheChannelAndThrowClosedByInterruptExceptionWhenABlockedWriterIsInterrupted()
            throws Exception {
        try (ChildJvm quiet = ChildJvm.withProvider("server")) {
            SocketChannel ch = command(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            AtomicBoolean interrupted = new AtomicBoolean();
            Task<Integer> writer = startRecordingInterrupt(interrupted, () -> ch.write(ByteBuffer.allocate(16 << 20)));
            awaitBlockedIn(writer.thread(), ItSupport::hadronioWait);
            writer.thread().interrupt();
            assertEquals(ClosedByInterruptException.class, classOf(writer.failure()));
            assertFalse(ch.isOpen());
            assertTrue(interrupted.get());
        }
    }

    @Test
    void shouldThrowClosedByInterruptExceptionWhenReadingWithTheInterruptStatusAlreadySet() throws Exception {
        SocketChannel ch = command(port, 'E', 0);
        AtomicBoolean interrupted = new AtomicBoolean();
        Task<Integer> reader = startRecordingInterrupt(interrupted, () -> {
            Thread.currentThread().interrupt();
            return ch.read(ByteBuffer.allocate(10));
        });
        assertEquals(ClosedByInterruptException.class, classOf(reader.failure()));
        assertFalse(ch.isOpen());
        assertTrue(interrupted.get());
    }

    @Test
    void shouldEndABlockedAcceptWithAsynchronousCloseExceptionWhenAnotherThreadCloses() throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0));
        Task<SocketChannel> acceptor = start("acceptor", server::accept);
        awaitInBlockedAccept(acceptor.thread());
        server.close();
        assertEquals(AsynchronousCloseException.class, classOf(acceptor.failure()));
        assertFalse(server.isOpen());
    }

    @Test
    void shouldCloseTheServerAndThrowClosedByInterruptExceptionWhenABlockedAcceptIsInterrupted()
            throws Exception {
        // repeated: the interrupt races with the accept's own wake-up
        for (int i = 0; i < 20; i++) {
            ServerSocketChannel server = ServerSocketChannel.open().bind(loopback(0));
            AtomicBoolean interrupted = new AtomicBoolean();
            Task<SocketChannel> acceptor = startRecordingInterrupt(interrupted, server::accept);
            awaitInBlockedAccept(acceptor.thread());
            acceptor.thread().interrupt();
            assertEquals(ClosedByInterruptException.class, classOf(acceptor.failure()), "round " + i);
            assertFalse(server.isOpen(), "round " + i);
            assertTrue(interrupted.get(), "round " + i);
        }
    }

    @Test
    void shouldCloseTheChannelAndThrowClosedByInterruptExceptionWhenInterruptedInTheHandshake()
            throws Exception {
        org.junit.jupiter.api.Assumptions.assumeFalse(ChildJvm.UPGRADE_MODE,
                "in upgrade mode connect runs no handshake to interrupt");
        // a kernel TCP server that accepts (its backlog does) but never answers the handshake,
        // behind a rendezvous that (with our key) tells clients it is accelerated
        try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, LOOPBACK)) {
            io.hadronio.connection.LocalRendezvous liar = new io.hadronio.connection.LocalRendezvous(
                    io.hadronio.connection.Secret.load(java.nio.file.Path.of(System.getProperty("user.home"),
                            ".hadronio", "secret")), 10_000);
            liar.listen(LOOPBACK, silent.getLocalPort(), () -> { });
            SocketChannel ch = SocketChannel.open();
            AtomicBoolean interrupted = new AtomicBoolean();
            Task<Boolean> connector = startRecordingInterrupt(interrupted,
                    () -> ch.connect(loopback(silent.getLocalPort())));
            awaitBlockedIn(connector.thread(), e -> e.getClassName().endsWith("ClientConnect")
                    && e.getMethodName().equals("completeConnect"));
            connector.thread().interrupt();
            assertEquals(ClosedByInterruptException.class, classOf(connector.failure()));
            assertFalse(ch.isOpen(), "the interrupt closed the channel");
            assertTrue(interrupted.get());
            liar.unlisten(LOOPBACK, silent.getLocalPort(), null);
        }
    }

    /** A blocked accept sleeps in poll(2) (on the listener and its wake-up fd): RUNNABLE, in native code. */
    private static void awaitInBlockedAccept(Thread thread) throws InterruptedException {
        awaitBlockedIn(thread, e -> e.getClassName().endsWith("AcceptWait")
                && e.getMethodName().equals("await"));
    }

    private static Class<?> classOf(Throwable t) {
        if (t == null) {
            throw new AssertionError("the blocked call returned normally");
        }
        return t.getClass();
    }
}
