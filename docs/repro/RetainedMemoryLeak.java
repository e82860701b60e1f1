import java.net.*;
import java.nio.*;
import java.nio.channels.*;
import java.nio.file.*;

/**
 * Reproduced a bug, now fixed (docs/RELIABILITY.md, "connections' memory retained for ever"): a server
 * that closes accepted connections while their client still writes small messages. Run from the
 * repository root after ./mvnw package:
 *
 *   java --enable-native-access=ALL-UNNAMED -cp "app/target/lib/*" \
 *        -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider -Dhadronio.upgrade=false \
 *        docs/repro/RetainedMemoryLeak.java 800
 *
 * Prints the process's RSS growth every 200 connections and hadroNIO's resources at the end.
 */
public class RetainedMemoryLeak {
    static long rssKb() throws Exception {
        for (String l : Files.readAllLines(Path.of("/proc/self/status"))) if (l.startsWith("VmRSS:")) return Long.parseLong(l.replaceAll("[^0-9]", ""));
        return -1;
    }
    public static void main(String[] a) throws Exception {
        int n = Integer.parseInt(a[0]);
        ServerSocketChannel ss = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        int port = ((InetSocketAddress) ss.getLocalAddress()).getPort();
        // the client side lives in this JVM too: it writes small messages until the server is gone
        Thread server = new Thread(() -> {
            try {
                for (int i = 0; i < n; i++) {
                    SocketChannel c = ss.accept();
                    Thread.sleep(3); // the client's burst is in flight

                    c.close(); // unread data in flight
                }
            } catch (Exception e) { e.printStackTrace(); }
        });
        server.start();
        ByteBuffer msg = ByteBuffer.allocateDirect(1024);
        long base = 0;
        for (int i = 0; i < n; i++) {
            SocketChannel c = SocketChannel.open(new InetSocketAddress("127.0.0.1", port));
            c.configureBlocking(false);
            try {
                for (int k = 0; k < 512; k++) { msg.clear(); if (c.write(msg) == 0) break; }
            } catch (Exception e) { }
            Thread.sleep(5);
            c.close();
            if (i == 50) { System.gc(); base = rssKb(); }
            if (i > 50 && i % 200 == 0) { System.gc(); System.out.println("conn " + i + " rss +" + (rssKb() - base) + " KiB"); }
        }
        server.join();
        if (java.nio.channels.spi.SelectorProvider.provider() instanceof io.hadronio.HadronioProvider h) {
            System.out.println(h.resources());
        }
    }
}
