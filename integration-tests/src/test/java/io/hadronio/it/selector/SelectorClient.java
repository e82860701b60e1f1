package io.hadronio.it.selector;

import io.hadronio.HadronioProvider;
import io.hadronio.it.Data;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.zip.CRC32;

/**
 * A peer JVM: many non-blocking connections on one selector, in one thread, to a
 * {@link SelectorEchoServer}.
 *
 * <p>Modes:
 * <ul>
 * <li>{@code echo port connections messages size...}: connects every connection
 *     (non-blocking connect, {@code OP_CONNECT}, {@code finishConnect}); then each sends
 *     {@code messages} writes, connection {@code i}'s k-th of size
 *     {@code size[(i + k) % sizes]}, as one stream of {@link Data} bytes (offset per
 *     connection), and reads the echo, checking every byte and its CRC32; then closes.
 * <li>{@code hold ...}: the same, but after the exchange it prints {@code HOLDING} and
 *     keeps every connection open, blocked in {@code select()}, until a {@code GO} line.
 * <li>{@code idle-reader port}: one blocking connection; echoes one byte, prints
 *     {@code IDLE}, then blocks in {@code read()}.
 * </ul>
 * Prints {@code CONFIG sliceSize sliceCount} (0 0 on the JDK's provider), {@code BASELINE rss
 * fds} (selector open, no connection), {@code CONNECTED n rss fds}, {@code EXCHANGED n bytes
 * badConnections}, {@code HOLDING rss fds}, {@code DONE}; any failure prints {@code ERROR ...}
 * and exits with 3.
 */
public final class SelectorClient {
    private static volatile boolean go;
    // scratch for the expected CRCs (one thread): garbage here would show as memory per connection
    private static final byte[] CHUNK = new byte[64 * 1024];

    private SelectorClient() {
    }

    /** One connection's stream: what it sends and what came back. */
    private static final class Conn {
        final SocketChannel ch;
        final long base;
        final int[] messages;
        final long total;
        int message;        // index of the message being written
        long messageSent;   // bytes of it written
        long sent;
        long received;
        long firstMismatch = -1;
        final CRC32 crc = new CRC32();

        Conn(SocketChannel ch, long base, int[] messages) {
            this.ch = ch;
            this.base = base;
            this.messages = messages;
            long t = 0;
            for (int m : messages) {
                t += m;
            }
            this.total = t;
        }

        boolean ok() {
            return received == total && firstMismatch < 0 && crc.getValue() == expectedCrc();
        }

        long expectedCrc() {
            CRC32 c = new CRC32();
            byte[] chunk = CHUNK;
            for (long off = 0; off < total; off += chunk.length) {
                int len = (int) Math.min(chunk.length, total - off);
                for (int k = 0; k < len; k++) {
                    chunk[k] = Data.at(base + off + k);
                }
                c.update(chunk, 0, len);
            }
            return c.getValue();
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) {
        try {
            if (SelectorProvider.provider() instanceof HadronioProvider p) {
                say("CONFIG " + p.config().sliceSize() + " " + p.config().sliceCount());
            } else {
                say("CONFIG 0 0");
            }
            watchStdin();
            InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(), Integer.parseInt(args[1]));
            switch (args[0]) {
                case "echo", "hold" -> {
                    int connections = Integer.parseInt(args[2]);
                    int messages = Integer.parseInt(args[3]);
                    int[] sizes = new int[args.length - 4];
                    for (int i = 0; i < sizes.length; i++) {
                        sizes[i] = Integer.parseInt(args[4 + i]);
                    }
                    run(server, connections, messages, sizes, args[0].equals("hold"));
                }
                case "idle-reader" -> idleReader(server);
                default -> throw new IllegalArgumentException("unknown mode " + args[0]);
            }
            say("DONE");
            System.exit(0);
        } catch (Throwable t) {
            die(t);
        }
    }

    /** A peer's failure: {@code ERROR ...} and the stack trace on stdout, exit status 3. */
    static void die(Throwable t) {
        say("ERROR " + t);
        t.printStackTrace(System.out);
        System.out.flush();
        System.exit(3);
    }

