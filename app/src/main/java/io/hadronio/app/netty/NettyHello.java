package io.hadronio.app.netty;

import io.hadronio.app.Role;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.SocketAddressConverter;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.LineBasedFrameDecoder;
import io.netty.handler.codec.string.StringDecoder;
import io.netty.handler.codec.string.StringEncoder;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hadronio netty hello}: the client sends a greeting, the server answers, both
 * print what they got and close. The server greets one client and exits.
 */
@Command(name = "hello", mixinStandardHelpOptions = true,
        description = "Netty greeting: the client greets, the server answers; both print and close.")
final class NettyHello implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Override
    public Integer call() throws Exception {
        ProviderSelection.apply();
        EventLoopGroup group = NettySupport.newGroup(1);
        try {
            return role.server ? serve(group) : greet(group);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private int serve(EventLoopGroup group) throws Exception {
        CompletableFuture<Void> done = new CompletableFuture<>();
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new LineBasedFrameDecoder(4096),
                                new StringDecoder(StandardCharsets.UTF_8), new StringEncoder(StandardCharsets.UTF_8),
                                new SimpleChannelInboundHandler<String>() {
                                    @Override
                                    protected void channelRead0(ChannelHandlerContext ctx, String greeting) {
                                        System.out.println("received: " + greeting);
                                        ctx.writeAndFlush("Hello from the server (" + NettySupport.provider() + ", "
                                                + NettySupport.transport(ctx.channel()) + ")\n")
                                                .addListener(ChannelFutureListener.CLOSE);
                                    }

                                    @Override
                                    public void channelInactive(ChannelHandlerContext ctx) {
                                        done.complete(null);
                                    }

                                    @Override
                                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                        done.completeExceptionally(cause);
                                        ctx.close();
                                    }
                                });
                    }
                })
                .bind(address).sync().channel();
        System.out.println("listening on " + server.localAddress() + " (provider " + NettySupport.providerClass() + ")");
        System.out.flush();
        try {
            done.get();
        } finally {
            server.close().sync();
        }
        return 0;
    }

    private int greet(EventLoopGroup group) throws Exception {
        CompletableFuture<String> answer = new CompletableFuture<>();
        Channel ch = NettySupport.connect(NettySupport.client(group, new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast(new LineBasedFrameDecoder(4096),
                        new StringDecoder(StandardCharsets.UTF_8), new StringEncoder(StandardCharsets.UTF_8),
                        new SimpleChannelInboundHandler<String>() {
                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, String line) {
                                answer.complete(line);
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                answer.completeExceptionally(new java.io.EOFException("server closed without answering"));
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                answer.completeExceptionally(cause);
                                ctx.close();
                            }
                        });
            }
        }), role.remote);
        ch.writeAndFlush("Hello from the client (" + NettySupport.provider() + ", " + NettySupport.transport(ch) + ")\n");
        System.out.println("received: " + answer.get(30, TimeUnit.SECONDS));
        ch.close().sync();
        return 0;
    }
}
