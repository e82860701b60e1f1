package io.hadronio.app.netty;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.bootstrap.ServerBootstrap;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The load mode's Netty server ({@code hadronio load --mode netty}): one event loop echoes
 * every byte back, flushing at the end of each read burst; returns once at least one client
 * connected and all have closed.
 */
public final class NettyEchoServer {
    private NettyEchoServer() {
    }

    public static void serve(InetSocketAddress address) throws Exception {
        EventLoopGroup group = NettySupport.newGroup(1);
        AtomicInteger open = new AtomicInteger();
        CompletableFuture<Void> allGone = new CompletableFuture<>();
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .option(ChannelOption.SO_BACKLOG, 1024)
                    .childOption(ChannelOption.TCP_NODELAY, true)
                    .childHandler(new Echo(open, allGone))
                    .bind(address).sync().channel();
            System.out.println("listening on " + server.localAddress() + " (provider " + NettySupport.providerClass()
                    + ", netty echo)");
            System.out.flush();
            try {
                allGone.get();
            } finally {
                server.close().sync();
            }
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    @ChannelHandler.Sharable
    private static final class Echo extends ChannelInboundHandlerAdapter {
        private final AtomicInteger open;
        private final CompletableFuture<Void> allGone;

        Echo(AtomicInteger open, CompletableFuture<Void> allGone) {
            this.open = open;
            this.allGone = allGone;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            open.incrementAndGet();
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ctx.write(msg, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            if (open.decrementAndGet() == 0) {
                allGone.complete(null);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            ctx.close();
        }
    }
}
