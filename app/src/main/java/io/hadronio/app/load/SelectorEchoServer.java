package io.hadronio.app.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Iterator;

/**
 * Non-blocking channels and one Selector on one thread for every connection. A connection's
 * buffer holds what it read until it is written back; while a write is pending the
 * connection waits for {@code OP_WRITE} and reads nothing more.
 */
public final class SelectorEchoServer implements EchoServer {
    private static final int BUFFER = 64 * 1024;

    @Override
    public void serve(InetSocketAddress address) throws Exception {
        try (Selector selector = Selector.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(address, 1024);
            server.configureBlocking(false);
            server.register(selector, SelectionKey.OP_ACCEPT);
            System.out.println("listening on " + server.getLocalAddress() + " (provider "
                    + SelectorProvider.provider().getClass().getName() + ", selector echo)");
            System.out.flush();
            int open = 0;
            boolean anyone = false;
            while (!anyone || open > 0) {
                selector.select();
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    if (key.isValid() && key.isAcceptable()) {
                        SocketChannel c;
                        while ((c = server.accept()) != null) {
                            c.configureBlocking(false);
                            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                            c.register(selector, SelectionKey.OP_READ, ByteBuffer.allocateDirect(BUFFER));
                            open++;
                            anyone = true;
                        }
                    } else if (key.isValid() && !handle(key)) {
                        key.channel().close();
                        open--;
                    }
                }
            }
        }
    }

    /** Reads and echoes what the connection has; false when it has ended. */
    private static boolean handle(SelectionKey key) {
        SocketChannel c = (SocketChannel) key.channel();
        ByteBuffer buffer = (ByteBuffer) key.attachment();
        try {
            if (key.isWritable()) {
                c.write(buffer);
                if (buffer.hasRemaining()) {
                    return true;
                }
                buffer.clear();
                key.interestOps(SelectionKey.OP_READ);
            }
            if (key.isReadable()) {
                int n = c.read(buffer);
                if (n < 0) {
                    return false;
                }
                buffer.flip();
                c.write(buffer);
                if (buffer.hasRemaining()) {
                    key.interestOps(SelectionKey.OP_WRITE);
                } else {
                    buffer.clear();
                }
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }
}
