package io.hadronio.transport;

import java.lang.reflect.Field;
import java.nio.channels.SocketChannel;

/** What a test may look at inside a hadroNIO channel: its lifecycle (the channel's private field). */
public final class ChannelInternals {
    private ChannelInternals() {
    }

    public static ConnectionLifecycle lifeOf(SocketChannel channel) throws ReflectiveOperationException {
        Field f = channel.getClass().getDeclaredField("life");
        f.setAccessible(true);
        return (ConnectionLifecycle) f.get(channel);
    }
}
