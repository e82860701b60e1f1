package io.hadronio.it.close;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Either end of {@link AbruptCloseAcrossJvmsTest}. {@code server N abortive}: prints
 * {@code PORT p}, accepts N connections and closes each 3 ms after accepting it, unread, with
 * {@code SO_LINGER} 0 when abortive. {@code client PORT N SIZE}: on each of N connections writes
 * SIZE-byte messages, non-blocking, until held back, then until a write fails (a connect the
 * server's reset already failed counts as failed too); prints {@code FAILED k}. Both then wait
 * until their connections' memory and UCX requests are freed (or 20 s) and print
 * {@code RESOURCES} with hadroNIO's counts.
 */
public final class AbruptClosePeer {
    private AbruptClosePeer() {
    }

    // every connection this JVM made or accepted: their states go into the report when memory stays
    private static final java.util.List<SocketChannel> CHANNELS = new java.util.ArrayList<>();

    public static void main(String[] args) throws Exception {
        if (args[0].equals("server")) {
            server(Integer.parseInt(args[1]), Boolean.parseBoolean(args[2]));
        } else {
            client(Integer.parseInt(args[1]), Integer.parseInt(args[2]), Integer.parseInt(args[3]));
        }
        settleAndReport();
    }

    private static void server(int connections, boolean abortive) throws Exception {
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            System.out.println("PORT " + ((InetSocketAddress) server.getLocalAddress()).getPort());
            for (int i = 0; i < connections; i++) {
                SocketChannel accepted = server.accept();
                CHANNELS.add(accepted);
                if (abortive) {
                    accepted.setOption(StandardSocketOptions.SO_LINGER, 0);
                }
                Thread.sleep(3);
                accepted.close();
            }
        }
    }

    private static void client(int port, int connections, int size) throws Exception {
        ByteBuffer message = ByteBuffer.allocateDirect(size);
        int failed = 0;
        for (int i = 0; i < connections; i++) {
            SocketChannel opened;
            try {
                opened = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            } catch (IOException e) {
                // the server accepted and reset the connection before our connect returned: the
                // kernel reports that to connect itself ("Connection reset by peer"), on the JDK too
                System.out.println("CONNECT " + i + " failed: " + e);
                failed++;
                continue;
            }
            CHANNELS.add(opened);
            try (SocketChannel c = opened) {
                c.configureBlocking(false);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
                try {
                    for (int k = 0; k < 512; k++) {
                        message.clear();
                        if (c.write(message) == 0) {
                            break;
                        }
                    }
                    while (System.nanoTime() - deadline < 0) {
                        message.clear();
                        c.write(message);
                        Thread.sleep(1);
                    }
                    // the writes never failed: what the connection's state was, for the test's report
                    System.out.println("STUCK connection " + i + ": " + describe(c));
                } catch (IOException e) {
                    failed++;
                }
            }
        }
        System.out.println("FAILED " + failed);
    }

    /** The channel and, on hadroNIO, its lifecycle (directions, upgrade, raw byte counts). */
    private static String describe(SocketChannel c) {
        return c instanceof io.hadronio.nio.HadronioSocketChannel h ? c + " " + h.lifecycle() : c.toString();
    }

    private static void settleAndReport() throws InterruptedException {
        if (!(SelectorProvider.provider() instanceof io.hadronio.HadronioProvider h)) {
            System.out.println("RESOURCES none");
            return;
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        Map<String, Long> r = h.resources();
        // requests too: the last connections' closing messages may still be completing
        while ((r.get("connections.memory") != 0 || r.get("connections.memory.retained") != 0
                || r.get("ucx.requests") != 0) && System.nanoTime() - deadline < 0) {
            Thread.sleep(20);
            r = h.resources();
        }
        if (r.get("connections.memory") != 0) {
            // where the connections that kept their memory are (for the test's report)
            for (SocketChannel c : CHANNELS) {
                String d = describe(c);
                if (!d.contains("CLOSED")) {
                    System.out.println("UNFREED " + d);
                }
            }
        }
        System.out.println("RESOURCES memory=" + r.get("connections.memory") + " retained="
                + r.get("connections.memory.retained") + " endpoints=" + r.get("ucx.endpoints")
                + " requests=" + r.get("ucx.requests"));
    }
}
