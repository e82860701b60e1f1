package io.hadronio;

import io.hadronio.config.HadronioConfig;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Bytes a write accepted reach the peer although the writer never calls in again, as with
 * the kernel's TCP. On UCX a message above the eager limit (about 8 KiB on shared memory:
 * 8,193 bytes arrive at once, 8,300 do not) is a rendezvous, which the receiver cannot
 * complete until the sender's worker progresses; the control loop does that when no
 * application thread does. Without it the message stayed with the sender until the writer
 * called in again, which is how a blocking 64 KiB ping-pong across an upgrade hung
 * (docs/RELIABILITY.md; {@code UpgradeTest.shouldAnswerALargeMessageSentFromUcxToARawInput}).
 * The two ends have a provider each, as two JVMs would: with one provider the reader's
 * progress is the writer's too and hides the question. The JDK's provider runs the same case
 * (the contract, not our implementation).
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(120)
class QuietWriterTest {
    static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r);
        t.setDaemon(true);
        return t;
    });

    @AfterAll
    static void stop() {
        THREADS.shutdownNow();
    }

    static SelectorProvider provider(String mode) {
        if (mode.equals("jdk")) {
            return ContractSupport.HADRONIO.platform();
        }
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", Boolean.toString(mode.equals("upgrade")));
        p.setProperty("hadronio.upgrade.delay", "0");
        HadronioProvider provider = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(provider.isAccelerated());
        return provider;
    }

    @ParameterizedTest
    @CsvSource({"eager, 8300", "eager, 65536", "eager, 300000", "upgrade, 65536", "upgrade, 300000", "jdk, 65536"})
    void shouldDeliverWhatAWriterLeftBehind(String mode, int size) throws Exception {
        // new providers for each case: a message left behind by a failed case must not hold up the next
        SelectorProvider serverSide = provider(mode);
        SelectorProvider clientSide = provider(mode);
        try (ServerSocketChannel server = serverSide.openServerSocketChannel()
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
             SocketChannel client = clientSide.openSocketChannel()) {
            client.connect(server.getLocalAddress());
            try (SocketChannel accepted = server.accept()) {
                // small round trips first: an upgrading connection moves both ways meanwhile (at least
                // 2,000, and on until it moved: how many it takes depends on the machine's load)
                ByteBuffer small = ByteBuffer.allocate(8);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                for (int i = 0; i < 2_000 || (!mode.equals("jdk") && System.nanoTime() - deadline < 0
                        && !client.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:")); i++) {
                    MixedPeersTest.writeFully(client, small.clear());
                    MixedPeersTest.readFully(accepted, small.clear());
                    MixedPeersTest.writeFully(accepted, small.flip());
                    MixedPeersTest.readFully(client, small.clear());
                }
                if (!mode.equals("jdk")) {
                    assertTrue(client.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:"),
                            client.getOption(HadronioSocketOptions.TRANSPORT));
                }
                byte[] data = new byte[size];
                new Random(size).nextBytes(data);
                MixedPeersTest.writeFully(client, ByteBuffer.wrap(data));
                // the client's thread calls in no more; the server reads
                ByteBuffer in = ByteBuffer.allocate(size);
                CompletableFuture<Void> reader = CompletableFuture.runAsync(() -> {
                    try {
                        MixedPeersTest.readFully(accepted, in);
                    } catch (java.io.IOException e) {
                        throw new RuntimeException(e);
                    }
                }, THREADS);
                try {
                    reader.get(30, TimeUnit.SECONDS);
                } catch (TimeoutException e) {
                    throw new AssertionError(in.position() + " of " + size
                            + " bytes arrived while their writer was quiet", e);
                }
                assertEquals(ByteBuffer.wrap(data), in.flip());
            }
        }
    }
}
