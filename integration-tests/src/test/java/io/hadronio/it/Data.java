package io.hadronio.it;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.channels.WritableByteChannel;
import java.util.zip.CRC32;

/**
 * The byte streams tests send: byte {@code i} of a stream is a hash of {@code i}, so a
 * receiver checks every byte without holding a copy, and a lost, duplicated or
 * reordered chunk shows at once. A CRC32 over the stream summarises it in a peer's report.
 */
public final class Data {
    private Data() {
    }

    /** Byte {@code i} of every test stream. */
    public static byte at(long i) {
        long h = (i + 1) * 0x9E3779B97F4A7C15L;
        return (byte) (h >>> 56 ^ h >>> 29);
    }

    static byte[] bytes(long from, int n) {
        byte[] b = new byte[n];
        for (int k = 0; k < n; k++) {
            b[k] = at(from + k);
        }
        return b;
    }

    public static long crc(long n) {
        CRC32 crc = new CRC32();
        byte[] chunk = new byte[64 * 1024];
        for (long off = 0; off < n; off += chunk.length) {
            int len = (int) Math.min(chunk.length, n - off);
            for (int k = 0; k < len; k++) {
                chunk[k] = at(off + k);
            }
            crc.update(chunk, 0, len);
        }
        return crc.getValue();
    }

    /** Writes bytes {@code 0 .. n-1} of the stream with blocking writes of up to 256 KiB. */
    static void write(WritableByteChannel ch, long n) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
        long off = 0;
        while (off < n) {
            int len = (int) Math.min(buf.capacity(), n - off);
            buf.clear();
            for (int k = 0; k < len; k++) {
                buf.put(at(off + k));
            }
            buf.flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            off += len;
        }
    }

    /** What a reader counted: bytes, their CRC32, and the first offset that did not match the stream. */
    record Received(long count, long crc, long firstMismatch) {
        @Override
        public String toString() {
            return count + " " + crc + " " + firstMismatch;
        }

        static Received parse(String s) {
            String[] f = s.trim().split(" ");
            return new Received(Long.parseLong(f[0]), Long.parseLong(f[1]), Long.parseLong(f[2]));
        }
    }

    /** Reads until end-of-stream, checking every byte against the stream. */
    static Received readToEnd(ReadableByteChannel ch) throws IOException {
        ByteBuffer buf = ByteBuffer.allocate(100_003);
        CRC32 crc = new CRC32();
        long count = 0;
        long mismatch = -1;
        while (true) {
            buf.clear();
            int n = ch.read(buf);
            if (n < 0) {
                return new Received(count, crc.getValue(), mismatch);
            }
            byte[] a = buf.array();
            for (int k = 0; k < n; k++) {
                if (mismatch < 0 && a[k] != at(count + k)) {
                    mismatch = count + k;
                }
            }
            crc.update(a, 0, n);
            count += n;
        }
    }
}
