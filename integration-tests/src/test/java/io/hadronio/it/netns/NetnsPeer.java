package io.hadronio.it.netns;

import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.zip.CRC32C;

/**
 * One side of {@link CrossHostTest}, run inside a network namespace:
 * <ul>
 * <li>{@code server ADDRESS}: accepts one connection, reads to end-of-stream, prints
 *     {@code RECEIVED <bytes> <crc>} (or {@code ERROR ...} when the read fails);</li>
 * <li>{@code client ADDRESS PORT BYTES}: connects, prints {@code TRANSPORTS ...}, writes
 *     BYTES seeded-random bytes, closes at once, prints {@code SENT <bytes> <crc>};</li>
 * <li>{@code idle-client ADDRESS PORT}: connects, prints {@code CONNECTED}, and waits to be killed;</li>
 * <li>{@code echo-server ADDRESS N}: accepts N connections, echoes each to its end-of-stream;</li>
 * <li>{@code many-clients ADDRESS PORT N}: N threads connect at the same moment (a pool), each
 *     writes a line and reads it back, and prints {@code CLIENTS <ok> <plain> <ucx>} (by the
 *     connection's transport), or {@code ERROR ...} when a connect or an echo failed.</li>
 * </ul>
 */
public final class NetnsPeer {
    private NetnsPeer() {
    }

    public static void main(String[] args) throws Exception {
        try {
            switch (args[0]) {
                case "server" -> server(args[1]);
                case "client" -> client(args[1], Integer.parseInt(args[2]), Long.parseLong(args[3]));
                case "idle-client" -> idleClient(args[1], Integer.parseInt(args[2]));
                case "echo-server" -> echoServer(args[1], Integer.parseInt(args[2]));
                case "many-clients" -> manyClients(args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]));
                default -> throw new IllegalArgumentException(args[0]);
            }
        } catch (Throwable t) {
            System.out.println("ERROR " + t);
            t.printStackTrace(System.out);
            System.exit(3);
        }
    }

    private static void server(String address) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(address, 0));
            System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            try (SocketChannel ch = server.accept()) {
                System.out.println("ACCEPTED " + ch.getRemoteAddress());
                CRC32C crc = new CRC32C();
                ByteBuffer buf = ByteBuffer.allocateDirect(64 * 1024);
                long total = 0;
                try {
                    int n;
                    while ((n = ch.read(buf)) >= 0) {
                        buf.flip();
                        crc.update(buf);
                        buf.clear();
                        total += n;
                    }
                    System.out.println("RECEIVED " + total + " " + Long.toHexString(crc.getValue()));
                } catch (java.io.IOException e) {
                    System.out.println("READ-FAILED " + e.getClass().getName() + ": " + e.getMessage());
                }
            }
        }
        System.out.flush();
    }

    private static SocketChannel connect(String address, int port) throws Exception {
        SocketChannel ch = SocketChannel.open();
        ch.connect(new InetSocketAddress(address, port));
        Object transports = ch.getClass().getMethod("transports").invoke(ch);
        System.out.println("TRANSPORTS " + transports);
        System.out.println("TRANSPORT " + ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT));
        return ch;
    }

    private static void client(String address, int port, long bytes) throws Exception {
        CRC32C crc = new CRC32C();
        Random random = new Random(bytes);
        SocketChannel ch = connect(address, port);
        byte[] chunk = new byte[100_003];
        long left = bytes;
        while (left > 0) {
            random.nextBytes(chunk);
            int n = (int) Math.min(chunk.length, left);
            ByteBuffer b = ByteBuffer.wrap(chunk, 0, n);
            crc.update(chunk, 0, n);
            while (b.hasRemaining()) {
                ch.write(b);
            }
            left -= n;
        }
        ch.close();
        System.out.println("SENT " + bytes + " " + Long.toHexString(crc.getValue()));
        System.out.flush();
    }

    private static void idleClient(String address, int port) throws Exception {
        SocketChannel ch = connect(address, port);
        System.out.println("CONNECTED " + ch.getLocalAddress());
        System.out.flush();
        Thread.sleep(120_000);
    }

    private static void echoServer(String address, int n) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(address, 0), n);
            System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            System.out.flush();
            List<Thread> echoes = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                SocketChannel ch = server.accept();
                Thread t = new Thread(() -> {
                    try (ch) {
                        ByteBuffer buf = ByteBuffer.allocate(4096);
                        while (ch.read(buf) >= 0) {
                            buf.flip();
                            while (buf.hasRemaining()) {
                                ch.write(buf);
                            }
                            buf.clear();
                        }
                    } catch (java.io.IOException e) {
                        System.out.println("ERROR echo: " + e);
                    }
                });
                t.start();
                echoes.add(t);
            }
            for (Thread t : echoes) {
                t.join();
            }
            System.out.println("ECHOED " + n);
        }
        System.out.flush();
    }

    private static void manyClients(String address, int port, int n) throws Exception {
        CountDownLatch go = new CountDownLatch(1);
        AtomicInteger ok = new AtomicInteger();
        AtomicInteger plain = new AtomicInteger();
        AtomicInteger ucx = new AtomicInteger();
        Queue<Throwable> failures = new ConcurrentLinkedQueue<>();
        List<Thread> clients = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            int id = i;
            Thread t = new Thread(() -> {
                try {
                    go.await();
                    try (SocketChannel ch = SocketChannel.open()) {
                        ch.connect(new InetSocketAddress(address, port));
                        String transport = String.valueOf(ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT));
                        (transport.startsWith("ucx") ? ucx : plain).incrementAndGet();
                        byte[] line = ("ping " + id + " over " + transport + "\n").getBytes(StandardCharsets.US_ASCII);
                        ByteBuffer out = ByteBuffer.wrap(line);
                        while (out.hasRemaining()) {
                            ch.write(out);
                        }
                        ByteBuffer in = ByteBuffer.allocate(line.length);
                        while (in.hasRemaining() && ch.read(in) >= 0) {
                            // until the echo is complete
                        }
                        if (!Arrays.equals(line, in.array())) {
                            throw new java.io.IOException("connection " + id + " (" + transport + ") echoed "
                                    + new String(in.array(), 0, in.position(), StandardCharsets.US_ASCII));
                        }
                        ok.incrementAndGet();
                    }
                } catch (Throwable e) {
                    failures.add(e);
                }
            });
            t.start();
            clients.add(t);
        }
        go.countDown();
        for (Thread t : clients) {
            t.join();
        }
        if (!failures.isEmpty()) {
            System.out.println("ERROR " + failures.size() + " of " + n + " failed, first: " + failures.peek());
            failures.peek().printStackTrace(System.out);
        }
        System.out.println("CLIENTS " + ok.get() + " " + plain.get() + " " + ucx.get());
        System.out.flush();
    }
}
