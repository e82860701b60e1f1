package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioAsynchronousChannelProvider;
import io.hadronio.HadronioSocketOptions;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.Channels;
import java.nio.channels.CompletionHandler;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * NIO.2 on hadroNIO across processes, in the pairings of a mixed deployment: this JVM's
 * asynchronous channels (hadroNIO's {@code AsynchronousChannelProvider} on its
 * {@code SelectorProvider}) against a {@link Peer} child on hadroNIO or on the JDK's provider
 * ({@code contract} mode, the {@link Contract}'s echo roles), as client and as server. Every
 * case sends random bytes through an echo and checks them byte for byte on the way back, and
 * checks the path each side took right after connect/accept ({@link ContractRun#assertTransport}):
 * the accelerated pairing's, plain TCP on our side with a plain child. The client here writes
 * through {@code Channels.newOutputStream} and reads through {@code Channels.newInputStream};
 * the server here echoes with handlers.
 */
@Timeout(120)
class AsynchronousPairingsTest extends ItSupport {
    private static final int SIZE = (4 << 20) + 3;
    private static final java.util.concurrent.atomic.AtomicInteger IDS = new java.util.concurrent.atomic.AtomicInteger();

    enum Pairing {
        ACCELERATED_CLIENT_ACCELERATED_CHILD_SERVER(false, true),
        ACCELERATED_CLIENT_PLAIN_CHILD_SERVER(false, false),
        ACCELERATED_CHILD_CLIENT_ACCELERATED_SERVER(true, true),
        PLAIN_CHILD_CLIENT_ACCELERATED_SERVER(true, false);

        final boolean serverHere;
        final boolean acceleratedChild;

        Pairing(boolean serverHere, boolean acceleratedChild) {
            this.serverHere = serverHere;
            this.acceleratedChild = acceleratedChild;
        }
    }

    /** A contract child and the port it listens on. */
    record Child(ChildJvm jvm, int port) {
    }

    static Child accelerated;
    static Child plain;
    static HadronioAsynchronousChannelProvider async;
    static AsynchronousChannelGroup group;
    static AsynchronousServerSocketChannel listener;

    @BeforeAll
    static void start() throws Exception {
        ChildJvm a = ChildJvm.withProvider("contract");
        ChildJvm p = ChildJvm.withoutProvider("contract");
        accelerated = new Child(a, a.port());
        plain = new Child(p, p.port());
        async = new HadronioAsynchronousChannelProvider(provider());
        group = async.openAsynchronousChannelGroup(2, r -> {
            Thread t = new Thread(r, "it-aio");
            t.setDaemon(true);
            return t;
        });
        listener = async.openAsynchronousServerSocketChannel(group).bind(loopback(0), 16);
        // a JVM's first rendezvous may take longer than a client waits for it (then the connection
        // is plain TCP by design): one unchecked exchange each way first, as MixedPairingsTest does
        exchange(Pairing.ACCELERATED_CLIENT_ACCELERATED_CHILD_SERVER, 1);
        exchange(Pairing.ACCELERATED_CHILD_CLIENT_ACCELERATED_SERVER, 1);
    }

    @AfterAll
    static void stop() throws Exception {
        for (Child c : new Child[] {accelerated, plain}) {
            if (c != null) {
                c.jvm().close();
            }
        }
        if (group != null) {
            group.shutdownNow();
            assertTrue(group.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    @ParameterizedTest
    @EnumSource(Pairing.class)
    void shouldEchoByteForByte(Pairing pairing) throws Exception {
        String[] seen = exchange(pairing, SIZE);
        String expected = pairing.acceleratedChild ? "ucx:" : "tcp";
        ContractRun.assertTransport(expected, seen[0], "this JVM's side of " + pairing);
        ContractRun.assertTransport(pairing.acceleratedChild ? "ucx:" : "jdk", seen[1], "the child's side of " + pairing);
    }

    /**
     * One echo of {@code n} random bytes in {@code pairing}; returns the paths of this side and
     * of the child's, each as it was right after connect/accept.
     */
    private static String[] exchange(Pairing pairing, int n) throws Exception {
        Child child = pairing.acceleratedChild ? accelerated : plain;
        String id = "a" + IDS.incrementAndGet();
        long seed = IDS.get() * 7919L;
        byte[] data = Contract.random(n, seed);
        if (pairing.serverHere) {
            Future<AsynchronousSocketChannel> accepted = listener.accept();
            child.jvm().send("connect " + id + " " + ((InetSocketAddress) listener.getLocalAddress()).getPort()
                    + " ECHO " + n + " " + seed);
            String here;
            try (AsynchronousSocketChannel ch = accepted.get(30, TimeUnit.SECONDS)) {
                here = ch.getOption(HadronioSocketOptions.TRANSPORT);
                echo(ch).get(60, TimeUnit.SECONDS);
            }
            // after the close: the child reads to its end-of-stream
            return new String[] {here, childResult(child, id)};
        }
        child.jvm().send("accept " + id + " ECHO " + n + " " + seed);
        try (AsynchronousSocketChannel ch = async.openAsynchronousSocketChannel(group)) {
            ch.connect(loopback(child.port())).get(30, TimeUnit.SECONDS);
            String here = ch.getOption(HadronioSocketOptions.TRANSPORT);
            Future<?> writer = THREADS.submit(() -> {
                var out = Channels.newOutputStream(ch);
                out.write(data);
                ch.shutdownOutput();
                return null;
            });
            byte[] back = Channels.newInputStream(ch).readAllBytes();
            writer.get(30, TimeUnit.SECONDS);
            Contract.assertSame(data, back, "the echo of " + n + " bytes");
            String childTransport = childResult(child, id);
            return new String[] {here, childTransport};
        }
    }

    /** The child's {@code RESULT id transport OK|FAIL ...} line: fails on FAIL, returns the transport. */
    private static String childResult(Child child, String id) throws InterruptedException {
        String[] r = child.jvm().expect("RESULT " + id + " ").split(" ", 2);
        assertEquals("OK", r[1], () -> "the child's role failed: " + r[1] + "\n" + child.jvm().report());
        return r[0];
    }

    /** Echoes until end-of-stream, then closes: reads and writes chained in handlers. */
    private static CompletableFuture<Void> echo(AsynchronousSocketChannel ch) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        ByteBuffer buf = ByteBuffer.allocateDirect(100_000);
        ch.read(buf, 30, TimeUnit.SECONDS, null, new CompletionHandler<Integer, Void>() {
            private boolean writing;

            @Override
            public void completed(Integer n, Void a) {
                if (!writing && n < 0) {
                    done.complete(null);
                    return;
                }
                if (!writing) {
                    buf.flip();
                    writing = true;
                }
                if (buf.hasRemaining()) {
                    ch.write(buf, 30, TimeUnit.SECONDS, null, this);
                } else {
                    writing = false;
                    buf.clear();
                    ch.read(buf, 30, TimeUnit.SECONDS, null, this);
                }
            }

            @Override
            public void failed(Throwable e, Void a) {
                done.completeExceptionally(e);
            }
        });
        return done;
    }
}
