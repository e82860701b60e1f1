package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.InetSocketAddress;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code SocketChannel.bind}'s exceptions, on the JDK's provider and on hadroNIO: a socket that
 * is bound, explicitly or by its connect, throws {@link AlreadyBoundException} (the only one the
 * method documents for it), a closed one {@link ClosedChannelException}.
 */
@Timeout(30)
class BindContractTest extends ContractSupport {
    @ParameterizedTest
    @MethodSource("providers")
    void shouldRefuseASecondBind(SelectorProvider provider) throws Exception {
        try (SocketChannel ch = provider.openSocketChannel()) {
            ch.bind(new InetSocketAddress(LOOPBACK, 0));
            assertThrows(AlreadyBoundException.class, () -> ch.bind(new InetSocketAddress(LOOPBACK, 0)));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldRefuseABindOnAConnectedChannel(SelectorProvider provider) throws Exception {
        try (Connected pair = connect(provider)) {
            // both ends: a connected client's socket and an accepted one (hadroNIO's may be a
            // local stream, whose socket is not a TCP one)
            assertThrows(AlreadyBoundException.class, () -> pair.client().bind(new InetSocketAddress(LOOPBACK, 0)));
            assertThrows(AlreadyBoundException.class, () -> pair.server().bind(new InetSocketAddress(LOOPBACK, 0)));
        }
    }

    @ParameterizedTest
    @MethodSource("providers")
    void shouldRefuseABindAfterClose(SelectorProvider provider) throws Exception {
        SocketChannel ch = provider.openSocketChannel();
        ch.close();
        assertThrows(ClosedChannelException.class, () -> ch.bind(new InetSocketAddress(LOOPBACK, 0)));
    }
}
