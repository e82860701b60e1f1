package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A peer killed with SIGKILL ends our blocked reads and writes with an IOException, not a hang. */
@Tag("slow")
@Timeout(60)
class PeerFailureTest extends ItSupport {
    // a peer that dies on a connection carried by UCX: in the suite's upgrade mode a connection
    // starts as kernel TCP, whose end after a kill is the kernel's (end-of-stream, as with the
    // JDK), so both sides use the default mode (ItSupport#onUcx)

    // "promptly": the control connection's reset is seen at once; this only guards against a hang
    static final int PROMPTLY_SECONDS = 10;

    // a healthy peer: after a peer died, connections to others must still work
    static ChildJvm healthy;
    static int healthyPort;

    @BeforeAll
    static void startHealthyPeer() throws Exception {
        healthy = ChildJvm.withProvider(EAGER_MODE, "server");
        healthyPort = healthy.port();
    }

    @AfterAll
    static void stopHealthyPeer() {
        if (healthy != null) {
            healthy.close();
        }
    }

    @AfterEach
    void othersStillWork() throws Exception {
        long n = 1 << 20;
        try (SocketChannel ch = onUcx(healthyPort, 'E', 0)) {
            Future<Void> writer = async(() -> {
                Data.write(ch, n);
                ch.shutdownOutput();
                return null;
            });
            Data.Received r = Data.readToEnd(ch);
            writer.get(30, TimeUnit.SECONDS);
            assertEquals(n, r.count());
            assertEquals(-1, r.firstMismatch());
        }
    }

