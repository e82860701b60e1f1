package io.hadronio.app.blocking;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;

/**
 * One non-blocking channel driven by its own {@link Selector}, as an event loop drives it:
 * a read or write that cannot go on waits in {@code select()} for the channel to become
 * ready, then goes on. Allocates nothing per operation.
 */
final class SelectorLoop implements AutoCloseable {
    private final SocketChannel channel;
    private final Selector selector;
    private final SelectionKey key;

    /** Puts {@code channel} in non-blocking mode and registers it with a new selector. */
    SelectorLoop(SocketChannel channel) throws IOException {
        this.channel = channel;
        channel.configureBlocking(false);
        this.selector = Selector.open();
        this.key = channel.register(selector, 0);
    }

    /** Reads until {@code buffer} is full, waiting for {@code OP_READ} before every read (event-loop style). */
    void readFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            awaitReady(SelectionKey.OP_READ);
            readAvailable(buffer);
        }
    }

    /** Reads what the channel has now, up to {@code buffer}'s limit; end-of-stream is an {@link EOFException}. */
    int readAvailable(ByteBuffer buffer) throws IOException {
        int n = channel.read(buffer);
        if (n < 0) {
            throw new EOFException("peer closed the connection");
        }
        return n;
    }

    /** Writes all of {@code buffer}: directly while the channel takes bytes, through {@code OP_WRITE} when it does not. */
    void writeFully(ByteBuffer buffer) throws IOException {
        while (buffer.hasRemaining()) {
            if (channel.write(buffer) == 0 && buffer.hasRemaining()) {
                awaitReady(SelectionKey.OP_WRITE);
            }
        }
    }

    /** Selects until the key reports {@code op} ready. */
    void awaitReady(int op) throws IOException {
        if (key.interestOps() != op) {
            key.interestOps(op);
        }
        while (true) {
            int n = selector.select();
            if (n > 0 || !selector.selectedKeys().isEmpty()) {
                selector.selectedKeys().clear();
                if ((key.readyOps() & op) != 0) {
                    return;
                }
            }
        }
    }

    @Override
    public void close() throws IOException {
        selector.close();
    }
}
