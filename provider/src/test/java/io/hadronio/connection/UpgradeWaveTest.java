package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import io.hadronio.path.ChannelInternals;
import io.hadronio.path.UpgradedPairs;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many connections that start their upgrades at once: a client whose connections all start
 * carrying traffic together (the load mode's 1,000 connections after their first request)
 * asks the server's rendezvous for all their sessions in one burst, more than its backlog
 * holds. Every connection must still move to UCX: a full backlog means "not now", not "no
 * accelerated listener". Regression: with a backlog of 128, 791 of 1,000 connections stayed
 * on their kernel socket for good, and a selector that serves both kinds paid for both. Once
 * moved, their idle sessions cost the rendezvous thread nothing per session.
 */
@Tag("own-properties")
@Timeout(120)
class UpgradeWaveTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    // connections, and the rendezvous' backlog they overrun many times over
    private static final int CONNECTIONS = 200;
    private static final int BACKLOG = 4;

    private int savedBacklog;

    @BeforeEach
    void smallBacklog() {
        savedBacklog = RendezvousListeners.backlog;
        RendezvousListeners.backlog = BACKLOG;
    }

    @AfterEach
    void restoreBacklog() {
        RendezvousListeners.backlog = savedBacklog;
    }

    @Test
    void shouldMoveEveryConnectionOfAWaveOfUpgradesToUcx() throws Exception {
        HadronioProvider provider = UpgradedPairs.upgradingAtSecondWrite();
        List<SocketChannel> clients = new ArrayList<>();
        List<SocketChannel> accepted = new ArrayList<>();
        try (ServerSocketChannel server = provider.openServerSocketChannel()) {
            server.bind(new InetSocketAddress(LOOPBACK, 0), CONNECTIONS);
            for (int i = 0; i < CONNECTIONS; i++) {
                clients.add(provider.openSocketChannel());
                clients.get(i).connect(server.getLocalAddress());
                accepted.add(server.accept());
            }
            // every connection's first write, then the wave: each one's second write starts its upgrade
            // (upgradingAtSecondWrite)
            ByteBuffer out = ByteBuffer.allocate(8);
            ByteBuffer in = ByteBuffer.allocate(8);
            long deadline = System.nanoTime() + 60_000_000_000L;
            for (long round = 0; ; round++) {
                for (int i = 0; i < CONNECTIONS; i++) {
                    exchange(clients.get(i), accepted.get(i), round * CONNECTIONS + i, out, in);
                }
                if (round > 0 && onUcx(clients) == CONNECTIONS && onUcx(accepted) == CONNECTIONS) {
                    break;
                }
                if (System.nanoTime() - deadline > 0) {
                    break;
                }
                Thread.sleep(5);
            }
            assertEquals(Map.of("ucx", CONNECTIONS), paths(clients), "client sides");
            assertEquals(Map.of("ucx", CONNECTIONS), paths(accepted), "server sides");
            idleSessionsCostNoPass(ChannelInternals.rendezvousOf(clients.get(0)));
        } finally {
            for (SocketChannel c : clients) {
                c.close();
            }
            for (SocketChannel c : accepted) {
                c.close();
            }
        }
    }

    /**
     * The moved connections keep their sessions open (their first bytes went raw: PathSwitch),
     * idle: the rendezvous thread neither wakes for them nor polls each of them at its pass.
     * A pass that polled every open session's socket cost in proportion to them, at every
     * message of an upgrade wave and at least once a second.
     */
    private static void idleSessionsCostNoPass(LocalRendezvous rendezvous) throws InterruptedException {
        // (one more pass after the last message, then idle)
        Thread.sleep(1_100);
        long before = rendezvous.passes();
        Thread.sleep(2_000);
        long passes = rendezvous.passes() - before;
        // (both ends' sessions are this JVM's, and every one stays open: each moved after raw bytes)
        assertEquals(2 * CONNECTIONS, rendezvous.lastPolledUpgradeSessions(),
                "sessions open after the move: " + rendezvous.lastPolledUpgradeSessions());
        // its eventfd, the listener's name, the sessions' epoll fd
        assertTrue(rendezvous.lastPollSize() <= 3, "fds a pass polls: " + rendezvous.lastPollSize());
        // one pass a second while idle (the housekeeping's), whatever is open
        assertTrue(passes <= 3, "passes in 2 idle seconds: " + passes);
    }

    /** One 8-byte message each way, checked. */
    private static void exchange(SocketChannel client, SocketChannel peer, long n, ByteBuffer out, ByteBuffer in)
            throws IOException {
        for (SocketChannel[] pair : new SocketChannel[][] {{client, peer}, {peer, client}}) {
            out.clear().putLong(0, n);
            while (out.hasRemaining()) {
                pair[0].write(out);
            }
            in.clear();
            while (in.hasRemaining()) {
                assertTrue(pair[1].read(in) >= 0, "end-of-stream at message " + n);
            }
            assertEquals(n, in.getLong(0), "message " + n);
        }
    }

    private static int onUcx(List<SocketChannel> channels) throws IOException {
        return paths(channels).getOrDefault("ucx", 0);
    }

    /** How many of the channels are on each path ("ucx", or the kernel's: "unix", "tcp"). */
    private static Map<String, Integer> paths(List<SocketChannel> channels) throws IOException {
        Map<String, Integer> counts = new TreeMap<>();
        for (SocketChannel c : channels) {
            String path = c.getOption(HadronioSocketOptions.TRANSPORT);
            counts.merge(path.startsWith("ucx:") ? "ucx" : path, 1, Integer::sum);
        }
        return counts;
    }
}
