package io.hadronio.path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Properties;

/** Connections that open plain and move to UCX (hadronio.upgrade), for the tests of this package. */
public final class UpgradedPairs {
    private UpgradedPairs() {
    }

    /** A provider whose connections open plain and may move to UCX at once (no upgrade delay). */
    public static HadronioProvider upgradingAtOnce() {
        return upgrading("0", null);
    }

    /**
     * A provider whose client connections start their upgrades at their second write: the first
     * bytes of each direction go raw, so each connection keeps its upgrade session open after
     * the move (PathSwitch). With no delay ({@link #upgradingAtOnce}) a connection starts at its
     * connect, and one that moves before its first byte ends its session at once.
     */
    public static HadronioProvider upgradingAtSecondWrite() {
        return upgrading("1", "1");
    }

    /** An upgrading provider with this {@code hadronio.upgrade.delay} and {@code .writes} (null: the default). */
    private static HadronioProvider upgrading(String delayMicros, String writes) {
        Properties p = new Properties();
        p.setProperty("hadronio.upgrade", "true");
        p.setProperty("hadronio.upgrade.delay", delayMicros);
        if (writes != null) {
            p.setProperty("hadronio.upgrade.writes", writes);
        }
        p.setProperty("hadronio.local.stream", System.getProperty("test.local.stream", "true"));
        return new HadronioProvider(HadronioConfig.from(p));
    }

    /**
     * Ping-pong of numbered 8-byte messages (both channels blocking) until both directions carry
     * their bytes over UCX; every message must arrive whole and in order.
     */
    public static void moveToUcx(SocketChannel client, SocketChannel accepted) throws Exception {
        ByteBuffer out = ByteBuffer.allocate(8);
        ByteBuffer in = ByteBuffer.allocate(8);
        for (long i = 0; i < 10_000; i++) {
            for (SocketChannel[] pair : new SocketChannel[][] {{client, accepted}, {accepted, client}}) {
                out.clear().putLong(0, i);
                while (out.hasRemaining()) {
                    pair[0].write(out);
                }
                in.clear();
                while (in.hasRemaining()) {
                    assertTrue(pair[1].read(in) >= 0, "end-of-stream at message " + i);
                }
                assertEquals(i, in.getLong(0), "message " + i);
            }
            if (onUcx(client) && onUcx(accepted)) {
                return;
            }
            Thread.sleep(1);
        }
        throw new AssertionError("no move to UCX: " + client.getOption(HadronioSocketOptions.TRANSPORT)
                + " / " + accepted.getOption(HadronioSocketOptions.TRANSPORT));
    }

    private static boolean onUcx(SocketChannel c) throws IOException {
        return c.getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:");
    }
}
