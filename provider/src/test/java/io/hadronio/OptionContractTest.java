package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertThrows;

import java.net.StandardSocketOptions;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code SocketChannel.setOption}/{@code getOption} check in the JDK's order, on both providers:
 * an option the channel does not support is {@link UnsupportedOperationException} even on a
 * closed channel, a value of the wrong type {@link IllegalArgumentException}, and only then a
 * closed channel {@link ClosedChannelException}.
 */
@Timeout(30)
class OptionContractTest extends ContractSupport {
    @ParameterizedTest
    @MethodSource("providers")
    void shouldCheckTheOptionBeforeTheChannel(SelectorProvider provider) throws Exception {
        SocketChannel ch = provider.openSocketChannel();
        ch.close();
        assertThrows(UnsupportedOperationException.class,
                () -> ch.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, true));
        assertThrows(UnsupportedOperationException.class, () -> ch.getOption(StandardSocketOptions.IP_MULTICAST_LOOP));
        assertThrows(ClosedChannelException.class, () -> ch.setOption(StandardSocketOptions.TCP_NODELAY, true));
        assertThrows(ClosedChannelException.class, () -> ch.getOption(StandardSocketOptions.TCP_NODELAY));
    }

    @ParameterizedTest
    @MethodSource("providers")
    @SuppressWarnings({"unchecked", "rawtypes"})
    void shouldRefuseAValueOfTheWrongType(SelectorProvider provider) throws Exception {
        try (SocketChannel ch = provider.openSocketChannel()) {
            java.net.SocketOption raw = StandardSocketOptions.TCP_NODELAY;
            assertThrows(IllegalArgumentException.class, () -> ch.setOption(raw, 42));
        }
    }
}
