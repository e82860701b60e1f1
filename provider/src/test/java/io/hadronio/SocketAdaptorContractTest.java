package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * What a channel's socket adaptor reports, on the JDK's provider and on hadroNIO alike: the
 * local address of a socket that is not bound or is closed (java.net.Socket: the wildcard
 * address), and SO_OOBINLINE as set, before a connect and after it, whichever path the
 * connection takes.
 */
@Timeout(30)
class SocketAdaptorContractTest extends ContractSupport {
    @ParameterizedTest
    @MethodSource("providers")
    void shouldReportTheWildcardAddressWhileUnboundAndOnceClosed(SelectorProvider provider) throws Exception {
        SocketChannel ch = provider.openSocketChannel();
        Socket s = ch.socket();
        assertTrue(s.getLocalAddress().isAnyLocalAddress(), "unbound: " + s.getLocalAddress());
        ch.bind(new InetSocketAddress(LOOPBACK, 0));
        assertEquals(LOOPBACK, s.getLocalAddress());
        ch.close();
        assertTrue(s.getLocalAddress().isAnyLocalAddress(), "closed: " + s.getLocalAddress());
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldKeepOobInlineSetBeforeTheConnect(SelectorProvider provider) throws Exception {
        try (SocketChannel ch = provider.openSocketChannel()) {
            Socket s = ch.socket();
            assertFalse(s.getOOBInline());
            s.setOOBInline(true);
            assertTrue(s.getOOBInline(), "unconnected");
        }
        try (Connected pair = connect(provider)) {
            Socket s = pair.client().socket();
            s.setOOBInline(true);
            assertTrue(s.getOOBInline(), "connected");
            s.setOOBInline(false);
            assertFalse(s.getOOBInline(), "connected, cleared");
        }
    }
}
