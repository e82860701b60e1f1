package io.hadronio.nio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static io.hadronio.nio.ThreadStates.awaitIn;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A blocking accept that has to wait spins for the adaptive window before it sleeps in
 * {@code epoll_wait(2)}: a server that accepts connections one by one takes the next one
 * without a wake-up (a thread that wakes on an idle core costs a short connection tens of
 * microseconds on a virtual machine; docs/benchmarks/connections.md). The clients here are
 * {@link Socket}s of the JDK, whose connections stay plain.
 */
@Timeout(60)
class AcceptSpinTest {

    private static HadronioProvider provider(String polling, String spinMicros) {
        Properties p = new Properties();
        p.putAll(System.getProperties());
        p.setProperty("hadronio.polling", polling);
        p.setProperty("hadronio.polling.spin", spinMicros);
        // no crowd check: the machine's load must not decide whether the accept spins
        p.setProperty("hadronio.polling.yield", "false");
        return new HadronioProvider(HadronioConfig.from(p));
    }

    /** Accepts one connection on a thread of its own once the caller connects; returns what it accepted. */
    private static SocketChannel acceptWhileWaiting(HadronioServerSocketChannel server, String waitingIn) throws Exception {
        CompletableFuture<SocketChannel> accepted = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                accepted.complete(server.accept());
            } catch (Throwable e) {
                accepted.completeExceptionally(e);
            }
        }, "accepting");
        t.start();
        awaitIn(t, waitingIn);
        try (Socket client = new Socket()) {
            client.connect(server.getLocalAddress());
            client.getOutputStream().write(42);
            SocketChannel s = accepted.get(20, TimeUnit.SECONDS);
            assertNotNull(s);
            ByteBuffer b = ByteBuffer.allocate(1);
            s.configureBlocking(true);
            assertEquals(1, s.read(b));
            assertEquals(42, b.get(0));
            return s;
        }
    }

    @Test
    void aWaitingAcceptShouldTakeTheConnectionSpinningNotSleeping() throws Exception {
        try (HadronioServerSocketChannel server = (HadronioServerSocketChannel) provider("adaptive", "10000000")
                .openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            for (int i = 0; i < 3; i++) {
                acceptWhileWaiting(server, "spinForConnection").close();
            }
            assertEquals(0, server.acceptSleeps(), "a blocking accept slept in its spin window");
        }
    }

    @Test
    void withEventPollingAWaitingAcceptShouldSleepAtOnce() throws Exception {
        try (HadronioServerSocketChannel server = (HadronioServerSocketChannel) provider("event", "100")
                .openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            acceptWhileWaiting(server, "poll").close();
            assertEquals(1, server.acceptSleeps());
        }
    }

    @Test
    void aSpinningAcceptShouldEndWithTheChannelsClose() throws Exception {
        HadronioServerSocketChannel server = (HadronioServerSocketChannel) provider("adaptive", "10000000")
                .openServerSocketChannel();
        server.bind(new InetSocketAddress("127.0.0.1", 0));
        CompletableFuture<Throwable> ended = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                server.accept();
                ended.complete(null);
            } catch (Throwable e) {
                ended.complete(e);
            }
        }, "accepting");
        t.start();
        awaitIn(t, "spinForConnection");
        server.close();
        Throwable e = ended.get(20, TimeUnit.SECONDS);
        assertTrue(e instanceof java.nio.channels.AsynchronousCloseException, "ended with " + e);
    }

    @Test
    void aSpinningAcceptShouldHonourItsTimeout() throws Exception {
        try (HadronioServerSocketChannel server = (HadronioServerSocketChannel) provider("busy", "100")
                .openServerSocketChannel()) {
            server.bind(new InetSocketAddress("127.0.0.1", 0));
            server.socket().setSoTimeout(200);
            IOException e = org.junit.jupiter.api.Assertions.assertThrows(IOException.class, () -> server.socket().accept());
            assertTrue(e instanceof java.net.SocketTimeoutException, "ended with " + e);
        }
    }
}
