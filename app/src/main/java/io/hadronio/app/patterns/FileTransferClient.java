package io.hadronio.app.patterns;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.blocking.Endpoints;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * The client of {@link FileTransferServer}, on one blocking connection: fetches the server's
 * file again and again (a consumer of a broker that serves log segments with
 * {@code transferTo}), or uploads the same number of bytes again and again (the server stores
 * them with {@code transferFrom}). Each transfer is timed from its request to its last byte
 * (fetch) or to the server's answer (upload).
 */
final class FileTransferClient {
    private static final int BUFFER = 1 << 20;

    private FileTransferClient() {
    }

    /** Measured transfers: bytes, seconds, wrong bytes seen, the connection's path. */
    record Outcome(long bytes, double seconds, int transfers, long failures, String transport) {
        double megabytesPerSecond() {
            return bytes / seconds / 1e6;
        }
    }

    /** Fetches the file {@code warmups + transfers} times; the last {@code transfers} are measured. */
    static Outcome fetch(InetSocketAddress remote, int warmups, int transfers) throws IOException, InterruptedException {
        try (SocketChannel c = Endpoints.connect(remote)) {
            writeFully(c, ByteBuffer.allocate(1).put(0, FileTransferServer.SEND));
            ByteBuffer header = ByteBuffer.allocate(Long.BYTES);
            readFully(c, header);
            long size = header.getLong(0);
            ByteBuffer in = ByteBuffer.allocateDirect(BUFFER);
            ByteBuffer request = ByteBuffer.allocate(1);
            long failures = 0;
            long start = 0;
            for (int t = 0; t < warmups + transfers; t++) {
                if (t == warmups) {
                    MeasurementWindow.open();
                    start = System.nanoTime();
                }
                writeFully(c, request.clear());
                for (long received = 0; received < size; ) {
                    in.clear().limit((int) Math.min(in.capacity(), size - received));
                    if (c.read(in) < 0) {
                        throw new EOFException("the server closed within a transfer");
                    }
                    long first = (received + FileTransferServer.STRIDE - 1) / FileTransferServer.STRIDE
                            * FileTransferServer.STRIDE;
                    for (long off = first; off < received + in.position(); off += FileTransferServer.STRIDE) {
                        if (in.get((int) (off - received)) != (byte) (off / FileTransferServer.STRIDE)) {
                            failures++;
                        }
                    }
                    received += in.position();
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            return new Outcome(size * transfers, seconds, transfers, failures, io.hadronio.app.Transports.path(c));
        }
    }

    /** Uploads {@code bytes} {@code warmups + transfers} times; the last {@code transfers} are measured. */
    static Outcome upload(InetSocketAddress remote, long bytes, int warmups, int transfers)
            throws IOException, InterruptedException {
        // connects as soon as the server listens: hadronio evaluate starts a JDK client with its server
        try (SocketChannel c = Endpoints.connect(remote)) {
            writeFully(c, ByteBuffer.allocate(1).put(0, FileTransferServer.RECEIVE));
            ByteBuffer out = ByteBuffer.allocateDirect(BUFFER);
            ByteBuffer length = ByteBuffer.allocate(Long.BYTES);
            ByteBuffer ack = ByteBuffer.allocate(1);
            long start = 0;
            for (int t = 0; t < warmups + transfers; t++) {
                if (t == warmups) {
                    MeasurementWindow.open();
                    start = System.nanoTime();
                }
                writeFully(c, length.clear().putLong(0, bytes));
                for (long sent = 0; sent < bytes; ) {
                    out.clear().limit((int) Math.min(out.capacity(), bytes - sent));
                    sent += writeFully(c, out);
                }
                readFully(c, ack.clear());
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            return new Outcome(bytes * transfers, seconds, transfers, 0, io.hadronio.app.Transports.path(c));
        }
    }

    private static int writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        int n = b.remaining();
        while (b.hasRemaining()) {
            c.write(b);
        }
        return n;
    }

    private static void readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                throw new EOFException("the server closed the connection");
            }
        }
    }
}
