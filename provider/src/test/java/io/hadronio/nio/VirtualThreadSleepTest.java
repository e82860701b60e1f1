package io.hadronio.nio;

import static io.hadronio.nio.ThreadStates.awaitIn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import io.hadronio.platform.VirtualThreadParking;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A virtual thread that sleeps in hadroNIO (a selection, a blocking read, a blocking accept)
 * leaves its carrier to the other virtual threads, as the JDK's own selector does: it parks
 * through the JDK's poller instead of blocking in {@code poll(2)}.
 *
 * <p>The probe runs in a JVM whose virtual-thread scheduler has one carrier and no spare
 * ({@code parallelism=1, maxPoolSize=1}). A carrier blocked in a system call is then never
 * replaced, so the probe tells a parked thread from a blocked one by behaviour: another
 * virtual thread runs while the first sleeps, or it does not until the first wakes. The same
 * happens on a real scheduler whenever it declines a spare (it keeps only
 * {@code minRunnable} carriers running, half of them by default): JGroups' virtual threads ran
 * its multicast at a quarter of the rate on two cores (docs/benchmarks/apps.md, 2026-11-29).
 */
@Timeout(120)
class VirtualThreadSleepTest {

    @Test
    void virtualThreadsAsleepInHadronioShouldLeaveTheirCarrierToOthers() throws Exception {
        String java = ProcessHandle.current().info().command().orElseThrow();
        Process p = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                "-Djdk.virtualThreadScheduler.parallelism=1", "-Djdk.virtualThreadScheduler.maxPoolSize=1",
                "-cp", System.getProperty("java.class.path"), Probe.class.getName())
                .redirectErrorStream(true).start();
        boolean done = p.waitFor(100, TimeUnit.SECONDS);
        if (!done) {
            p.destroyForcibly();
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        assertTrue(done, "the probe JVM did not finish: " + out);
        assertEquals(0, p.exitValue(), out);
        assertTrue(out.endsWith("select=ran read=ran accept=ran"), out);
    }

    /** Run by the test in a JVM whose scheduler has exactly one carrier. */
    public static final class Probe {
        public static void main(String[] args) throws Exception {
            if (!VirtualThreadParking.available()) {
                throw new AssertionError("the JDK's poller is out of reach");
            }
            Properties props = new Properties();
            props.putAll(System.getProperties());
            props.setProperty("hadronio.upgrade", "false");
            // no spin: each wait goes to sleep at once
            props.setProperty("hadronio.polling", "event");
            HadronioProvider provider = new HadronioProvider(HadronioConfig.from(props));
            HadronioProvider peers = new HadronioProvider(HadronioConfig.from(props));
            try (ServerSocketChannel server = peers.openServerSocketChannel()) {
                server.bind(new InetSocketAddress("127.0.0.1", 0));
                StringBuilder result = new StringBuilder();

                // a selection
                try (SocketChannel ours = provider.openSocketChannel();
                     HadronioSelector selector = (HadronioSelector) provider.openSelector()) {
                    ours.connect(server.getLocalAddress());
                    try (SocketChannel theirs = server.accept()) {
                        ours.configureBlocking(false).register(selector, SelectionKey.OP_READ);
                        CompletableFuture<Integer> selected = new CompletableFuture<>();
                        Thread t = Thread.ofVirtual().start(() -> {
                            try {
                                selected.complete(selector.select());
                            } catch (Throwable e) {
                                selected.completeExceptionally(e);
                            }
                        });
                        awaitIn(t, "sleep");
                        result.append("select=").append(anotherVirtualThreadRuns());
                        theirs.write(ByteBuffer.wrap(new byte[] {1}));
                        check(selected.get(20, TimeUnit.SECONDS) == 1, "the selection did not see the byte");
                        check(t.join(Duration.ofSeconds(10)), "still selecting");
                    }
                }

                // a blocking read
                try (SocketChannel ours = provider.openSocketChannel()) {
                    ours.connect(server.getLocalAddress());
                    try (SocketChannel theirs = server.accept()) {
                        CompletableFuture<Integer> read = new CompletableFuture<>();
                        ByteBuffer into = ByteBuffer.allocate(4);
                        Thread t = Thread.ofVirtual().start(() -> {
                            try {
                                read.complete(ours.read(into));
                            } catch (Throwable e) {
                                read.completeExceptionally(e);
                            }
                        });
                        awaitIn(t, "sleep");
                        result.append(" read=").append(anotherVirtualThreadRuns());
                        theirs.write(ByteBuffer.wrap(new byte[] {2}));
                        check(read.get(20, TimeUnit.SECONDS) == 1 && into.get(0) == 2, "the read did not get its byte");
                    }
                }

                // a blocking accept
                try (ServerSocketChannel listener = provider.openServerSocketChannel()) {
                    listener.bind(new InetSocketAddress("127.0.0.1", 0));
                    CompletableFuture<SocketChannel> accepted = new CompletableFuture<>();
                    Thread t = Thread.ofVirtual().start(() -> {
                        try {
                            accepted.complete(listener.accept());
                        } catch (Throwable e) {
                            accepted.completeExceptionally(e);
                        }
                    });
                    awaitIn(t, "waitOnce");
                    result.append(" accept=").append(anotherVirtualThreadRuns());
                    try (SocketChannel client = peers.openSocketChannel()) {
                        client.connect(listener.getLocalAddress());
                        try (SocketChannel s = accepted.get(20, TimeUnit.SECONDS)) {
                            check(s.isConnected(), "accepted channel not connected");
                        }
                    }
                }
                System.out.println(result);
            }
            System.exit(0);
        }

        private static String anotherVirtualThreadRuns() throws Exception {
            CompletableFuture<Boolean> ran = new CompletableFuture<>();
            Thread.ofVirtual().start(() -> ran.complete(true));
            try {
                ran.get(10, TimeUnit.SECONDS);
                return "ran";
            } catch (java.util.concurrent.TimeoutException e) {
                return "starved";
            }
        }

        private static void check(boolean ok, String what) {
            if (!ok) {
                throw new AssertionError(what);
            }
        }
    }
}
