package io.hadronio.benchmarks;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.Iterator;
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
 * An 8-byte round trip through a server's event loop (one {@link Selector}, one thread, echoing
 * what it reads) that also holds {@code idle} connected channels registered for reading on
 * which nothing ever arrives. The client (the benchmark thread, blocking channels) sends on
 * {@code active} connections in turn, one round trip at a time. With a selector that looks at
 * every registered key on each pass, the idle keys make every round trip slower; with one that
 * looks only at keys that had an event, they cost nothing. Both ends live in this JVM (one UCX
 * worker: transport {@code self}).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.SampleTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Fork(value = 1, jvmArgsAppend = {"--enable-native-access=ALL-UNNAMED",
    "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider"})
public class IdleConnectionsRoundTripBenchmark {
    @Param({"0", "1000"})
    int idle;

    @Param({"1", "10"})
    int active;

    private LoopbackConnections connections;
    private Selector selector;
    private Thread server;
    private SocketChannel[] clients;
    private final ByteBuffer buffer = ByteBuffer.allocateDirect(8);
    private int next;

    @Setup(Level.Trial)
    public void connect() throws Exception {
        connections = new LoopbackConnections();
        selector = Selector.open();
        for (int i = 0; i < idle; i++) {
            LoopbackConnections.Pair p = connections.connect();
            p.server().configureBlocking(false);
            p.server().register(selector, SelectionKey.OP_READ, ByteBuffer.allocateDirect(8));
        }
        clients = new SocketChannel[active];
        for (int i = 0; i < active; i++) {
            LoopbackConnections.Pair p = connections.connect();
            p.server().configureBlocking(false);
            p.server().register(selector, SelectionKey.OP_READ, ByteBuffer.allocateDirect(8));
            clients[i] = p.client();
        }
        server = new Thread(this::serve, "echo-event-loop");
        server.setDaemon(true);
        server.start();
    }

    /** The event loop: reads what arrives and echoes each full 8 bytes. */
    private void serve() {
        try {
            while (true) {
                selector.select();
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    SocketChannel ch = (SocketChannel) key.channel();
                    ByteBuffer b = (ByteBuffer) key.attachment();
                    if (ch.read(b) < 0) {
                        key.cancel();
                        continue;
                    }
                    if (!b.hasRemaining()) {
                        b.flip();
                        while (b.hasRemaining()) {
                            ch.write(b);
                        }
                        b.clear();
                    }
                }
            }
        } catch (ClosedSelectorException | IOException e) {
            // the trial is over
        }
    }

    @TearDown(Level.Trial)
    public void close() throws Exception {
        selector.close();
        server.join(5_000);
        connections.close();
    }

    @Benchmark
    public long roundTrip() throws IOException {
        SocketChannel c = clients[next];
        next = next + 1 == clients.length ? 0 : next + 1;
        ByteBuffer b = buffer;
        b.clear();
        while (b.hasRemaining()) {
            c.write(b);
        }
        b.clear();
        while (b.hasRemaining()) {
            c.read(b);
        }
        return b.getLong(0);
    }
}
