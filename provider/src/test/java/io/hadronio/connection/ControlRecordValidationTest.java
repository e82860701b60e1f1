package io.hadronio.connection;

import io.hadronio.path.ChannelInternals;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Every control record an accelerated peer sends is checked by the connection's
 * lifecycle, and one that breaks the protocol resets the connection: a blocked reader
 * gets an exception instead of waiting for an end-of-stream that never comes, and a
 * record after CLOSE is never taken as anything. The records are written straight onto
 * the server side's control connection, as a broken or hostile (but authenticated) peer
 * would.
 */
@Timeout(60)
class ControlRecordValidationTest {
    static HadronioProvider provider;

    @BeforeAll
    static void start() {
        // records on an accelerated connection's control stream: the default mode's handshake makes one at once
        provider = io.hadronio.EagerProvider.get();
        assertTrue(provider.isAccelerated());
    }

    private static ConnectionLifecycle lifeOf(SocketChannel channel) throws ReflectiveOperationException {
        return ChannelInternals.lifeOf(channel);
    }

    /** Writes raw records on the accepted side's control connection, then checks what the client's read does. */
    private static Throwable clientReadAfter(boolean sendDataFirst, ByteBuffer... records) throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                try (SocketChannel accepted = server.accept()) {
                    assertTrue(client.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"));
                    if (sendDataFirst) {
                        ByteBuffer b = ByteBuffer.wrap(new byte[] {1, 2, 3});
                        while (b.hasRemaining()) {
                            accepted.write(b);
                        }
                        ByteBuffer in = ByteBuffer.allocate(3);
                        while (in.hasRemaining()) {
                            client.read(in);
                        }
                    }
                    SocketChannel control = lifeOf(accepted).tcp();
                    for (ByteBuffer r : records) {
                        while (r.hasRemaining()) {
                            control.write(r);
                        }
                    }
                    // blocking: it must end by itself, with an exception
                    return assertThrows(IOException.class, () -> client.read(ByteBuffer.allocate(16)));
                }
            }
        }
    }

    @Test
    void shouldResetOnAnUnknownRecord() throws Exception {
        Throwable t = clientReadAfter(false, ControlRecord.encode((byte) 99, 0));
        assertInstanceOf(SocketException.class, t);
        assertTrue(t.getMessage().contains("unknown control record"), t.getMessage());
    }

    @Test
    void shouldResetOnAFinThatTakesBackMessagesAlreadyReceived() throws Exception {
        Throwable t = clientReadAfter(true, ControlRecord.encode(ControlRecord.FIN, 0));
        assertTrue(t.getMessage().contains("announced the end after 0 messages"), t.getMessage());
    }

    @Test
    void shouldResetOnAFinThatContradictsAnEarlierOne() throws Exception {
        Throwable t = clientReadAfter(false, ControlRecord.encode(ControlRecord.FIN, 5),
                ControlRecord.encode(ControlRecord.FIN, 6));
        assertTrue(t.getMessage().contains("FIN of 6 messages"), t.getMessage());
    }

    @Test
    void shouldResetOnACloseWithoutFin() throws Exception {
        Throwable t = clientReadAfter(false, ControlRecord.encode(ControlRecord.CLOSE, 0));
        assertTrue(t.getMessage().contains("CLOSE without FIN"), t.getMessage());
    }

    @Test
    void shouldResetOnARecordAfterClose() throws Exception {
        // FIN 5 and CLOSE would leave the reader waiting for five messages; the record after CLOSE resets
        Throwable t = clientReadAfter(false, ControlRecord.encode(ControlRecord.FIN, 5),
                ControlRecord.encode(ControlRecord.CLOSE, 0), ControlRecord.encode(ControlRecord.NUDGE, 0));
        assertTrue(t.getMessage().contains("after CLOSE"), t.getMessage());
    }

    @Test
    void shouldResetOnANegativeFin() throws Exception {
        Throwable t = clientReadAfter(false, ControlRecord.encode(ControlRecord.FIN, -1));
        assertTrue(t.getMessage().contains("FIN of -1"), t.getMessage());
    }

    @Test
    void shouldEndOrderlyOnAValidFinAndClose() throws Exception {
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(server.getLocalAddress());
                SocketChannel accepted = server.accept();
                accepted.write(ByteBuffer.wrap(new byte[] {9}));
                accepted.close();
                ByteBuffer in = ByteBuffer.allocate(2);
                assertEquals(1, client.read(in));
                assertEquals(-1, client.read(in));
                assertEquals(ConnectionLifecycle.OPEN, lifeOf(client).state());
            }
        }
    }
}
