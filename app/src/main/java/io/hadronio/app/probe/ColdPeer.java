package io.hadronio.app.probe;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.time.Instant;
import java.util.Arrays;
import java.util.Locale;

/**
 * One side of {@code hadronio probe} (the cold-start probe), run in a fresh JVM: a server that
 * writes a greeting on every connection it accepts, or a client that times its JVM's first
 * connections. It uses the public NIO API only and nothing of the app (no picocli, no logging),
 * so that its JVM loads what a plain NIO program loads, and the probe can run it against an
 * older build's jar as well: the probe puts this class on the class path in front of the jar
 * under test.
 *
 * <pre>
 * server:  ColdPeer server                 prints "PORT p", serves until stdin closes
 * client:  ColdPeer client PORT N LAUNCHED  LAUNCHED: the probe's clock (epoch µs) just before it
 *                                           started this JVM; prints one RESULT line
 * </pre>
 *
 * <p>The client times {@code SocketChannel.open(address)} (open and connect in one call, as most
 * programs connect; the JVM's first one loads the provider) of each of N connections, and each
 * connection's time from just before that call to the server's whole greeting. Its RESULT line:
 * {@code first_connect_us} (the first call), {@code from_launch_us} (from the probe's clock at
 * launch to the first call's return: the JVM's start included), {@code greeting_median_us} (the
 * median over the N connections), and {@code channel} (the first channel's class: which provider
 * served it).
 */
public final class ColdPeer {
    /** The greeting the server writes first on every connection. */
    static final byte[] GREETING = "hello123".getBytes(java.nio.charset.StandardCharsets.US_ASCII);

    private ColdPeer() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length >= 1 && args[0].equals("server")) {
            serve();
        } else if (args.length == 4 && args[0].equals("client")) {
            connect(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Long.parseLong(args[3]));
        } else {
            System.err.println("usage: ColdPeer server | ColdPeer client PORT N LAUNCHED_EPOCH_MICROS");
            System.exit(2);
        }
    }

    private static void serve() throws IOException {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        System.out.flush();
        // the probe closes our stdin when it is done with us
        Thread watch = new Thread(() -> {
            try {
                while (System.in.read() >= 0) {
                    // nothing: only the end counts
                }
            } catch (IOException e) {
                // gone: end too
            }
            System.exit(0);
        }, "stdin-watch");
        watch.setDaemon(true);
        watch.start();
        while (true) {
            try (SocketChannel c = server.accept()) {
                ByteBuffer out = ByteBuffer.wrap(GREETING);
                while (out.hasRemaining()) {
                    c.write(out);
                }
            }
        }
    }

    private static void connect(int port, int n, long launchedMicros) throws IOException {
        InetSocketAddress address = new InetSocketAddress("127.0.0.1", port);
        ByteBuffer in = ByteBuffer.allocate(GREETING.length);
        long[] greeting = new long[n];
        long firstConnect = 0;
        long fromLaunch = 0;
        String channel = "";
        for (int i = 0; i < n; i++) {
            long before = System.nanoTime();
            try (SocketChannel c = SocketChannel.open(address)) {
                if (i == 0) {
                    firstConnect = System.nanoTime() - before;
                    Instant now = Instant.now();
                    fromLaunch = now.getEpochSecond() * 1_000_000L + now.getNano() / 1_000 - launchedMicros;
                    channel = c.getClass().getName();
                }
                in.clear();
                while (in.hasRemaining()) {
                    if (c.read(in) < 0) {
                        throw new IOException("the server closed before its whole greeting");
                    }
                }
                greeting[i] = System.nanoTime() - before;
            }
        }
        long[] sorted = greeting.clone();
        Arrays.sort(sorted);
        System.out.println(String.format(Locale.ROOT,
                "RESULT first_connect_us=%d from_launch_us=%d greeting_median_us=%.1f channel=%s",
                firstConnect / 1_000, fromLaunch, median(sorted) / 1_000.0, channel));
    }

    private static double median(long[] sorted) {
        int n = sorted.length;
        return n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }
}
