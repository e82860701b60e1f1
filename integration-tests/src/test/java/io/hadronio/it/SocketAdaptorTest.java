package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.DataInputStream;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The socket() adaptor: streams, SO_TIMEOUT, the classic option setters, the option set. */
@Timeout(60)
class SocketAdaptorTest extends ItSupport {
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

    @Test
    void shouldEchoThroughTheSocketsStreams() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            Socket socket = ch.socket();
            assertSame(ch, socket.getChannel());
            assertTrue(socket.isConnected());
            assertEquals(port, socket.getPort());
            assertEquals(LOOPBACK, socket.getInetAddress());
            assertEquals(((InetSocketAddress) ch.getLocalAddress()).getPort(), socket.getLocalPort());
            OutputStream out = socket.getOutputStream();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            // single bytes
            out.write(0xAB);
            assertEquals(0xAB, in.read());
            // a megabyte, written while we read
            byte[] data = Data.bytes(0, (1 << 20) + 1);
            Future<Void> writer = async(() -> {
                out.write(data, 0, 1000);
                out.write(data, 1000, data.length - 1000);
                out.flush();
                return null;
            });
            byte[] back = new byte[data.length];
            in.readFully(back);
            writer.get(30, TimeUnit.SECONDS);
            assertArrayEquals(data, back);
            socket.shutdownOutput();
            assertEquals(-1, in.read(), "end-of-stream after the echo peer closed");
        }
    }

    @Test
    void shouldThrowSocketTimeoutExceptionFromAReadAfterSetSoTimeoutAndStayUsable() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            Socket socket = ch.socket();
            socket.setSoTimeout(200);
            assertEquals(200, socket.getSoTimeout());
            InputStream in = socket.getInputStream();
            assertThrows(SocketTimeoutException.class, in::read, "nothing arrives: the read times out");
            assertThrows(SocketTimeoutException.class, () -> in.read(new byte[10]), "and again");
            assertTrue(ch.isOpen() && socket.isConnected(), "a timeout does not close the socket");
            socket.getOutputStream().write(new byte[] {1, 2, 3});
            byte[] b = new byte[3];
            new DataInputStream(in).readFully(b);
            assertArrayEquals(new byte[] {1, 2, 3}, b);
        }
    }

    @Test
    void shouldAcceptTheClassicOptionSetters() throws Exception {
        try (SocketChannel ch = command(port, 'E', 0)) {
            Socket socket = ch.socket();
            socket.setTcpNoDelay(true);
            assertTrue(socket.getTcpNoDelay());
            socket.setTcpNoDelay(false);
            assertFalse(socket.getTcpNoDelay());
            socket.setKeepAlive(true);
            assertTrue(socket.getKeepAlive());
            socket.setSendBufferSize(256 * 1024);
            assertTrue(socket.getSendBufferSize() > 0);
            socket.setReceiveBufferSize(256 * 1024);
            assertTrue(socket.getReceiveBufferSize() > 0);
            socket.setSoLinger(true, 5);
            assertEquals(5, socket.getSoLinger());
            socket.setSoLinger(false, 0);
            socket.setReuseAddress(true);
            assertTrue(socket.getReuseAddress());
            socket.setTrafficClass(0x10);
            socket.setOOBInline(false);
            // and the channel still carries data
            socket.getOutputStream().write(42);
            assertEquals(42, socket.getInputStream().read());
        }
    }

    @Test
    void shouldSupportExactlyTheOptionsOfTheJdksChannels() throws Exception {
        try (SocketChannel ours = SocketChannel.open();
             SocketChannel jdks = provider().platform().openSocketChannel();
             ServerSocketChannel ourServer = ServerSocketChannel.open();
             ServerSocketChannel jdkServer = provider().platform().openServerSocketChannel()) {
            assertTrue(ours.getClass().getName().startsWith("io.hadronio."), "the channel is hadroNIO's");
            // the JDK's options, and hadroNIO's read-only TRANSPORT
            java.util.Set<java.net.SocketOption<?>> expected = new java.util.HashSet<>(jdks.supportedOptions());
            expected.add(io.hadronio.HadronioSocketOptions.TRANSPORT);
            assertEquals(expected, ours.supportedOptions());
            assertEquals(jdkServer.supportedOptions(), ourServer.supportedOptions());
            assertEquals(expected, ours.socket().supportedOptions());
            // and what a JVM without hadroNIO reports
            try (ChildJvm plain = ChildJvm.withoutProvider("options")) {
                java.util.Set<java.net.SocketOption<?>> standard = new java.util.HashSet<>(ours.supportedOptions());
                standard.remove(io.hadronio.HadronioSocketOptions.TRANSPORT);
                assertEquals(plain.expect("OPTIONS "), Peer.names(standard));
                assertEquals(plain.expect("SERVER_OPTIONS "), Peer.names(ourServer.supportedOptions()));
            }
        }
    }
}
