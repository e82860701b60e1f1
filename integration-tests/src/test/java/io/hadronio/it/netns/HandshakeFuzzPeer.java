package io.hadronio.it.netns;

import io.hadronio.HadronioSocketOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.Iterator;
import java.util.Random;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The hadroNIO sides of {@link HandshakeFuzzTest}, each run in its own network namespace:
 * <ul>
 * <li>{@code server ADDRESS}: the live server under attack. A non-blocking echo server on
 *     hadroNIO's selector, written as plain NIO applications are: it accepts every
 *     connection, echoes what it reads (with back-pressure) and closes when its client
 *     has finished sending. Prints {@code PID n} and {@code PORT n}; answers {@code STATS}
 *     on stdin with {@code STATS open accepted ucx tcp heapKiB directKiB directBuffers}
 *     (after a full GC), and {@code PEAKS} with {@code PEAKS handshakes connections memoryKiB}:
 *     the most handshakes in progress, UCX connection halves and their native memory the
 *     provider held at once since the last {@code PEAKS} (sampled every 5 ms); an I/O error on one connection (a client that reset it) prints
 *     {@code CONN_FAILED ...} and closes only that connection.</li>
 * <li>{@code client}: a real hadroNIO client, driven by its stdin: {@code ECHO HOST PORT
 *     BYTES} connects, writes BYTES random bytes, reads them back, closes, and prints
 *     {@code ECHO-OK <transport>} (or {@code ECHO-FAIL <why>}).</li>
 * </ul>
 * Both exit when their stdin closes.
 */
public final class HandshakeFuzzPeer {
    private static final AtomicLong OPEN = new AtomicLong();
    private static final AtomicLong ACCEPTED = new AtomicLong();
    private static final AtomicLong UCX = new AtomicLong();
    private static final AtomicLong TCP = new AtomicLong();

    // the most the provider held at once since the last PEAKS command (see samplePeaks)
    private static final AtomicLong PEAK_HANDSHAKES = new AtomicLong();
    private static final AtomicLong PEAK_CONNECTIONS = new AtomicLong();
    private static final AtomicLong PEAK_MEMORY = new AtomicLong();

    private HandshakeFuzzPeer() {
    }

