package io.hadronio.it.selector;

import static io.hadronio.it.selector.SelectorClient.say;

import io.hadronio.it.Data;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;

/**
 * The client JVM of {@link ConnectionChurnTest}: opens, uses and closes connections to a
 * {@link SelectorEchoServer} on the commands of its stdin, one command at a time, on the
 * main thread. Every connection sends {@value #MESSAGE} bytes of {@link Data} and reads
 * them back, checking every byte. Commands:
 * <ul>
 * <li>{@code SEQ n}: n connections one after the other, each a blocking
 *     {@code SocketChannel.open(server)}, write, read the echo, close. Prints
 *     {@code SEQ-DONE n ok micros}: connections made, those whose echo was right, and the
 *     time from the first open to the last close.</li>
 * <li>{@code CONC n wave}: n connections in waves of {@code wave} (all at once when
 *     {@code wave >= n}); a wave is {@link SelectorClient#run}: every connection of it
 *     connected at once (non-blocking, on one selector), then each exchanges its message,
 *     then all are closed. Prints {@code CONC-DONE n ok micros}.</li>
 * <li>{@code LONG}: one connection that echoes its message again and again until it
 *     reports a UCX transport (at most {@value #LONG_MILLIS} ms), then closes. Prints
 *     {@code LONG-DONE transport}. In upgrade mode it makes what a moved connection needs
 *     (the endpoint to the peer's worker) before the baseline.</li>
 * <li>{@code RESOURCES}: prints {@code RESOURCES} and the {@link ResourceFigures}.</li>
 * </ul>
 * Argument: the server's port. Prints {@code PROVIDER class} first; exits when stdin closes.
 * A failure prints {@code ERROR ...} and exits with 3.
 */
public final class ChurnClient {
    static final int MESSAGE = 100;
    static final int LONG_MILLIS = 10_000;
    // connections made so far: each one sends its own part of the stream
    private static long made;

    private ChurnClient() {
    }

    public static void main(String[] args) {
        try {
            InetSocketAddress server = new InetSocketAddress(InetAddress.getLoopbackAddress(),
                    Integer.parseInt(args[0]));
            say("PROVIDER " + SelectorProvider.provider().getClass().getName());
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = stdin.readLine()) != null) {
                String[] c = line.trim().split(" ");
                switch (c[0]) {
                    case "SEQ" -> sequential(server, Integer.parseInt(c[1]));
                    case "CONC" -> concurrent(server, Integer.parseInt(c[1]), Integer.parseInt(c[2]));
                    case "LONG" -> say("LONG-DONE " + longConnection(server));
                    case "RESOURCES" -> say("RESOURCES " + ResourceFigures.take());
                    default -> throw new IllegalArgumentException("unknown command " + line);
                }
            }
            System.exit(0);
        } catch (Throwable t) {
            SelectorClient.die(t);
        }
    }

    private static void sequential(InetSocketAddress server, int n) throws Exception {
        ByteBuffer out = ByteBuffer.allocate(MESSAGE);
        ByteBuffer in = ByteBuffer.allocate(MESSAGE);
        int ok = 0;
        long start = System.nanoTime();
        for (int i = 0; i < n; i++) {
            long base = made++ * MESSAGE;
            out.clear();
            for (int k = 0; k < MESSAGE; k++) {
                out.put(k, Data.at(base + k));
            }
            in.clear();
            try (SocketChannel ch = SocketChannel.open(server)) {
                while (out.hasRemaining()) {
                    ch.write(out);
                }
                while (in.hasRemaining() && ch.read(in) >= 0) {
                    // until the whole echo is in, or end-of-stream
                }
            }
            boolean good = !in.hasRemaining();
            for (int k = 0; good && k < MESSAGE; k++) {
                good = in.get(k) == Data.at(base + k);
            }
            if (good) {
                ok++;
            } else {
                say("BAD connection " + i + ": echo " + in.position() + " of " + MESSAGE + " bytes or wrong bytes");
            }
        }
        say("SEQ-DONE " + n + " " + ok + " " + (System.nanoTime() - start) / 1000);
    }

    private static String longConnection(InetSocketAddress server) throws Exception {
        ByteBuffer out = ByteBuffer.allocate(MESSAGE);
        ByteBuffer in = ByteBuffer.allocate(MESSAGE);
        long deadline = System.nanoTime() + LONG_MILLIS * 1_000_000L;
        try (SocketChannel ch = SocketChannel.open(server)) {
            String transport = io.hadronio.it.ChannelPath.of(ch);
            while (!transport.startsWith("ucx") && System.nanoTime() - deadline < 0) {
                long base = made++ * MESSAGE;
                out.clear();
                for (int k = 0; k < MESSAGE; k++) {
                    out.put(k, Data.at(base + k));
                }
                in.clear();
                while (out.hasRemaining()) {
                    ch.write(out);
                }
                while (in.hasRemaining()) {
                    if (ch.read(in) < 0) {
                        throw new java.io.EOFException("the echo server ended the long connection");
                    }
                }
                for (int k = 0; k < MESSAGE; k++) {
                    if (in.get(k) != Data.at(base + k)) {
                        throw new IllegalStateException("wrong echo on the long connection at byte " + (base + k));
                    }
                }
                Thread.sleep(1);
                transport = io.hadronio.it.ChannelPath.of(ch);
            }
            return transport;
        }
    }

    private static void concurrent(InetSocketAddress server, int n, int wave) throws Exception {
        int ok = 0;
        long start = System.nanoTime();
        for (int done = 0; done < n; done += wave) {
            int w = Math.min(wave, n - done);
            SelectorClient.Exchanged e = SelectorClient.run(server, w, 1, new int[] {MESSAGE}, false);
            if (e.complete() == w && e.bytes() == (long) w * MESSAGE) {
                ok += w - e.bad();
            }
        }
        say("CONC-DONE " + n + " " + ok + " " + (System.nanoTime() - start) / 1000);
    }
}
