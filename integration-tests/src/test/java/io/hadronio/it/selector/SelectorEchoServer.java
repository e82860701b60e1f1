package io.hadronio.it.selector;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.Iterator;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A peer JVM: a non-blocking echo server, one thread and one selector for the listener
 * and every connection, written as plain NIO applications are. Echoes until each client
 * closes, with back-pressure (a connection whose echo does not fit stops being read until
 * it drained). Prints {@code PROVIDER p s}, {@code PORT n}; answers a {@code STATS} line
 * on stdin with {@code STATS open rssKiB fds}, a {@code RESOURCES} line with
 * {@code RESOURCES open=n} and the {@link ResourceFigures}; exits when stdin closes.
 * Trouble on a connection prints {@code CONN_ERROR ...}.
 *
 * <p>Argument: the listen backlog (default 4096).
 */
public final class SelectorEchoServer {
    private static final AtomicInteger OPEN = new AtomicInteger();

    private SelectorEchoServer() {
    }

    /** A connection's echo that did not fit yet, and whether its client finished sending. */
    private static final class Conn {
        ByteBuffer pending;
        boolean eof;
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    public static void main(String[] args) throws Exception {
        int backlog = args.length > 0 ? Integer.parseInt(args[0]) : 4096;
        Selector selector = Selector.open();
        ServerSocketChannel server = ServerSocketChannel.open();
        server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), backlog);
        server.configureBlocking(false);
        server.register(selector, SelectionKey.OP_ACCEPT);
        Thread stdin = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.trim().equals("STATS")) {
                        say("STATS " + OPEN.get() + " " + ProcStats.self());
                    } else if (line.trim().equals("RESOURCES")) {
                        say("RESOURCES open=" + OPEN.get() + " " + ResourceFigures.take());
                    }
                }
            } catch (IOException | InterruptedException e) {
                say("ERROR stdin " + e);
            }
            System.exit(0);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        say("PROVIDER " + SelectorProvider.provider().getClass().getName() + " " + selector.getClass().getName());
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
                        ch.configureBlocking(false);
                        ch.register(selector, SelectionKey.OP_READ, new Conn());
                        OPEN.incrementAndGet();
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
                            if (c.eof) {
                                close(ch);
                                continue;
                            }
                            key.interestOps(SelectionKey.OP_READ);
                        }
                    } else if (key.isReadable()) {
                        buf.clear();
                        int n = ch.read(buf);
                        if (n < 0) {
                            c.eof = true;
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
                    say("CONN_ERROR " + e);
                    close(ch);
                }
            }
        }
    }

    private static void close(SocketChannel ch) {
        try {
            ch.close();
        } catch (IOException e) {
            say("CONN_ERROR close " + e);
        }
        OPEN.decrementAndGet();
    }
}