    private static void watchStdin() {
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("GO")) {
                        go = true;
                        if (selector != null) {
                            selector.wakeup();
                        }
                    }
                }
            } catch (IOException e) {
                // fall through: the test is gone
            }
            System.exit(0);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
    }

    private static volatile Selector selector;

    /** What {@link #run} exchanged: connections complete, bytes echoed, connections whose echo was wrong. */
    record Exchanged(int complete, long bytes, int bad) {
    }

    /**
     * Connects {@code connections} at once, exchanges on all of them, and closes them all
     * (with {@code hold}: after a {@code GO} line); prints the lines of the class comment.
     */
    static Exchanged run(InetSocketAddress server, int connections, int messages, int[] sizes, boolean hold)
            throws IOException {
        Selector sel = Selector.open();
        selector = sel;
        say("BASELINE " + ProcStats.self());
        List<Conn> all = new ArrayList<>();
        int connected = 0;
        for (int i = 0; i < connections; i++) {
            SocketChannel ch = SocketChannel.open();
            ch.configureBlocking(false);
            int[] m = new int[messages];
            for (int k = 0; k < messages; k++) {
                m[k] = sizes[(i + k) % sizes.length];
            }
            Conn c = new Conn(ch, (long) i * 1_000_003L, m);
            all.add(c);
            if (ch.connect(server)) {
                connected++;
                ch.register(sel, 0, c);
            } else {
                ch.register(sel, SelectionKey.OP_CONNECT, c);
            }
        }
        while (connected < connections) {
            sel.select();
            for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                if (key.isConnectable()) {
                    if (!((SocketChannel) key.channel()).finishConnect()) {
                        throw new AssertionError("OP_CONNECT but finishConnect() returned false");
                    }
                    key.interestOps(0);
                    connected++;
                }
            }
        }
        say("CONNECTED " + connected + " " + ProcStats.self());

        for (Conn c : all) {
            c.ch.keyFor(sel).interestOps(SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        }
        ByteBuffer out = ByteBuffer.allocateDirect(1 << 20);
        ByteBuffer in = ByteBuffer.allocate(256 * 1024);
        int complete = 0;
        long bytes = 0;
        while (complete < connections) {
            sel.select();
            for (Iterator<SelectionKey> it = sel.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                Conn c = (Conn) key.attachment();
                if (key.isWritable()) {
                    // the rest of the current message, in one write
                    int len = (int) Math.min(out.capacity(), c.messages[c.message] - c.messageSent);
                    out.clear().limit(len);
                    for (int k = 0; k < len; k++) {
                        out.put(k, Data.at(c.base + c.sent + k));
                    }
                    int n = c.ch.write(out);
                    if (n == 0) {
                        throw new AssertionError("OP_WRITE but write() returned 0");
                    }
                    c.sent += n;
                    c.messageSent += n;
                    if (c.messageSent == c.messages[c.message]) {
                        c.message++;
                        c.messageSent = 0;
                    }
                    if (c.sent == c.total) {
                        key.interestOps(key.interestOps() & ~SelectionKey.OP_WRITE);
                    }
                }
                if (key.isReadable()) {
                    in.clear();
                    int n = c.ch.read(in);
                    if (n <= 0) {
                        throw new AssertionError("OP_READ but read() returned " + n + " after "
                                + c.received + " of " + c.total + " bytes");
                    }
                    byte[] a = in.array();
                    for (int k = 0; k < n; k++) {
                        if (c.firstMismatch < 0 && a[k] != Data.at(c.base + c.received + k)) {
                            c.firstMismatch = c.received + k;
                        }
                    }
                    c.crc.update(a, 0, n);
                    c.received += n;
                    bytes += n;
                    if (c.received >= c.total) {
                        key.interestOps(0);
                        complete++;
                    }
                }
            }
        }
        int bad = 0;
        for (Conn c : all) {
            if (!c.ok()) {
                bad++;
                say("BAD " + c.ch + " received " + c.received + " of " + c.total + " first mismatch "
                        + c.firstMismatch);
            }
        }
        say("EXCHANGED " + complete + " " + bytes + " " + bad);
        if (hold) {
            say("HOLDING " + ProcStats.self());
            while (!go) {
                sel.select();
                sel.selectedKeys().clear();
            }
        }
        for (Conn c : all) {
            c.ch.close();
        }
        sel.close();
        return new Exchanged(complete, bytes, bad);
    }

    private static void idleReader(InetSocketAddress server) throws IOException {
        try (SocketChannel ch = SocketChannel.open(server)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.write(b);
            b.clear();
            while (b.hasRemaining()) {
                if (ch.read(b) < 0) {
                    throw new IOException("end of stream");
                }
            }
            say("IDLE");
            b.clear();
            ch.read(b); // blocks: the server sends nothing more
        }
    }
}
