package io.hadronio.connection;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Which accepted connections a server expects a handshake from: one per registration of
 * their client's port.
 */
// no provider, no connection mode: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(60)
class RendezvousClaimTest {
    private static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();
    private static final Secret KEY = Secret.of(new byte[Secret.LENGTH]);
    private static final Runnable NOBODY = () -> { };

    /**
     * A client registers its port and resets its connection before the server accepts it: the
     * port is free at once, and the kernel may give it to the next client, which registers it
     * too while the dead connection still waits in the accept queue. The dead connection is
     * accepted first. With one registration per port it took the only claim, and the live
     * client's handshake was served to the application as plain data (HandshakeFuzzTest's
     * keyed attacker, about one input in 75,000: "expected a SERVER_HELLO, got" its own hello
     * echoed).
     */
    @Test
    void shouldExpectAHandshakeOnceForEveryRegistrationOfAPort() throws Exception {
        LocalRendezvous server = new LocalRendezvous(KEY, 2_000);
        LocalRendezvous client = new LocalRendezvous(KEY, 2_000);
        // the port is ours while the test runs, so that no other rendezvous answers on its name
        try (ServerSocket reserved = new ServerSocket(0)) {
            int port = reserved.getLocalPort();
            InetSocketAddress destination = new InetSocketAddress(LOOPBACK, port);
            InetSocketAddress from = new InetSocketAddress(LOOPBACK, 40_123);
            server.listen(LOOPBACK, port, NOBODY);
            try {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
                assertTrue(client.register(destination, () -> from, deadline), "the first client");
                assertTrue(client.register(destination, () -> from, deadline), "the next client on the same port");
                assertEquals(2, server.expectedRegistrations());

                assertTrue(server.claim(from, port), "the dead connection, accepted first");
                assertTrue(server.claim(from, port), "the live connection: its handshake follows");
                assertFalse(server.claim(from, port), "a third connection from the port registered nothing");
                assertEquals(0, server.expectedRegistrations());
            } finally {
                server.unlisten(LOOPBACK, port, NOBODY);
            }
        }
    }
}
