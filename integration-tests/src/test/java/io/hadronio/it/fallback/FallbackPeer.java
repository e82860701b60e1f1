package io.hadronio.it.fallback;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/** Prints which provider and channel classes it got, then echoes a message through a loopback connection. */
public final class FallbackPeer {
    private FallbackPeer() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel peer = server.accept()) {
                System.out.println("CHANNEL " + client.getClass().getName());
                client.write(ByteBuffer.wrap("ping".getBytes()));
                ByteBuffer in = ByteBuffer.allocate(4);
                while (in.hasRemaining()) {
                    peer.read(in);
                }
                System.out.println("ECHO " + new String(in.array()));
            }
        }
        Pipe pipe = Pipe.open();
        pipe.sink().write(ByteBuffer.wrap(new byte[] {42}));
        ByteBuffer one = ByteBuffer.allocate(1);
        pipe.source().read(one);
        System.out.println("PIPE " + one.get(0));
    }
}
