package io.hadronio.transport;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.nio.channels.SocketChannel;

/** The connecting side of the handshake, on a connected, blocking TCP socket. */
public final class Connector {
    private Connector() {
    }

    /** What a finished handshake gives a channel. */
    public record Established(Connection connection, ControlLoop.Control control) {
    }

    /**
     * Posts our receives, sends our hello, reads the server's (for at most
     * {@code timeoutMillis}), creates the endpoint, and hands the TCP socket to the
     * control loop (switched to non-blocking).
     *
     * @throws java.net.ProtocolException when the server does not speak hadroNIO
     * @throws java.net.SocketTimeoutException when it does not answer in time
     */
    public static Established connect(UcxRuntime runtime, SocketChannel tcp, int timeoutMillis) throws IOException {
        Connection connection = runtime.newConnection();
        try {
            ControlLoop.writeFully(tcp, Handshake.encode(connection.localId, connection.rxSliceSize,
                    connection.rxSliceCount, connection.group().address()));
            Socket socket = tcp.socket();
            int previousTimeout = socket.getSoTimeout();
            socket.setSoTimeout(timeoutMillis);
            Handshake.Hello hello;
            try {
                InputStream in = socket.getInputStream();
                hello = Handshake.read(in);
            } catch (java.net.SocketTimeoutException e) {
                throw new java.net.SocketTimeoutException("hadroNIO handshake: no answer from "
                        + tcp.getRemoteAddress() + " within " + timeoutMillis + " ms (not a hadroNIO server?)");
            } finally {
                socket.setSoTimeout(previousTimeout);
            }
            connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
            tcp.configureBlocking(false);
            return new Established(connection, runtime.control().watch(tcp, connection));
        } catch (IOException | RuntimeException e) {
            connection.release();
            throw e;
        }
    }
}
