package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Callable;
import java.util.stream.Stream;
import org.junit.jupiter.api.Named;

/**
 * What the contract tests share. They run once on the JDK's own provider and once on
 * hadroNIO: a test that passes on both tests the {@code java.nio} contract, not our
 * implementation.
 */
abstract class ContractSupport {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    // one hadroNIO provider (UCX context, worker, control loop) for every contract test
    static final HadronioProvider HADRONIO = new HadronioProvider();

    static Stream<Named<SelectorProvider>> providers() {
        assertTrue(HADRONIO.isAccelerated(), "UCX must be available");
        return Stream.of(Named.of("jdk", HADRONIO.platform()), Named.of("hadronio", HADRONIO));
    }

    /** Both ends of one connection, blocking until configured otherwise. */
    record Connected(SocketChannel client, SocketChannel server) implements AutoCloseable {
        @Override
        public void close() throws IOException {
            try {
                client.close();
            } finally {
                server.close();
            }
        }
    }

    static Connected connect(SelectorProvider provider) throws IOException {
        try (ServerSocketChannel listener = provider.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            SocketChannel client = provider.openSocketChannel();
            try {
                client.connect(listener.getLocalAddress());
                return new Connected(client, listener.accept());
            } catch (IOException | RuntimeException e) {
                client.close();
                throw e;
            }
        }
    }

    /**
     * Selects until {@code key} is in the selected-key set with all of {@code ops} ready.
     * Other keys are removed from the selected set on the way; the key itself stays.
     *
     * @return the value of the selection that completed it
     */
    static int awaitReady(Selector selector, SelectionKey key, int ops) throws IOException {
        while (true) {
            int n = selector.select();
            if (selector.selectedKeys().contains(key) && (key.readyOps() & ops) == ops) {
                selector.selectedKeys().retainAll(java.util.Set.of(key));
                return n;
            }
            selector.selectedKeys().clear();
        }
    }

    /** A task on its own daemon thread. */
    record Task<T>(Thread thread, CompletableFuture<T> result) {
    }

    static <T> Task<T> start(String name, Callable<T> body) {
        CompletableFuture<T> result = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(body.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return new Task<>(t, result);
    }

    /**
     * Waits until {@code thread} is inside a selection of {@code selector}, so that what
     * the test does next happens to a selection in progress.
     */
    static void awaitInSelect(Thread thread, Selector selector) throws InterruptedException {
        String cls = selector.getClass().getName();
        while (true) {
            StackTraceElement[] stack = thread.getStackTrace();
            if (Arrays.stream(stack).anyMatch(e -> e.getClassName().equals(cls) || e.getClassName()
                    .startsWith("sun.nio.ch.SelectorImpl"))) {
                // and it has got past the entry into the selection
                if (thread.getState() != Thread.State.BLOCKED) {
                    return;
                }
            }
            if (!thread.isAlive()) {
                throw new AssertionError("thread " + thread.getName() + " ended before selecting");
            }
            Thread.sleep(5);
        }
    }
}
