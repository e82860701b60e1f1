package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.io.OutputStream;
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
 * address), SO_OOBINLINE as set, before a connect and after it, whichever path the
 * connection takes, and what the input stream's {@code available()} counts.
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
    /**
     * The input stream's {@code available()} counts what a read takes without waiting: an
     * application that polls it before reading sees its bytes come, on every path the connection
     * takes (hadroNIO's start on the kernel socket and its move to UCX; UCX from the start in
     * the eager pass); 0 before anything came, at the end of the stream and once the input is shut.
     * Regression: hadroNIO's stream answered 0 always, and such an application waited for ever.
     */
    @ParameterizedTest
    @MethodSource("providers")
    void shouldCountWhatAReadTakesWithoutWaitingInAvailable(SelectorProvider provider) throws Exception {
        try (Connected c = connect(provider)) {
            InputStream in = c.server().socket().getInputStream();
            OutputStream out = c.client().socket().getOutputStream();
            assertEquals(0, in.available(), "nothing sent yet");
            byte[] message = new byte[100];
            long deadline = System.nanoTime() + 20_000_000_000L;
            for (int round = 0; round < 300 || !moved(provider, c); round++) {
                assertTrue(System.nanoTime() < deadline, "the connection never moved to UCX");
                for (int i = 0; i < message.length; i++) {
                    message[i] = (byte) (round + i);
                }
                out.write(message);
                int available;
                while ((available = in.available()) == 0) {
                    assertTrue(System.nanoTime() < deadline, "available() never saw the bytes of round " + round);
                    Thread.onSpinWait();
                }
                assertTrue(available <= message.length, "more available than sent: " + available);
                byte[] got = new byte[message.length];
                assertEquals(available, in.readNBytes(got, 0, available));
                assertEquals(message.length - available, in.readNBytes(got, available, message.length - available));
                assertEquals(java.util.Arrays.toString(message), java.util.Arrays.toString(got), "round " + round);
                if (round % 50 == 49) {
                    Thread.sleep(5);
                }
            }
            c.client().shutdownOutput();
            assertEquals(-1, in.read(), "end of stream");
            assertEquals(0, in.available(), "at the end of the stream");
            c.server().shutdownInput();
            assertEquals(0, in.available(), "input shut");
        }
    }

    /** Whether a hadroNIO connection runs on UCX now (the JDK's: always true, it has one path). */
    private static boolean moved(SelectorProvider provider, Connected c) throws Exception {
        if (!(provider instanceof HadronioProvider)) {
            return true;
        }
        return c.client().getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx")
                && c.server().getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx");
    }
}
