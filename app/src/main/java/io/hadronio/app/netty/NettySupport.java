package io.hadronio.app.netty;

import io.hadronio.app.Transports;
import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.AbstractNioChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.function.Supplier;

/** What the Netty commands share: event loops, connecting, naming provider and transport. */
public final class NettySupport {
    private NettySupport() {
    }

    /** An event-loop group on Netty's NIO transport, which opens its selectors through the JVM's provider. */
    public static EventLoopGroup newGroup(int threads) {
        return new MultiThreadIoEventLoopGroup(threads, NioIoHandler.newFactory());
    }

    /** "hadronio" when the JVM's provider is hadroNIO and UCX works, else "jdk". */
    public static String provider() {
        return Transports.provider();
    }

    /** The provider's class name, for the start-up line. */
    public static String providerClass() {
        return SelectorProvider.provider().getClass().getName();
    }

    /**
     * Connects with {@code bootstrap}, retrying for a few seconds while the server starts
     * (connection refused); returns the connected channel. The bootstrap's handler must be
     * sharable (a {@link io.netty.channel.ChannelInitializer}): a failed attempt has added it
     * to a pipeline already.
     */
    static Channel connect(Bootstrap bootstrap, InetSocketAddress remote) throws InterruptedException {
        return connect(bootstrap, remote, () -> bootstrap.config().handler()).channel();
    }

    /** A connection and the handler it got. */
    record Connected<H extends ChannelHandler>(Channel channel, H handler) {
    }

    /** As {@link #connect(Bootstrap, InetSocketAddress)}, with a fresh handler from {@code handlers} for each attempt. */
    static <H extends ChannelHandler> Connected<H> connect(Bootstrap bootstrap, InetSocketAddress remote,
                                                           Supplier<H> handlers) throws InterruptedException {
        Throwable last = null;
        for (int attempt = 0; attempt < 100; attempt++) {
            H handler = handlers.get();
            ChannelFuture f = bootstrap.clone().handler(handler).connect(remote).await();
            if (f.isSuccess()) {
                return new Connected<>(f.channel(), handler);
            }
            last = f.cause();
            if (!(last instanceof ConnectException)) {
                break;
            }
            Thread.sleep(100);
        }
        throw new IllegalStateException("cannot connect to " + remote + ": " + last, last);
    }

    /** A client bootstrap on Netty's NIO transport with TCP_NODELAY; {@code handler} may be null (set later). */
    static Bootstrap client(EventLoopGroup group, ChannelHandler handler) {
        Bootstrap b = new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true);
        return handler == null ? b : b.handler(handler);
    }

    private static final MethodHandle JAVA_CHANNEL;

    static {
        MethodHandle h;
        try {
            h = MethodHandles.privateLookupIn(AbstractNioChannel.class, MethodHandles.lookup())
                    .findVirtual(AbstractNioChannel.class, "javaChannel", MethodType.methodType(SelectableChannel.class));
        } catch (ReflectiveOperationException | RuntimeException e) {
            h = null;
        }
        JAVA_CHANNEL = h;
    }

    /** The NIO channel under a Netty channel, or null. */
    public static SelectableChannel javaChannel(Channel channel) {
        if (JAVA_CHANNEL == null || !(channel instanceof AbstractNioChannel nio)) {
            return null;
        }
        try {
            return (SelectableChannel) JAVA_CHANNEL.invoke(nio);
        } catch (Throwable e) {
            return null;
        }
    }

    /** "sysv,cma" (UCX transports) for a hadroNIO channel on UCX, "kernel-tcp" for the JDK's ({@link Transports#of}). */
    static String transport(Channel channel) {
        SelectableChannel ch = javaChannel(channel);
        if (ch == null) {
            return "unknown";
        }
        return Transports.of(ch);
    }
}
