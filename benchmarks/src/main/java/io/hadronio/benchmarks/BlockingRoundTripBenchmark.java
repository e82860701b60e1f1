package io.hadronio.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * An 8-byte round trip on one connection in blocking mode at both ends: the benchmark thread
 * writes and reads, an echo thread reads and writes. Run with {@code -prof gc}: its
 * {@code gc.alloc.rate.norm} (bytes allocated per round trip, by every thread of the JVM) should
 * be 0. Both ends live in this JVM (one UCX worker: transport {@code self}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED",
    "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider"})
public class BlockingRoundTripBenchmark {
    private LoopbackConnections connections;
    private SocketChannel client;
    private Thread echo;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(8);

    @Setup(Level.Trial)
    public void connect() throws Exception {
        connections = new LoopbackConnections();
        LoopbackConnections.Pair p = connections.connect();
        client = p.client();
        SocketChannel server = p.server();
        echo = new Thread(() -> {
            ByteBuffer b = ByteBuffer.allocateDirect(8);
            try {
                while (true) {
                    b.clear();
                    while (b.hasRemaining()) {
                        if (server.read(b) < 0) {
                            return;
                        }
                    }
                    b.flip();
                    while (b.hasRemaining()) {
                        server.write(b);
                    }
                }
            } catch (IOException e) {
                // the trial is over
            }
        }, "blocking-echo");
        echo.setDaemon(true);
        echo.start();
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        client.shutdownOutput();
        echo.join(5_000);
        connections.close();
    }

    @Benchmark
    public long roundTrip() throws IOException {
        ByteBuffer b = buffer;
        b.clear();
        while (b.hasRemaining()) {
            client.write(b);
        }
        b.clear();
        while (b.hasRemaining()) {
            client.read(b);
        }
        return b.getLong(0);
    }
}
