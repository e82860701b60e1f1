package io.hadronio.transport;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioConfig;
import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Properties;

/** Connections that open plain and move to UCX (hadronio.upgrade), for the tests of this package. */
final class UpgradedPairs {
    private UpgradedPairs() {
    }

    /** A provider whose connections open plain and may move to UCX at once (no upgrade delay). */
    static HadronioProvider upgradingAtOnce() {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        p.setProperty("hadronio.upgrade.delay", "0");
        return new HadronioProvider(HadronioConfig.from(p));
    }

    /** Ping-pong (both channels blocking) until both directions carry their bytes over UCX. */
    static void moveToUcx(SocketChannel client, SocketChannel accepted) throws Exception {
        ByteBuffer b = ByteBuffer.allocate(8);
        for (int i = 0; i < 10_000; i++) {
            for (SocketChannel[] pair : new SocketChannel[][] {{client, accepted}, {accepted, client}}) {
                b.clear();
                while (b.hasRemaining()) {
                    pair[0].write(b);
                }
                b.clear();
                while (b.hasRemaining()) {
                    assertTrue(pair[1].read(b) >= 0);
                }
            }
            if (onUcx(client) && onUcx(accepted)) {
                return;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("no move to UCX: " + client.getOption(HadronioSocketOptions.TRANSPORT));
    }

    private static boolean onUcx(SocketChannel c) throws IOException {
        return c.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:");
    }
}
