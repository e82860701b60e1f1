package io.hadronio.benchmarks;

import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Connected pairs of hadroNIO channels inside the benchmark's JVM, over one listening
 * socket on 127.0.0.1: the connections the benchmarks measure. The forked JVM runs with
 * {@code -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider}, so plain
 * {@code SocketChannel.open()} gives hadroNIO channels.
 */
final class LoopbackConnections implements AutoCloseable {
    /** One connection: the client's end and the server's accepted end. */
    record Pair(SocketChannel client, SocketChannel server) {
    }

    private final ServerSocketChannel listener;
    private final ExecutorService acceptor = Executors.newSingleThreadExecutor();
    private final List<Pair> pairs = new ArrayList<>();

    LoopbackConnections() throws IOException {
        if (!(SelectorProvider.provider() instanceof HadronioProvider h) || !h.isAccelerated()) {
            throw new IllegalStateException("these benchmarks measure hadroNIO with UCX; the JVM's provider is "
                    + SelectorProvider.provider() + " (is UCX installed?)");
        }
        listener = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 1024);
    }

    /** Opens a new connection (blocking mode on both ends; the accept runs on another thread, as a server's would). */
    Pair connect() throws Exception {
        Future<SocketChannel> accepted = acceptor.submit(listener::accept);
        SocketChannel client = SocketChannel.open(listener.getLocalAddress());
        Pair p = new Pair(client, accepted.get());
        pairs.add(p);
        return p;
    }

    @Override
    public void close() throws IOException {
        for (Pair p : pairs) {
            p.client().close();
            p.server().close();
        }
        listener.close();
        acceptor.shutdownNow();
    }
}
