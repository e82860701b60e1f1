package io.hadronio.app.patterns;

import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The server of the file-transfer patterns, a thread per connection. The connection's first
 * byte says which:
 *
 * <ul>
 *   <li>{@link #SEND} (a broker serving a log segment to a consumer): the server answers with the
 *       file's size (8 bytes), then sends the whole file with {@link FileChannel#transferTo} for
 *       every byte the client sends, on a non-blocking channel in a Selector loop that waits for
 *       {@code OP_WRITE} whenever the socket takes no more (Kafka's shape).</li>
 *   <li>{@link #RECEIVE} (an upload): for every 8-byte length the client sends, the server
 *       stores that many bytes of the connection into a file with
 *       {@link FileChannel#transferFrom} on the blocking channel, then answers one byte.</li>
 * </ul>
 */
final class FileTransferServer {
    static final byte SEND = 'T';
    static final byte RECEIVE = 'F';
    // the file's byte at offset k * STRIDE is (byte) k, what the client checks
    static final int STRIDE = 4096;

    private final Path file;
    private final Path upload;

    FileTransferServer(Path file, long bytes) throws IOException {
        this.file = file;
        this.upload = file.resolveSibling(file.getFileName() + ".upload");
        prepare(file, bytes);
    }

    /** Serves until stopped, each connection in a thread of its own; {@code limit} > 0: that many, one at a time, then returns. */
    void serve(InetSocketAddress address, int limit) throws IOException {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(address, 64);
            System.out.println("listening on " + server.getLocalAddress() + " (provider "
                    + SelectorProvider.provider().getClass().getName() + ", file " + file + ", "
                    + Files.size(file) + " bytes)");
            System.out.flush();
            if (limit > 0) {
                for (int i = 0; i < limit; i++) {
                    handle(server.accept());
                }
                return;
            }
            while (true) {
                SocketChannel c = server.accept();
                Thread t = new Thread(() -> handle(c), "transfer");
                t.start();
            }
        }
    }

    private void handle(SocketChannel c) {
        try (c) {
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            ByteBuffer op = ByteBuffer.allocate(1);
            if (!readFully(c, op)) {
                return;
            }
            switch (op.get(0)) {
                case SEND -> send(c);
                case RECEIVE -> receive(c);
                default -> throw new IOException("unknown request " + op.get(0));
            }
        } catch (IOException e) {
            System.out.println("connection failed: " + e);
        }
    }

    /** Sends the file for every request byte until the client closes. */
    private void send(SocketChannel c) throws IOException {
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.READ); Selector selector = Selector.open()) {
            long size = f.size();
            ByteBuffer header = ByteBuffer.allocate(Long.BYTES).putLong(0, size);
            while (header.hasRemaining()) {
                c.write(header);
            }
            c.configureBlocking(false);
            SelectionKey key = c.register(selector, SelectionKey.OP_READ);
            ByteBuffer requests = ByteBuffer.allocate(64);
            long position = size;
            while (true) {
                selector.select();
                selector.selectedKeys().clear();
                if (position == size) {
                    requests.clear();
                    int n = c.read(requests);
                    if (n < 0) {
                        return;
                    }
                    if (n == 0) {
                        continue;
                    }
                    position = 0;
                }
                while (position < size) {
                    long n = f.transferTo(position, size - position, c);
                    if (n == 0) {
                        break;
                    }
                    position += n;
                }
                key.interestOps(position < size ? SelectionKey.OP_WRITE : SelectionKey.OP_READ);
            }
        }
    }

    /** Stores every announced upload into the upload file, answering one byte for each. */
    private void receive(SocketChannel c) throws IOException {
        ByteBuffer length = ByteBuffer.allocate(Long.BYTES);
        ByteBuffer ack = ByteBuffer.allocate(1);
        try (FileChannel f = FileChannel.open(upload, StandardOpenOption.CREATE, StandardOpenOption.WRITE)) {
            while (true) {
                length.clear();
                if (!readFully(c, length)) {
                    return;
                }
                long count = length.getLong(0);
                long position = 0;
                while (position < count) {
                    long n = f.transferFrom(c, position, count - position);
                    if (n == 0) {
                        throw new EOFException("the client closed within an upload");
                    }
                    position += n;
                }
                ack.clear();
                while (ack.hasRemaining()) {
                    c.write(ack);
                }
            }
        } finally {
            Files.deleteIfExists(upload);
        }
    }

    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                if (b.position() == 0) {
                    return false;
                }
                throw new EOFException();
            }
        }
        return true;
    }

    /** Writes {@code bytes} to {@code file} unless it has that size already. */
    private static void prepare(Path file, long bytes) throws IOException {
        if (Files.exists(file) && Files.size(file) == bytes) {
            return;
        }
        ByteBuffer page = ByteBuffer.allocateDirect(1 << 20);
        try (FileChannel f = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            for (long off = 0; off < bytes; ) {
                page.clear();
                int n = (int) Math.min(page.capacity(), bytes - off);
                for (int i = 0; i < n; i++) {
                    page.put(i, (byte) ((off + i) / STRIDE));
                }
                page.limit(n);
                while (page.hasRemaining()) {
                    off += f.write(page, off);
                }
            }
        }
    }
}
