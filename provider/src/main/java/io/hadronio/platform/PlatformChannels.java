package io.hadronio.platform;

import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.nio.channels.SelectableChannel;

/**
 * What a selector needs to know about channels of the JDK's provider
 * ({@code sun.nio.ch.SelChImpl}): their fd, and {@code kill()}, which finishes the close
 * of a channel that was registered when it was closed.
 */
public final class PlatformChannels {
    private static final Class<?> SEL_CH_IMPL;
    private static final MethodHandle GET_FD_VAL;
    private static final MethodHandle KILL;

    static {
        JdkInternals.ensureExported();
        try {
            SEL_CH_IMPL = Class.forName("sun.nio.ch.SelChImpl");
            MethodHandles.Lookup lookup = MethodHandles.lookup();
            // typed for invokeExact: a generic invoke adapted the type at every call, ~6 % of a
            // plain accept's samples (every channel asks its fd once)
            GET_FD_VAL = lookup.findVirtual(SEL_CH_IMPL, "getFDVal", MethodType.methodType(int.class))
                    .asType(MethodType.methodType(int.class, SelectableChannel.class));
            KILL = lookup.findVirtual(SEL_CH_IMPL, "kill", MethodType.methodType(void.class))
                    .asType(MethodType.methodType(void.class, SelectableChannel.class));
        } catch (ReflectiveOperationException e) {
            throw new ExceptionInInitializerError(e);
        }
    }

    private PlatformChannels() {
    }

    /**
     * True for channels of the JDK's provider that a poll-based selector can watch, and for
     * hadroNIO's own socket channels, which implement {@code SelChImpl} too (for
     * {@code FileChannel.transferTo}, see {@code nio/SocketChannelFactory}) but have no fd to
     * watch: a caller asks whether a channel is hadroNIO's first.
     */
    public static boolean isPlatformChannel(SelectableChannel channel) {
        return SEL_CH_IMPL.isInstance(channel);
    }

    public static int fd(SelectableChannel channel) {
        try {
            return (int) GET_FD_VAL.invokeExact(channel);
        } catch (Throwable t) {
            throw new IllegalStateException("getFDVal", t);
        }
    }

    /** Releases the fd of a closed channel once no selector holds it any more. */
    public static void kill(SelectableChannel channel) {
        try {
            KILL.invokeExact(channel);
        } catch (Throwable t) {
            throw new IllegalStateException("kill", t);
        }
    }
}