    /**
     * What hostile handshakes make the server hold while they last, as the provider counts
     * it: handshakes in progress, UCX connection halves and their memory (receive areas).
     * A diagnostic printed by the test; a sample asks the control thread, so it is taken
     * every few milliseconds, not on every change.
     */
    private static void samplePeaks() {
        if (!(java.nio.channels.spi.SelectorProvider.provider() instanceof io.hadronio.HadronioProvider p)) {
            return;
        }
        while (true) {
            java.util.Map<String, Long> r = p.resources();
            PEAK_HANDSHAKES.accumulateAndGet(r.getOrDefault("control.handshakes", 0L), Math::max);
            PEAK_CONNECTIONS.accumulateAndGet(r.getOrDefault("connections.memory", 0L), Math::max);
            PEAK_MEMORY.accumulateAndGet(r.getOrDefault("connections.memory.bytes", 0L), Math::max);
            try {
                Thread.sleep(5);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        try {
            switch (args[0]) {
                case "server" -> server(args[1]);
                case "client" -> client();
                default -> throw new IllegalArgumentException(args[0]);
            }
        } catch (Throwable t) {
            say("FATAL " + t);
            t.printStackTrace(System.out);
            System.exit(3);
        }
    }

    /** A connection's echo that did not fit yet. */
    private static final class Conn {
        ByteBuffer pending;
    }

    private static void server(String address) throws Exception {
        Selector selector = Selector.open();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(address, 0), 4096);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("PEAKS")) {
                        say("PEAKS " + PEAK_HANDSHAKES.getAndSet(0) + " " + PEAK_CONNECTIONS.getAndSet(0) + " "
                                + PEAK_MEMORY.getAndSet(0) / 1024);
                    } else if (line.trim().equals("STATS")) {
                        System.gc();
                        long heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1024;
                        long direct = 0;
                        long buffers = 0;
                        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
                            if (pool.getName().equals("direct")) {
                                direct = pool.getMemoryUsed() / 1024;
                                buffers = pool.getCount();
                            }
                        }
                        say("STATS " + OPEN.get() + " " + ACCEPTED.get() + " " + UCX.get() + " " + TCP.get() + " "
                                + heap + " " + direct + " " + buffers);
                    }
                }
            } catch (IOException e) {
                say("FATAL stdin " + e);
            }
            System.exit(0);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        Thread.ofPlatform().daemon().name("peaks").start(HandshakeFuzzPeer::samplePeaks);
        say("PID " + ProcessHandle.current().pid());
        say("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());

        ByteBuffer buf = ByteBuffer.allocateDirect(256 * 1024);
        while (true) {
            selector.select();
            for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                SelectionKey key = it.next();
                it.remove();
                if (key.channel() == server) {
                    SocketChannel ch;
                    while ((ch = server.accept()) != null) {
                        ACCEPTED.incrementAndGet();
                        OPEN.incrementAndGet();
                        String transport = ch.getOption(HadronioSocketOptions.TRANSPORT);
                        (transport.startsWith("ucx:") ? UCX : TCP).incrementAndGet();
                        ch.configureBlocking(false);
                        ch.register(selector, SelectionKey.OP_READ, new Conn());
                    }
                    continue;
                }
                SocketChannel ch = (SocketChannel) key.channel();
                Conn c = (Conn) key.attachment();
                try {
                    if (key.isWritable()) {
                        ch.write(c.pending);
                        if (!c.pending.hasRemaining()) {
                            c.pending = null;
                            key.interestOps(SelectionKey.OP_READ);
                        }
                    } else if (key.isReadable()) {
                        buf.clear();
                        int n = ch.read(buf);
                        if (n < 0) {
                            close(ch);
                            continue;
                        }
                        buf.flip();
                        ch.write(buf);
                        if (buf.hasRemaining()) {
                            // back-pressure: keep the rest, stop reading until it is out
                            c.pending = ByteBuffer.allocate(buf.remaining()).put(buf).flip();
                            key.interestOps(SelectionKey.OP_WRITE);
                        }
                    }
                } catch (IOException e) {
                    say("CONN_FAILED " + e);
                    close(ch);
                }
            }
        }
    }

    private static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            say("CONN_FAILED close " + e);
        }
        OPEN.decrementAndGet();
    }

    private static void client() throws IOException {
        Random random = new Random(7);
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            say("READY");
            String line;
            while ((line = in.readLine()) != null) {
                String[] f = line.trim().split(" ");
                if (!f[0].equals("ECHO")) {
                    continue;
                }
                try {
                    say("ECHO-OK " + echo(new InetSocketAddress(f[1], Integer.parseInt(f[2])),
                            Integer.parseInt(f[3]), random));
                } catch (IOException | RuntimeException e) {
                    say("ECHO-FAIL " + e);
                }
            }
        }
    }

    /** One connection: BYTES random bytes there and back; the connection's transport. */
    private static String echo(InetSocketAddress server, int bytes, Random random) throws IOException {
        byte[] sent = new byte[bytes];
        random.nextBytes(sent);
        try (SocketChannel ch = SocketChannel.open(server)) {
            String transport = ch.getOption(HadronioSocketOptions.TRANSPORT);
            ByteBuffer out = ByteBuffer.wrap(sent);
            ByteBuffer back = ByteBuffer.allocate(bytes);
            // the echo server answers as it reads: write and read in turns, a slice at a time
            while (back.hasRemaining()) {
                if (out.hasRemaining()) {
                    ByteBuffer slice = out.slice(out.position(), Math.min(out.remaining(), 16 * 1024));
                    while (slice.hasRemaining()) {
                        ch.write(slice);
                    }
                    out.position(out.position() + slice.position());
                }
                while (back.position() < out.position()) {
                    if (ch.read(back) < 0) {
                        throw new IOException("end-of-stream after " + back.position() + " of " + bytes + " bytes");
                    }
                }
            }
            if (!Arrays.equals(sent, back.array())) {
                throw new IOException("the echo differs from what was sent");
            }
            return transport;
        }
    }
}
