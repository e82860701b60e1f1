import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * What asking a connection for its transports costs: one connection pair in one JVM, moved to
 * UCX by a few round trips, then {@code getOption(HadronioSocketOptions.TRANSPORT)} 5,000 times
 * in each of three rounds (the first one warms up). The same description of the UCX endpoint is
 * what each connection's move asks once, to tell whether UCX offers more than tcp
 * (docs/benchmarks/load.md, "The move described the endpoint at every connection"):
 *
 *   javac -cp provider/target/hadronio.jar -d /tmp/tq docs/repro/TransportQueryCost.java
 *   taskset -c 1 java --enable-native-access=ALL-UNNAMED \
 *        -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider \
 *        -cp provider/target/hadronio.jar:/tmp/tq TransportQueryCost
 */
public class TransportQueryCost {
    public static void main(String[] args) throws Exception {
        ServerSocketChannel listener = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        SocketChannel client = SocketChannel.open(listener.getLocalAddress());
        SocketChannel server = listener.accept();
        ByteBuffer out = ByteBuffer.allocateDirect(8);
        ByteBuffer in = ByteBuffer.allocateDirect(8);
        for (int k = 0; k < 20; k++) {
            for (int i = 0; i < 100; i++) {
                out.clear();
                while (out.hasRemaining()) client.write(out);
                in.clear();
                while (in.hasRemaining()) server.read(in);
                in.flip();
                while (in.hasRemaining()) server.write(in);
                out.clear();
                while (out.hasRemaining()) client.read(out);
            }
            Thread.sleep(100);
        }
        String transport = "";
        for (int round = 0; round < 3; round++) {
            long t0 = System.nanoTime();
            for (int i = 0; i < 5000; i++) {
                transport = client.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
            }
            System.out.printf("%s: %.1f us per TRANSPORT%n", transport, (System.nanoTime() - t0) / 5000 / 1e3);
        }
    }
}
