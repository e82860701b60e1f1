package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * close() and shutdownOutput() lose nothing: what was written before them arrives before
 * the peer sees end-of-stream. shutdownInput() makes reads return end-of-stream.
 */
@Timeout(60)
class OrderlyCloseTest extends ItSupport {
    // less than the receive window (slice.size x slice.count = 512 KiB by default): a writer
    // can write it all and close while the reader has not read a byte
    static final int IN_WINDOW = 400 * 1024 + 7;
    static final int LARGE = 8 << 20;

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

    private static void assertStream(long expected, Data.Received r) {
        assertEquals(expected, r.count(), "bytes received before end-of-stream");
        assertEquals(-1, r.firstMismatch(), "offset of the first wrong byte");
        assertEquals(Data.crc(expected), r.crc(), "CRC32");
    }

    @Test
    void shouldReadEverythingThenEndOfStreamWhenThePeerWritesAndClosesAtOnce() throws Exception {
        try (SocketChannel ch = command(port, 'S', LARGE)) {
            assertStream(LARGE, Data.readToEnd(ch));
            assertEquals(-1, ch.read(ByteBuffer.allocate(10)), "end-of-stream stays");
            peer.expect("CLOSED");
        }
    }

    @Test
    void shouldReadEverythingWrittenBeforeThePeersCloseReturnedBeforeWeStartedReading() throws Exception {
        try (SocketChannel ch = command(port, 'S', IN_WINDOW)) {
            // the peer's write and close() returned before we read anything
            peer.expect("CLOSED");
            assertStream(IN_WINDOW, Data.readToEnd(ch));
        }
    }

    @Test
    void shouldReadEverythingWhenThePeerExitsRightAfterClose() throws Exception {
        try (ChildJvm exiting = ChildJvm.withProvider("server")) {
            try (SocketChannel ch = command(exiting.port(), 'X', IN_WINDOW)) {
                // the peer writes less than the window, closes and exits while we read
                assertStream(IN_WINDOW, Data.readToEnd(ch));
                assertEquals(0, exiting.awaitExit(), exiting::report);
            }
        }
    }

    @Test
    void shouldReadEverythingWhenThePeerExitsRightAfterCloseWhileWeRead() throws Exception {
        try (ChildJvm exiting = ChildJvm.withProvider("server")) {
            try (SocketChannel ch = command(exiting.port(), 'X', LARGE)) {
                assertStream(LARGE, Data.readToEnd(ch));
                assertEquals(0, exiting.awaitExit(), exiting::report);
            }
        }
    }

    @Test
    void shouldReadEverythingWhenThePeerExitedBeforeWeStartedReading() throws Exception {
        try (ChildJvm exiting = ChildJvm.withProvider("server")) {
            try (SocketChannel ch = command(exiting.port(), 'X', IN_WINDOW)) {
                exiting.expect("CLOSED");
                assertEquals(0, exiting.awaitExit(), exiting::report);
                // the peer's JVM is gone; a kernel socket would still deliver what it wrote
                assertStream(IN_WINDOW, Data.readToEnd(ch));
            }
        }
    }

    @Test
    void shouldDeliverEverythingWeWroteBeforeOurCloseToAPeerThatReadsOnlyLater() throws Exception {
        try (ChildJvm quiet = ChildJvm.withProvider("server")) {
            SocketChannel ch = command(quiet.port(), 'Q', 0);
            quiet.expect("QUIET");
            Data.write(ch, IN_WINDOW);
            ch.close();
            quiet.send("GO");
            assertStream(IN_WINDOW, Data.Received.parse(quiet.expect("RECEIVED ")));
        }
    }

    @Test
    void shouldReadEverythingAfterThePeersShutdownOutputAndStillSendToIt() throws Exception {
        try (SocketChannel ch = command(port, 'H', LARGE)) {
            assertStream(LARGE, Data.readToEnd(ch));
            peer.expect("SHUTDOWN");
            assertTrue(ch.isOpen() && ch.isConnected());
            // the other direction is still open
            long back = 3 * 1024 * 1024 + 1;
            Data.write(ch, back);
            ch.close();
            assertStream(back, Data.Received.parse(peer.expect("RECEIVED ")));
        }
    }

