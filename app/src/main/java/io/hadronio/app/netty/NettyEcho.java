package io.hadronio.app.netty;

import io.hadronio.app.Role;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.SocketAddressConverter;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
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
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.Callable;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hadronio netty echo}: the client reads lines from stdin, sends each and prints
 * the echo; the server echoes every line of every client until it is stopped.
 */
@Command(name = "echo", mixinStandardHelpOptions = true,
        description = "Netty line echo: the client sends the lines of stdin and prints each echo.")
final class NettyEcho implements Callable<Integer> {
    private static final int MAX_LINE = 1 << 20;
    // what the client's handler passes to the main thread at end-of-stream
    private static final String EOF = new String("EOF");


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
            return role.server ? serve(group) : client(group);
        } finally {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        }
    }

    private static void lineCodec(Channel ch) {
        ch.pipeline().addLast(new LineBasedFrameDecoder(MAX_LINE),
                new StringDecoder(StandardCharsets.UTF_8), new StringEncoder(StandardCharsets.UTF_8));
    }

    private int serve(EventLoopGroup group) throws Exception {
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        lineCodec(ch);
                        ch.pipeline().addLast(new SimpleChannelInboundHandler<String>() {
                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                System.out.println("connected: " + ctx.channel().remoteAddress() + " over "
                                        + NettySupport.transport(ctx.channel()));
                            }

                            @Override
                            protected void channelRead0(ChannelHandlerContext ctx, String line) {
                                System.out.println("echoing: " + line);
                                ctx.writeAndFlush(line + "\n");
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                System.out.println("disconnected: " + ctx.channel().remoteAddress());
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                System.out.println("error: " + cause);
                                ctx.close();
                            }
                        });
                    }
                })
                .bind(address).sync().channel();
        System.out.println("listening on " + server.localAddress() + " (provider " + NettySupport.providerClass() + ")");
        System.out.flush();
        server.closeFuture().sync();
        return 0;
    }

    private int client(EventLoopGroup group) throws Exception {
        BlockingQueue<Object> echoes = new LinkedBlockingQueue<>();
        Channel ch = NettySupport.connect(NettySupport.client(group, new ChannelInitializer<SocketChannel>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                lineCodec(ch);
                ch.pipeline().addLast(new SimpleChannelInboundHandler<String>() {
                    @Override
                    protected void channelRead0(ChannelHandlerContext ctx, String line) {
                        echoes.add(line);
                    }

                    @Override
                    public void channelInactive(ChannelHandlerContext ctx) {
                        echoes.add(EOF);
                    }

                    @Override
                    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                        echoes.add(cause);
                        ctx.close();
                    }
                });
            }
        }), role.remote);
        System.out.println("connected to " + ch.remoteAddress() + " (" + NettySupport.provider() + ", "
                + NettySupport.transport(ch) + "); type lines, end with EOF (Ctrl-D)");
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        int status = 0;
        while ((line = stdin.readLine()) != null) {
            ch.writeAndFlush(line + "\n");
            Object echo = echoes.poll(30, TimeUnit.SECONDS);
            if (echo == null || echo == EOF || echo instanceof Throwable) {
                System.out.println("no echo: " + (echo == null ? "timeout" : echo == EOF ? "server closed" : echo));
                status = 1;
                break;
            }
            System.out.println("echo: " + echo);
            System.out.flush();
        }
        ch.close().sync();
        return status;
    }
}
