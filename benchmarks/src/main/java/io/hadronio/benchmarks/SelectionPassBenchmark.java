package io.hadronio.benchmarks;

import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;

/**
 * One selection pass of hadroNIO's selector ({@code selectNow()}) with 1 or 1,000 connected
 * channels registered for reading and nothing to read: the cost an event loop pays on every
 * turn. The selector scans every registered key on each pass (README, "Not there yet"), so
 * the 1,000-key figure is the one to watch.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED",
    "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider"})
public class SelectionPassBenchmark {
    @Param({"1", "1000"})
    int keys;

    private LoopbackConnections connections;
    private Selector selector;

    @Setup(Level.Trial)
    public void register() throws Exception {
        connections = new LoopbackConnections();
        selector = Selector.open();
        for (int i = 0; i < keys; i++) {
            LoopbackConnections.Pair p = connections.connect();
            p.server().configureBlocking(false);
            p.server().register(selector, SelectionKey.OP_READ);
        }
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        selector.close();
        connections.close();
    }

    @Benchmark
    public int selectNow() throws Exception {
        return selector.selectNow();
    }
}