    @Test
    void shouldReadEverythingWrittenBeforeThePeersShutdownOutputReturned() throws Exception {
        try (SocketChannel ch = command(port, 'H', IN_WINDOW)) {
            peer.expect("SHUTDOWN");
            assertStream(IN_WINDOW, Data.readToEnd(ch));
            Data.write(ch, 5);
            ch.shutdownOutput();
            assertStream(5, Data.Received.parse(peer.expect("RECEIVED ")));
        }
    }

    @Test
    void shouldDeliverEverythingBeforeOurShutdownOutputAndKeepReading() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            // the echo peer sends back what we write; we read it after our shutdownOutput
            Data.write(ch, IN_WINDOW / 2);
            ch.shutdownOutput();
            assertTrue(ch.socket().isOutputShutdown());
            assertStream(IN_WINDOW / 2, Data.readToEnd(ch));
        }
    }

    @Test
    void shouldReturnEndOfStreamAfterShutdownInput() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            // bytes are on their way back to us when we shut our input down
            Data.write(ch, 1000);
            ch.shutdownInput();
            assertTrue(ch.socket().isInputShutdown());
            assertEquals(-1, ch.read(ByteBuffer.allocate(100)));
            assertEquals(-1, ch.read(new ByteBuffer[] {ByteBuffer.allocate(10), ByteBuffer.allocateDirect(10)}));
            assertEquals(-1, ch.read(ByteBuffer.allocate(100)), "end-of-stream stays");
            // output still works
            Data.write(ch, 10);
            assertTrue(ch.isOpen());
        }
    }

    @Test
    void shouldEndABlockedReadWithEndOfStreamWhenInputIsShutDown() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            Task<Integer> reader = start("reader", () -> ch.read(ByteBuffer.allocate(10)));
            awaitBlockedIn(reader.thread(), ItSupport::hadronioWait);
            ch.shutdownInput();
            assertEquals(-1, reader.result().get(30, TimeUnit.SECONDS));
            assertTrue(ch.isOpen());
        }
    }

    @Test
    void shouldSeeEndOfStreamInBothDirectionsWhenBothSidesShutDownOutput() throws Exception {
        try (SocketChannel ch = command(port, 'H', 0)) {
            peer.expect("SHUTDOWN");
            assertEquals(-1, ch.read(ByteBuffer.allocate(10)));
            ch.shutdownOutput();
            assertStream(0, Data.Received.parse(peer.expect("RECEIVED ")));
            assertFalse(ch.socket().isClosed());
        }
    }

    /**
     * A JVM that ends without closing its channel (returning from main, System.exit): the
     * peer reads everything written, then end-of-stream, as with the JDK's sockets.
     */
    @Test
    void shouldDeliverEverythingThenEndOfStreamWhenThePeerExitsWithoutClosing() throws Exception {
        for (String how : List.of("return", "exit")) {
            try (java.nio.channels.ServerSocketChannel server = java.nio.channels.ServerSocketChannel.open()
                    .bind(new java.net.InetSocketAddress(LOOPBACK, 0))) {
                int serverPort = ((java.net.InetSocketAddress) server.getLocalAddress()).getPort();
                try (ChildJvm writer = ChildJvm.withProvider("write-exit", String.valueOf(serverPort),
                        String.valueOf(IN_WINDOW), how); SocketChannel ch = server.accept()) {
                    // (in upgrade mode the connection may still be raw, on its local stream or TCP,
                    // whose end is the kernel's)
                    String transport = ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
                    assertTrue(transport.startsWith("ucx:")
                            || ChildJvm.UPGRADE_MODE && (transport.equals("tcp") || transport.equals("unix")),
                            transport);
                    writer.expect("WRITTEN");
                    assertStream(IN_WINDOW, Data.readToEnd(ch));
                }
            }
        }
    }
}