    @Test
    void shouldEndABlockedReadWithAnIOExceptionWhenThePeerIsKilled() throws Exception {
        try (ChildJvm victim = ChildJvm.withProvider(EAGER_MODE, "server")) {
            try (SocketChannel ch = onUcx(victim.port(), 'P', 0)) {
                victim.expect("STOPPED");
                Task<Integer> reader = start("reader", () -> ch.read(ByteBuffer.allocate(100)));
                awaitBlockedIn(reader.thread(), ItSupport::hadronioWait);
                victim.kill();
                Throwable failure = failureWithin(reader);
                assertInstanceOf(IOException.class, failure, "the blocked read ends with");
                assertThrows(IOException.class, () -> ch.read(ByteBuffer.allocate(100)), "and so do later reads");
                assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(100)), "and writes");
            }
        }
    }

    @Test
    void shouldEndABlockedWriteWithAnIOExceptionWhenAPeerThatStoppedReadingIsKilled() throws Exception {
        try (ChildJvm victim = ChildJvm.withProvider(EAGER_MODE, "server")) {
            try (SocketChannel ch = onUcx(victim.port(), 'P', 1 << 20)) {
                // far more than the peer's receive window: this write cannot complete
                ByteBuffer big = ByteBuffer.allocateDirect(64 << 20);
                Task<Integer> writer = start("writer", () -> ch.write(big));
                victim.expect("STOPPED");
                awaitBlockedIn(writer.thread(), ItSupport::hadronioWait);
                victim.kill();
                Throwable failure = failureWithin(writer);
                assertInstanceOf(IOException.class, failure, "the blocked write ends with");
                assertThrows(IOException.class, () -> ch.write(ByteBuffer.allocate(100)), "and so do later writes");
            }
        }
    }

    @Test
    void shouldFailAReadWhenThePeerWasKilledBeforehand() throws Exception {
        try (ChildJvm victim = ChildJvm.withProvider(EAGER_MODE, "server")) {
            try (SocketChannel ch = onUcx(victim.port(), 'P', 0)) {
                victim.expect("STOPPED");
                victim.kill();
                assertThrows(IOException.class, () -> {
                    // a read may return data the peer sent before dying; here there is none
                    ch.read(ByteBuffer.allocate(100));
                });
            }
        }
    }

    private static Throwable failureWithin(Task<?> task) throws Exception {
        try {
            task.result().get(PROMPTLY_SECONDS, TimeUnit.SECONDS);
            return null;
        } catch (java.util.concurrent.ExecutionException e) {
            return e.getCause();
        } catch (java.util.concurrent.TimeoutException e) {
            throw new AssertionError("still blocked " + PROMPTLY_SECONDS + " s after the peer was killed: "
                    + java.util.Arrays.toString(task.thread().getStackTrace()));
        }
    }

    /**
     * A peer killed with SIGKILL while it streams to us (UCX moving its messages over
     * shared memory and cma at that moment) must not take this JVM down: UCX used to abort
     * the survivor inside its progress (process_vm_readv: No such process). We see an
     * IOException, never a clean end-of-stream, and go on working (see othersStillWork).
     */
    @Test
    void shouldSurviveAPeerKilledWhileItStreamsToUs() throws Exception {
        for (int round = 0; round < 5; round++) {
            try (ChildJvm victim = ChildJvm.withProvider(EAGER_MODE, "server")) {
                try (SocketChannel ch = onUcx(victim.port(), 'S', Long.MAX_VALUE / 2)) {
                    assertTrue(ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT).startsWith("ucx:"));
                    ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                    long got = 0;
                    while (got < (8L << 20) + round * (3L << 20)) {
                        buf.clear();
                        int n = ch.read(buf);
                        assertTrue(n > 0, "data before the kill");
                        got += n;
                    }
                    Task<Long> reader = start("reader", () -> {
                        long more = 0;
                        while (true) {
                            buf.clear();
                            int n = ch.read(buf);
                            if (n < 0) {
                                return more;
                            }
                            more += n;
                        }
                    });
                    victim.kill();
                    Throwable failure = failureWithin(reader);
                    assertInstanceOf(IOException.class, failure, "round " + round
                            + ": the read after the writer was killed ends with");
                }
            }
        }
    }

    /**
     * Upgrade mode: a connection that started on kernel TCP and moved to UCX (both
     * directions: the peer's stream at its next write, our idle output when the UCX half
     * was ready), its peer killed while it streams to us. The kernel socket now carries
     * only control records, and its end without a CLOSE is what tells us of the death.
     */
    @Test
    void shouldSurviveAPeerKilledWhileItStreamsToUsOnAnUpgradedConnection() throws Exception {
        for (int round = 0; round < 3; round++) {
            try (ChildJvm victim = ChildJvm.withProvider(UPGRADE_MODE, "server")) {
                try (SocketChannel ch = command(upgradeModeProvider(), victim.port(), 'S', Long.MAX_VALUE / 2)) {
                    ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                    long got = 0;
                    String transport = ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
                    while (!transport.startsWith("ucx:") && got < (1L << 30)) {
                        buf.clear();
                        int n = ch.read(buf);
                        assertTrue(n > 0, "data before the kill");
                        got += n;
                        transport = ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
                    }
                    assertTrue(transport.startsWith("ucx:"), "moved to UCX after " + got + " bytes: " + transport);
                    Task<Long> reader = start("reader", () -> {
                        long more = 0;
                        while (true) {
                            buf.clear();
                            int n = ch.read(buf);
                            if (n < 0) {
                                return more;
                            }
                            more += n;
                        }
                    });
                    long killed = System.nanoTime();
                    victim.kill();
                    Throwable failure = failureWithin(reader);
                    System.out.printf("upgraded connection, round %d: the read ended %.1f ms after the kill: %s%n",
                            round, (System.nanoTime() - killed) / 1e6, failure);
                    assertInstanceOf(IOException.class, failure, "round " + round
                            + ": the read after the writer was killed ends with");
                }
            }
        }
    }

    /** The same with the stream read through a selector, as an event loop reads it. */
    @Test
    void shouldSeeAPeerKilledWhileItStreamsToUsThroughASelectorOnAnUpgradedConnection() throws Exception {
        for (int round = 0; round < 3; round++) {
            try (ChildJvm victim = ChildJvm.withProvider(UPGRADE_MODE, "server");
                 java.nio.channels.Selector selector = upgradeModeProvider().openSelector()) {
                try (SocketChannel ch = command(upgradeModeProvider(), victim.port(), 'S', Long.MAX_VALUE / 2)) {
                    ch.configureBlocking(false);
                    ch.register(selector, java.nio.channels.SelectionKey.OP_READ);
                    ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                    long got = 0;
                    String transport = ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
                    while (!transport.startsWith("ucx:") && got < (1L << 30)) {
                        selector.select(1000);
                        selector.selectedKeys().clear();
                        buf.clear();
                        int n = ch.read(buf);
                        assertTrue(n >= 0, "data before the kill");
                        got += n;
                        transport = ch.getOption(io.hadronio.HadronioSocketOptions.TRANSPORT);
                    }
                    assertTrue(transport.startsWith("ucx:"), "moved to UCX after " + got + " bytes: " + transport);
                    long killed = System.nanoTime();
                    victim.kill();
                    Object end = null;
                    while (end == null && System.nanoTime() - killed < PROMPTLY_SECONDS * 1_000_000_000L) {
                        selector.select(1000);
                        selector.selectedKeys().clear();
                        try {
                            buf.clear();
                            if (ch.read(buf) < 0) {
                                end = "end-of-stream";
                            }
                        } catch (IOException e) {
                            end = e;
                        }
                    }
                    System.out.printf("upgraded connection through a selector, round %d: %s %.1f ms after the kill%n",
                            round, end, (System.nanoTime() - killed) / 1e6);
                    assertInstanceOf(IOException.class, end, "round " + round + ": the read after the writer was killed");
                }
            }
        }
    }

    /** The same while we stream to it and it reads. */
    @Test
    void shouldSurviveAPeerKilledWhileWeStreamToIt() throws Exception {
        for (int round = 0; round < 5; round++) {
            try (ChildJvm victim = ChildJvm.withProvider(EAGER_MODE, "server")) {
                try (SocketChannel ch = onUcx(victim.port(), 'P', Long.MAX_VALUE / 2)) {
                    Task<Long> writer = start("writer", () -> {
                        ByteBuffer buf = ByteBuffer.allocateDirect(1 << 20);
                        long sent = 0;
                        while (true) {
                            buf.clear();
                            sent += ch.write(buf);
                        }
                    });
                    Thread.sleep(50 + 30L * round);
                    victim.kill();
                    Throwable failure = failureWithin(writer);
                    assertInstanceOf(IOException.class, failure, "round " + round
                            + ": the write to a killed reader ends with");
                }
            }
        }
    }
}
