package io.hadronio.app.patterns;

import java.io.IOException;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * One connection of an {@link EventLoop}, as a framework's channel: any thread may
 * {@link #write} (the buffer is queued and the loop flushes it in order); the loop reads
 * ({@link #readable}) and writes. What is left of a write waits for {@code OP_WRITE}.
 */
abstract class Session {
    final SocketChannel channel;
    private final EventLoop loop;
    private final SelectionKey key;
    // buffers queued by application threads, in order
    private final Queue<ByteBuffer> outbound = new ConcurrentLinkedQueue<>();
    // the buffer the loop is writing (loop thread only)
    private ByteBuffer current;

    /** A session on {@code channel} (connected, blocking), which it makes non-blocking and registers with {@code loop}. */
    Session(EventLoop loop, SocketChannel channel) throws IOException {
        this.loop = loop;
        this.channel = channel;
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        channel.configureBlocking(false);
        key = channel.register(loop.selector(), SelectionKey.OP_READ, this);
    }

    /** From any thread: queues {@code buffer} (which the caller leaves alone until {@link #written}). */
    final void write(ByteBuffer buffer) {
        outbound.add(buffer);
        loop.submit(this);
    }

    /** Loop thread: writes what is queued until done or the channel takes no more. */
    final void flush() throws IOException {
        ByteBuffer b = current;
        while (true) {
            if (b == null) {
                b = outbound.poll();
                if (b == null) {
                    break;
                }
            }
            channel.write(b);
            if (b.hasRemaining()) {
                break;
            }
            written(b);
            b = null;
        }
        current = b;
        int ops = b == null ? SelectionKey.OP_READ : SelectionKey.OP_READ | SelectionKey.OP_WRITE;
        if (key.interestOps() != ops) {
            key.interestOps(ops);
        }
    }

    /** Loop thread: the channel has bytes (or its end). */
    abstract void readable() throws IOException;

    /** Loop thread: {@code buffer} has been written completely; the caller may use it again. */
    void written(ByteBuffer buffer) {
    }
}
