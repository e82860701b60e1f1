import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * What a fresh JVM pays before its first NIO call returns, and up to its first bytes: the
 * provider's initialisation (SelectorProvider.provider()), a selector, a listener, one
 * connection and 3,000 blocking round trips within the one JVM. Run it on the JDK's provider
 * and on hadroNIO (docs/benchmarks/netty.md, "Short runs, second look"):
 *
 *   javac -d /tmp/startup docs/repro/StartupCost.java
 *   java -cp /tmp/startup StartupCost
 *   java --enable-native-access=ALL-UNNAMED -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider \
 *        -cp provider/target/hadronio.jar:/tmp/startup StartupCost
 */
public class StartupCost {
    private static long t0;

    private static void mark(String what) {
        System.out.printf("%-32s %7.1f ms (JVM uptime %d ms)%n", what, (System.nanoTime() - t0) / 1e6,
                java.lang.management.ManagementFactory.getRuntimeMXBean().getUptime());
    }

    public static void main(String[] args) throws Exception {
        t0 = System.nanoTime();
        mark("main");
        SelectorProvider provider = SelectorProvider.provider();
        mark("provider " + provider.getClass().getSimpleName());
        Selector selector = Selector.open();
        mark("selector");
        ServerSocketChannel listener = ServerSocketChannel.open();
        listener.bind(new InetSocketAddress("127.0.0.1", 0));
        mark("listener bound");
        SocketChannel client = SocketChannel.open(listener.getLocalAddress());
        mark("connected");
        SocketChannel server = listener.accept();
        mark("accepted");
        ByteBuffer b = ByteBuffer.allocate(8);
        client.write(b);
        b.clear();
        while (b.hasRemaining()) {
            server.read(b);
        }
        mark("first 8 bytes");
        for (int i = 0; i < 3000; i++) {
            b.clear();
            client.write(b);
            b.clear();
            while (b.hasRemaining()) {
                server.read(b);
            }
            b.clear();
            server.write(b);
            b.clear();
            while (b.hasRemaining()) {
                client.read(b);
            }
        }
        mark("3000 round trips");
        client.close();
        server.close();
        listener.close();
        selector.close();
        mark("closed");
    }
}
