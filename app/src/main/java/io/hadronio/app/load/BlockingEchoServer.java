package io.hadronio.app.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/** Blocking channels, one thread per connection: the classic server model. */
final class BlockingEchoServer implements EchoServer {
    private static final int BUFFER = 64 * 1024;

    @Override
    public void serve(InetSocketAddress address) throws Exception {
        AtomicInteger open = new AtomicInteger();
        CountDownLatch allGone = new CountDownLatch(1);
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(address, 1024);
            System.out.println("listening on " + server.getLocalAddress() + " (provider "
                    + SelectorProvider.provider().getClass().getName() + ", blocking echo)");
            System.out.flush();
            Thread acceptor = Thread.ofPlatform().daemon().name("acceptor").start(() -> {
                try {
                    while (true) {
                        SocketChannel c = server.accept();
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        open.incrementAndGet();
                        Thread.ofPlatform().daemon().name("echo").start(() -> echo(c, open, allGone));
                    }
                } catch (ClosedChannelException e) {
                    // the server is done
                } catch (IOException e) {
                    System.out.println("accept failed: " + e);
                    allGone.countDown();
                }
            });
            allGone.await();
            acceptor.interrupt();
        }
    }

    private static void echo(SocketChannel c, AtomicInteger open, CountDownLatch allGone) {
        ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);
        try (c) {
            while (c.read(buffer) >= 0) {
                buffer.flip();
                while (buffer.hasRemaining()) {
                    c.write(buffer);
                }
                buffer.clear();
            }
        } catch (IOException e) {
            // the client went away mid-request: its connection is done
        } finally {
            if (open.decrementAndGet() == 0) {
                allGone.countDown();
            }
        }
    }
}
