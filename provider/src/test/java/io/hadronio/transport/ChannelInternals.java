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
}
