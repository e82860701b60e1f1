package io.hadronio.it;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.Semaphore;
import java.util.stream.Collectors;

/**
 * The other JVM of the integration tests: plain NIO application code, run with or
 * without hadroNIO. It reports on stdout, one line per event, and takes {@code GO}
 * lines on stdin.
 *
 * <p>Modes (first argument):
 * <ul>
 * <li>{@code server}: listens on 127.0.0.1 (port printed as {@code PORT n}); every accepted
 *     connection starts with a 9-byte command (a letter and a big-endian long):
 *     <ul>
 *     <li>{@code E}: echo until end-of-stream, then close;
 *     <li>{@code S n}: write n stream bytes, close at once, print {@code CLOSED};
 *     <li>{@code X n}: as S, then exit the JVM at once;
 *     <li>{@code H n}: write n stream bytes, shutdownOutput, print {@code SHUTDOWN}, then read to
 *         end-of-stream and print {@code RECEIVED count crc mismatch};
 *     <li>{@code Q}: print {@code QUIET}, read nothing until a {@code GO} line arrives on stdin, then
 *         read to end-of-stream and print {@code RECEIVED ...};
 *     <li>{@code P n}: read n bytes, print {@code STOPPED}, never read again;
 *     <li>{@code T}: print {@code TRANSPORTS t}, send t (int length + UTF-8), then echo.
 *     </ul>
 * <li>{@code client port n [E]}: connects to 127.0.0.1:port (with E: a Peer server, sent the
 *     echo command first), prints {@code CONNECTED localPort} and {@code TRANSPORTS t},
 *     sends n stream bytes, shuts its output down, reads the echo, prints {@code RECEIVED ...}.
 * <li>{@code plain-client port garbage|silent}: a {@link Socket} that sends garbage or nothing
 *     and then reads; prints {@code EOF n}, {@code RESET msg} or {@code TIMEOUT}.
 * <li>{@code selftest}: prints {@code PROVIDER class}, echoes 1 MiB between two channels of
 *     this JVM, prints {@code CHANNEL class} and {@code OK}; any failure prints {@code ERROR ...}.
 * <li>{@code options}: prints {@code OPTIONS} and {@code SERVER_OPTIONS}, the sorted option names.
 * <li>{@code write-exit port n return|exit}: connects, writes n bytes of {@link Data}, prints
 *     {@code WRITTEN}, and ends without closing the channel: by returning from main, or by
 *     {@code System.exit(0)}.
 * <li>{@code contract}: listens on 127.0.0.1 (port printed as {@code PORT n}) and runs either role
 *     of a {@link Contract} case on the commands of its stdin (see {@link Contract#peer()}).
 * </ul>
 */
public final class Peer {
    private static final Semaphore GO = new Semaphore(0);

    private Peer() {
    }

