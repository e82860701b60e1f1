package io.hadronio.app.patterns;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;

/**
 * The server side of a framework that runs its handlers off the I/O thread: the I/O thread
 * reads each 8-byte request and hands it to an application thread through a queue; that
 * thread answers it with {@link Session#write} (queued, the selector woken). Each connection
 * gets its own I/O thread and application thread.
 */
final class HandoffServer {
    private static final int SIZE = Long.BYTES;

    private HandoffServer() {
    }

    static void serve(InetSocketAddress address) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(address, 64);
            System.out.println("listening on " + server.getLocalAddress() + " (provider "
                    + SelectorProvider.provider().getClass().getName() + ", echo through an application thread)");
            System.out.flush();
            while (true) {
                SocketChannel c = server.accept();
                Thread t = new Thread(() -> handle(c), "application");
                t.start();
            }
        }
    }

    /** The application thread of one connection: answers requests until the connection ends. */
    private static void handle(SocketChannel c) {
        try (EventLoop loop = new EventLoop("io")) {
            Requests session = new Requests(loop, c);
            loop.start();
            // answers wait in a pool of buffers, as many as requests may be in flight
            BlockingQueue<ByteBuffer> free = new ArrayBlockingQueue<>(64);
            for (int i = 0; i < 64; i++) {
                free.add(ByteBuffer.allocateDirect(SIZE));
            }
            session.free = free;
            while (true) {
                long request = session.requests.take();
                if (request == END) {
                    return;
                }
                ByteBuffer answer = free.take();
                answer.clear();
                answer.putLong(0, request);
                session.write(answer);
            }
        } catch (IOException e) {
            System.out.println("connection failed: " + e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // handed over when the connection ended (a request is a sequence number, never this)
    private static final long END = Long.MIN_VALUE;

    /** The server's session: hands every request to the application thread. */
    private static final class Requests extends Session {
        final BlockingQueue<Long> requests = new LinkedBlockingQueue<>();
        private final ByteBuffer in = ByteBuffer.allocateDirect(64 * SIZE);
        volatile BlockingQueue<ByteBuffer> free;

        Requests(EventLoop loop, SocketChannel channel) throws IOException {
            super(loop, channel);
        }

        @Override
        void readable() throws IOException {
            int n;
            try {
                n = channel.read(in);
            } catch (IOException e) {
                n = -1;
            }
            if (n < 0) {
                requests.add(END);
                channel.close();
                return;
            }
            in.flip();
            while (in.remaining() >= SIZE) {
                requests.add(in.getLong());
            }
            in.compact();
        }

        @Override
        void written(ByteBuffer buffer) {
            free.add(buffer);
        }
    }
}
