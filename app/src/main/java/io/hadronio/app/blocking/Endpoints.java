package io.hadronio.app.blocking;

import io.hadronio.app.Transports;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/** Connection set-up and full reads/writes shared by the blocking, non-blocking and load commands. */
public final class Endpoints {
    private Endpoints() {
    }

    /** Server side: listen on {@code address}, print where, accept one connection. */
    static SocketChannel acceptOne(InetSocketAddress address) throws IOException {
        try (ServerSocketChannel server = listen(address)) {
            return accept(server);
        }
    }

    /** Server side: listen on {@code address} and print where (the line a driver waits for). */
    static ServerSocketChannel listen(InetSocketAddress address) throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        try {
            server.bind(address);
        } catch (IOException | RuntimeException e) {
            server.close();
            throw e;
        }
        System.out.println("listening on " + server.getLocalAddress() + " (provider "
                + SelectorProvider.provider().getClass().getName() + ")");
        System.out.flush();
        return server;
    }

    /** Server side: the next connection, with Nagle off. */
    static SocketChannel accept(ServerSocketChannel server) throws IOException {
        SocketChannel channel = server.accept();
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        return channel;
    }

    /** Client side: connect, retrying for a few seconds while the server starts. */
    public static SocketChannel connect(InetSocketAddress remote) throws IOException, InterruptedException {
        IOException last = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            SocketChannel channel = SocketChannel.open();
            try {
                channel.connect(remote);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                return channel;
            } catch (java.net.ConnectException e) {
                channel.close();
                last = e;
                Thread.sleep(100);
            }
        }
        throw last;
    }

    static void readFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.read(buffer) < 0) {
                throw new EOFException("peer closed the connection");
            }
        }
    }

    static void writeFully(SocketChannel channel, ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            channel.write(buffer);
        }
    }

    /** "sysv,cma" for a hadroNIO channel, "kernel-tcp" for the JDK's. */
    public static String transport(SocketChannel channel) {
        return Transports.of(channel);
    }
}