    public static void main(String[] args) throws Exception {
        try {
            switch (args[0]) {
                case "server" -> server();
                case "client" -> client(Integer.parseInt(args[1]), Long.parseLong(args[2]), args.length > 3);
                case "plain-client" -> plainClient(Integer.parseInt(args[1]), args[2].equals("garbage"));
                case "selftest" -> selftest();
                case "options" -> options();
                case "write-exit" -> writeAndExit(Integer.parseInt(args[1]), Long.parseLong(args[2]), args[3]);
                case "contract" -> Contract.peer();
                default -> throw new IllegalArgumentException("unknown mode " + args[0]);
            }
        } catch (Throwable t) {
            say("ERROR " + describe(t));
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(3);
        }
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(sb.isEmpty() ? "" : " <- ").append(c.getClass().getName()).append(": ").append(c.getMessage());
        }
        return sb.toString();
    }

    // ---- server ------------------------------------------------------------------------------

    private static void server() throws Exception {
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        Thread acceptor = new Thread(() -> {
            while (true) {
                try {
                    SocketChannel ch = server.accept();
                    Thread t = new Thread(() -> serve(ch), "conn");
                    t.setDaemon(true);
                    t.start();
                } catch (IOException e) {
                    say("ERROR accept: " + describe(e));
                    return;
                }
            }
        }, "acceptor");
        acceptor.start();
        say("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.trim().equals("GO")) {
                GO.release();
            }
        }
        // the test closed our stdin: it is done with us
        System.exit(0);
    }

    private static void serve(SocketChannel ch) {
        try {
            ByteBuffer header = ByteBuffer.allocate(9);
            while (header.hasRemaining()) {
                if (ch.read(header) < 0) {
                    say("ERROR no command");
                    ch.close();
                    return;
                }
            }
            char command = (char) header.get(0);
            long n = header.getLong(1);
            switch (command) {
                case 'E' -> {
                    echo(ch);
                    ch.close();
                }
                case 'S', 'X' -> {
                    Data.write(ch, n);
                    ch.close();
                    say("CLOSED");
                    if (command == 'X') {
                        System.exit(0);
                    }
                }
                case 'H' -> {
                    Data.write(ch, n);
                    ch.shutdownOutput();
                    say("SHUTDOWN");
                    say("RECEIVED " + Data.readToEnd(ch));
                    ch.close();
                }
                case 'Q' -> {
                    say("QUIET");
                    GO.acquireUninterruptibly();
                    say("RECEIVED " + Data.readToEnd(ch));
                    ch.close();
                }
                case 'P' -> {
                    ByteBuffer buf = ByteBuffer.allocate((int) Math.min(n, 1 << 20));
                    long left = n;
                    while (left > 0) {
                        buf.clear().limit((int) Math.min(buf.capacity(), left));
                        int r = ch.read(buf);
                        if (r < 0) {
                            break;
                        }
                        left -= r;
                    }
                    say("STOPPED");
                    Thread.sleep(Long.MAX_VALUE);
                }
                case 'T' -> {
                    String t = transports(ch);
                    say("TRANSPORTS " + t);
                    byte[] b = t.getBytes(StandardCharsets.UTF_8);
                    ByteBuffer out = ByteBuffer.allocate(4 + b.length).putInt(b.length).put(b).flip();
                    while (out.hasRemaining()) {
                        ch.write(out);
                    }
                    echo(ch);
                    ch.close();
                }
                default -> say("ERROR unknown command " + command);
            }
        } catch (Exception e) {
            say("ERROR " + describe(e));
        }
    }

    private static void echo(SocketChannel ch) throws IOException {
        ByteBuffer buf = ByteBuffer.allocateDirect(100_000);
        while (ch.read(buf) >= 0) {
            buf.flip();
            while (buf.hasRemaining()) {
                ch.write(buf);
            }
            buf.clear();
        }
    }

    /** HadronioSocketChannel.transports(), by reflection: this class also runs without the provider. */
    static String transports(SocketChannel ch) {
        try {
            Method m = ch.getClass().getMethod("transports");
            return String.valueOf(m.invoke(ch));
        } catch (ReflectiveOperationException e) {
            return "none (" + ch.getClass().getName() + ")";
        }
    }

    // ---- clients -----------------------------------------------------------------------------

    private static void client(int port, long n, boolean toPeerServer) throws Exception {
        try (SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port))) {
            if (toPeerServer) {
                // a Peer server: ask it to echo
                ByteBuffer header = ByteBuffer.allocate(9).put((byte) 'E').putLong(0).flip();
                while (header.hasRemaining()) {
                    ch.write(header);
                }
            }
            say("CONNECTED " + ((InetSocketAddress) ch.getLocalAddress()).getPort());
            say("TRANSPORTS " + transports(ch));
            Thread writer = new Thread(() -> {
                try {
                    Data.write(ch, n);
                    ch.shutdownOutput();
                } catch (IOException e) {
                    say("ERROR write: " + describe(e));
                }
            });
            writer.start();
            Data.Received r = Data.readToEnd(ch);
            writer.join();
            say("RECEIVED " + r);
        }
    }

    private static void plainClient(int port, boolean garbage) throws IOException {
        try (Socket s = new Socket(InetAddress.getLoopbackAddress(), port)) {
            say("CONNECTED " + s.getLocalPort());
            if (garbage) {
                OutputStream out = s.getOutputStream();
                out.write("GET / HTTP/1.1\r\nHost: localhost\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
                out.flush();
            }
            s.setSoTimeout(60_000);
            InputStream in = s.getInputStream();
            long n = 0;
            try {
                int r;
                while ((r = in.read()) >= 0) {
                    n++;
                }
                say("EOF " + n);
            } catch (SocketTimeoutException e) {
                say("TIMEOUT");
            } catch (IOException e) {
                say("RESET " + e.getMessage());
            }
        }
    }

    private static void writeAndExit(int port, long n, String how) throws IOException {
        SocketChannel ch = SocketChannel.open(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        Data.write(ch, n);
        say("WRITTEN");
        if (how.equals("exit")) {
            System.exit(0);
        }
        // return from main with the channel open
    }

    // ---- one-JVM checks ------------------------------------------------------------------------

    private static void selftest() throws Exception {
        say("PROVIDER " + SelectorProvider.provider().getClass().getName());
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel accepted = server.accept()) {
                say("CHANNEL " + client.getClass().getName());
                long n = 1 << 20;
                Thread writer = new Thread(() -> {
                    try {
                        Data.write(client, n);
                        client.shutdownOutput();
                    } catch (IOException e) {
                        say("ERROR write: " + describe(e));
                    }
                });
                writer.start();
                Data.Received r = Data.readToEnd(accepted);
                writer.join();
                if (r.count() != n || r.firstMismatch() >= 0) {
                    throw new AssertionError("received " + r);
                }
            }
        }
        say("OK");
    }

    private static void options() throws IOException {
        try (SocketChannel ch = SocketChannel.open(); ServerSocketChannel server = ServerSocketChannel.open()) {
            say("OPTIONS " + names(ch.supportedOptions()));
            say("SERVER_OPTIONS " + names(server.supportedOptions()));
        }
    }

    static String names(Set<SocketOption<?>> options) {
        return options.stream().map(SocketOption::name).collect(Collectors.toCollection(TreeSet::new)).toString();
    }
}
