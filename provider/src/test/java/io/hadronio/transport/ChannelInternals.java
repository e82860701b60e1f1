package io.hadronio.transport;

import java.lang.reflect.Field;
import java.nio.channels.SocketChannel;

/** What a test may look at inside a hadroNIO channel (the channel's private fields). */
public final class ChannelInternals {
    private ChannelInternals() {
    }

    public static ConnectionLifecycle lifeOf(SocketChannel channel) throws ReflectiveOperationException {
        Field f = channel.getClass().getDeclaredField("life");
        f.setAccessible(true);
        return (ConnectionLifecycle) f.get(channel);
    }

    /** The upgrade wants the channel converted and waits for the threads inside it to leave. */
    public static boolean conversionPending(SocketChannel channel) throws ReflectiveOperationException {
        Field f = channel.getClass().getDeclaredField("afterConversion");
        f.setAccessible(true);
        return f.get(channel) != null;
    }

    /** Upgrade sessions the channel's provider holds parked, waiting for their connection to be accepted. */
    public static int parkedUpgradeSessions(SocketChannel channel) throws ReflectiveOperationException {
        Field r = channel.getClass().getDeclaredField("runtime");
        r.setAccessible(true);
        Upgrades upgrades = ((UcxRuntime) r.get(channel)).upgrades();
        Field f = Upgrades.class.getDeclaredField("sessions");
        f.setAccessible(true);
        synchronized (upgrades) {
            return ((java.util.Map<?, ?>) f.get(upgrades)).size();
        }
    }
}
