package io.hadronio.benchmarks;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Group;
import org.openjdk.jmh.annotations.GroupThreads;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * The data path's two copies on one hadroNIO connection: {@code write} copies the
 * application's buffer into a send slot and posts it to UCX (copy-in), {@code read} copies
 * a received slice into the application's buffer and returns its credit (copy-out). Writer
 * and reader run at once, one thread each (a JMH group), both channels non-blocking: a call
 * that finds no credit or no data returns 0 and counts as a call but moves no bytes, so the
 * {@code bytes} counter (bytes per second) is the figure to compare; calls per second are
 * the per-call cost.
 */
@State(Scope.Group)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED",
    "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider"})
public class ChannelCopyBenchmark {
    @Param({"64", "65536"})
    int size;

    private LoopbackConnections connections;
    private SocketChannel writer;
    private SocketChannel reader;

    /** Bytes a thread moved, reported per second next to the calls. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Bytes {
        public long bytes;
    }

    /** Each thread's own buffer (direct, as a server's would be). */
    @State(Scope.Thread)
    public static class Buffer {
        ByteBuffer buffer;

        @Setup(Level.Trial)
        public void allocate(ChannelCopyBenchmark b) {
            buffer = ByteBuffer.allocateDirect(b.size);
        }
    }

    @Setup(Level.Trial)
    public void connect() throws Exception {
        connections = new LoopbackConnections();
        LoopbackConnections.Pair pair = connections.connect();
        writer = pair.client();
        reader = pair.server();
        writer.configureBlocking(false);
        reader.configureBlocking(false);
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        connections.close();
    }

    @Benchmark
    @Group("copy")
    @GroupThreads(1)
    public int writeCopyIn(Buffer b, Bytes moved) throws Exception {
        ByteBuffer src = b.buffer;
        src.clear();
        int n = writer.write(src);
        moved.bytes += n;
        return n;
    }

    @Benchmark
    @Group("copy")
    @GroupThreads(1)
    public int readCopyOut(Buffer b, Bytes moved) throws Exception {
        ByteBuffer dst = b.buffer;
        dst.clear();
        int n = reader.read(dst);
        moved.bytes += Math.max(0, n);
        return n;
    }
}
