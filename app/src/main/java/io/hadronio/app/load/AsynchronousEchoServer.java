package io.hadronio.app.load;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * NIO.2: asynchronous channels of one group of one thread (as the non-blocking server's one
 * Selector), every step a {@link CompletionHandler}: a connection reads what it has, writes it
 * back whole, and reads again. The provider is the JVM's {@code AsynchronousChannelProvider}
 * (hadroNIO's, or the JDK's with {@code DISABLE_HADRONIO=true}).
 */
final class AsynchronousEchoServer implements EchoServer {
    private static final int BUFFER = 64 * 1024;

    private final AtomicInteger open = new AtomicInteger();
    private final CountDownLatch done = new CountDownLatch(1);

    @Override
    public void serve(InetSocketAddress address) throws Exception {
        AsynchronousChannelGroup group = AsynchronousChannelGroup.withFixedThreadPool(1, r -> {
            Thread t = new Thread(r, "nio2-echo");
            t.setDaemon(true);
            return t;
        });
        try (AsynchronousServerSocketChannel server = AsynchronousServerSocketChannel.open(group)) {
            server.bind(address, 1024);
            System.out.println("listening on " + server.getLocalAddress() + " (provider "
                    + AsynchronousChannelProvider.provider().getClass().getName() + ", nio2 echo)");
            System.out.flush();
            server.accept(null, new CompletionHandler<AsynchronousSocketChannel, Void>() {
                @Override
                public void completed(AsynchronousSocketChannel c, Void unused) {
                    open.incrementAndGet();
                    server.accept(null, this);
                    try {
                        c.setOption(StandardSocketOptions.TCP_NODELAY, true);
                    } catch (IOException e) {
                        // an option the path lacks changes nothing here
                    }
                    new Echo(c).read();
                }

                @Override
                public void failed(Throwable t, Void unused) {
                    // the server closed (the clients are gone), or the group shut down
                }
            });
            done.await();
        } finally {
            group.shutdownNow();
        }
    }

    /** One connection: its buffer holds what it read until it is written back. */
    private final class Echo implements CompletionHandler<Integer, Boolean> {
        private final AsynchronousSocketChannel channel;
        private final ByteBuffer buffer = ByteBuffer.allocateDirect(BUFFER);

        Echo(AsynchronousSocketChannel channel) {
            this.channel = channel;
        }

        void read() {
            buffer.clear();
            channel.read(buffer, Boolean.TRUE, this);
        }

        @Override
        public void completed(Integer n, Boolean reading) {
            if (reading && n < 0) {
                close();
                return;
            }
            if (reading) {
                buffer.flip();
            }
            if (buffer.hasRemaining()) {
                channel.write(buffer, Boolean.FALSE, this);
            } else {
                read();
            }
        }

        @Override
        public void failed(Throwable t, Boolean reading) {
            close();
        }

        private void close() {
            try {
                channel.close();
            } catch (IOException e) {
                // closing anyway
            }
            if (open.decrementAndGet() == 0) {
                done.countDown();
            }
        }
    }
}
