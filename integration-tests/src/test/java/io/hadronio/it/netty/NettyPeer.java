package io.hadronio.it.netty;

import io.hadronio.it.Data;
import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.AbstractNioChannel;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectableChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The JVMs of the Netty integration tests: unmodified Netty code on its NIO transport
 * (whatever provider the JVM was started with). Reports on stdout, one line per event;
 * a server runs until its stdin closes.
 *
 * <p>Every peer says what it runs on: {@code PROVIDER class} at start, and each connection's
 * report ends with {@code nioClass transports} of the NIO channel under Netty's.
 *
 * <ul>
 * <li>{@code echo-server}: prints {@code PORT n}; echoes everything on every connection; at each
 *     connection's end prints {@code ECHOED count crc mismatch channel} (bytes checked against the test stream).
 * <li>{@code echo-client port connections size...}: opens the connections at once; on each, sends
 *     messages of the given sizes one after the other (together the first bytes of the test stream),
 *     each after the echo of the one before arrived, checks every echoed byte; prints
 *     {@code RECEIVED count crc mismatch channel} per connection, then {@code DONE}.
 * <li>{@code sink-server}: prints {@code PORT n}; reads every connection to its end and prints
 *     {@code RECEIVED count crc mismatch channel}.
 * <li>{@code reply-server}: prints {@code PORT n}; with half-closure allowed, reads each connection
 *     to its end-of-stream (the client's shutdownOutput), prints {@code RECEIVED count crc mismatch channel},
 *     then sends the same number of stream bytes back and closes.
 * <li>{@code half-close-client port n}: sends n stream bytes, shuts its output down, reads the
 *     reply to its end and prints {@code RECEIVED count crc mismatch channel}.
 * <li>{@code write-close-client port outside|inside exit|stay size...}: one connection per size,
 *     one after the other: {@code writeAndFlush(message); close()} at once (from the main thread, or
 *     inside {@code channelActive}), waits only for the close, prints {@code CHANNEL channel}
 *     and {@code CLOSED size}. Then
 *     {@code exit}: leaves the JVM at once; {@code stay}: prints {@code DONE} and waits for stdin to close.
 * </ul>
 */
public final class NettyPeer {
    private NettyPeer() {
    }

    public static void main(String[] args) throws Exception {
        say("PROVIDER " + SelectorProvider.provider().getClass().getName());
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            switch (args[0]) {
                case "echo-server" -> server(group, true);
                case "sink-server" -> server(group, false);
                case "reply-server" -> replyServer(group);
                case "half-close-client" -> halfCloseClient(group, Integer.parseInt(args[1]), Long.parseLong(args[2]));
                case "echo-client" -> echoClient(group, Integer.parseInt(args[1]), Integer.parseInt(args[2]),
                        Arrays.stream(args, 3, args.length).mapToInt(Integer::parseInt).toArray());
                case "write-close-client" -> writeCloseClient(group, Integer.parseInt(args[1]), args[2].equals("inside"),
                        args[3].equals("exit"), Arrays.stream(args, 4, args.length).mapToInt(Integer::parseInt).toArray());
                default -> throw new IllegalArgumentException("unknown mode " + args[0]);
            }
        } catch (Throwable t) {
            say("ERROR " + t);
            t.printStackTrace(System.out);
            System.out.flush();
            System.exit(3);
        }
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        System.exit(0);
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    /** The NIO channel under a Netty channel: its class and, on hadroNIO, the UCX transports it uses. */
    static String describe(Channel channel) {
        try {
            Method javaChannel = AbstractNioChannel.class.getDeclaredMethod("javaChannel");
            javaChannel.setAccessible(true);
            SelectableChannel ch = (SelectableChannel) javaChannel.invoke(channel);
            String transports;
            try {
                transports = String.valueOf(ch.getClass().getMethod("transports").invoke(ch)).replace(" ", "");
            } catch (NoSuchMethodException e) {
                transports = "kernel";
            }
            return ch.getClass().getName() + " " + transports;
        } catch (ReflectiveOperationException e) {
            return "unknown " + e;
        }
    }

    /** Checks received bytes against the test stream, counting and summing them. */
    static final class StreamCheck {
        final CRC32 crc = new CRC32();
        long count;
        long mismatch = -1;

        void update(ByteBuf in) {
            int n = in.readableBytes();
            byte[] b = new byte[n];
            in.getBytes(in.readerIndex(), b);
            for (int k = 0; k < n; k++) {
                if (mismatch < 0 && b[k] != Data.at(count + k)) {
                    mismatch = count + k;
                }
            }
            crc.update(b);
            count += n;
        }

        @Override
        public String toString() {
            return count + " " + crc.getValue() + " " + mismatch;
        }
    }

    /** A message: bytes {@code from .. from+size-1} of the test stream. */
    static ByteBuf message(Channel ch, long from, int size) {
        ByteBuf buf = ch.alloc().directBuffer(size);
        for (int k = 0; k < size; k++) {
            buf.writeByte(Data.at(from + k));
        }
        return buf;
    }

    // ---- servers ------------------------------------------------------------------------------

    private static void server(EventLoopGroup group, boolean echo) throws Exception {
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                            final StreamCheck check = new StreamCheck();
                            String channel;

                            @Override
                            public void channelActive(ChannelHandlerContext ctx) {
                                channel = describe(ctx.channel());
                            }

                            @Override
                            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                ByteBuf in = (ByteBuf) msg;
                                check.update(in);
                                if (echo) {
                                    ctx.write(in);
                                } else {
                                    in.release();
                                }
                            }

                            @Override
                            public void channelReadComplete(ChannelHandlerContext ctx) {
                                ctx.flush();
                            }

                            @Override
                            public void channelInactive(ChannelHandlerContext ctx) {
                                say((echo ? "ECHOED " : "RECEIVED ") + check + " " + channel);
                            }

                            @Override
                            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                                say("ERROR " + cause);
                                ctx.close();
                            }
                        });
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        say("PORT " + ((InetSocketAddress) server.localAddress()).getPort());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (stdin.readLine() != null) {
            // the test closes our stdin when it is done with us
        }
        server.close().sync();
    }

    /** One connection of the reply server. */
    private static final class ReplyHandler extends ChannelInboundHandlerAdapter {
        final StreamCheck check = new StreamCheck();

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            check.update(in);
            in.release();
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
            if (event instanceof io.netty.channel.socket.ChannelInputShutdownEvent) {
                say("RECEIVED " + check + " " + describe(ctx.channel()));
                ctx.writeAndFlush(message(ctx.channel(), 0, (int) check.count))
                        .addListener(io.netty.channel.ChannelFutureListener.CLOSE);
            }
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            say("ERROR " + cause);
            ctx.close();
        }
    }

    /** Reads to end-of-stream with half-closure allowed, then answers with as many bytes and closes. */
    private static void replyServer(EventLoopGroup group) throws Exception {
        Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new ReplyHandler());
                    }
                })
                .bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
        say("PORT " + ((InetSocketAddress) server.localAddress()).getPort());
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (stdin.readLine() != null) {
            // the test closes our stdin when it is done with us
        }
        server.close().sync();
    }

    // ---- clients ------------------------------------------------------------------------------

    private static Bootstrap client(EventLoopGroup group, ChannelHandler handler) {
        return new Bootstrap().group(group).channel(NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true).handler(handler);
    }

    private static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(InetAddress.getLoopbackAddress(), port);
    }

    /** Sends the sizes one after the other, each once the previous echo is complete. */
    private static final class EchoingClient extends ChannelInboundHandlerAdapter {
        final int[] sizes;
        final StreamCheck check = new StreamCheck();
        final CompletableFuture<String> result = new CompletableFuture<>();
        int next;
        long sent;
        String channel;

        EchoingClient(int[] sizes) {
            this.sizes = sizes;
        }

        private void sendNext(ChannelHandlerContext ctx) {
            int size = sizes[next++];
            ctx.writeAndFlush(message(ctx.channel(), sent, size));
            sent += size;
        }

        @Override
        public void channelActive(ChannelHandlerContext ctx) {
            channel = describe(ctx.channel());
            sendNext(ctx);
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            check.update(in);
            in.release();
            if (check.count == sent) {
                if (next < sizes.length) {
                    sendNext(ctx);
                } else {
                    result.complete(check + " " + channel);
                    ctx.close();
                }
            } else if (check.count > sent) {
                result.completeExceptionally(new AssertionError("echo longer than sent: " + check));
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            result.completeExceptionally(new AssertionError("closed after " + check + " of " + sent));
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            result.completeExceptionally(cause);
            ctx.close();
        }
    }

    private static void echoClient(EventLoopGroup group, int port, int connections, int[] sizes) throws Exception {
        List<EchoingClient> clients = new ArrayList<>();
        for (int i = 0; i < connections; i++) {
            EchoingClient c = new EchoingClient(sizes);
            clients.add(c);
            client(group, c).connect(loopback(port)).sync();
        }
        for (EchoingClient c : clients) {
            say("RECEIVED " + c.result.get(60, TimeUnit.SECONDS));
        }
        say("DONE");
    }

    /** Writes n bytes, half-closes, reads the reply to its end. */
    private static void halfCloseClient(EventLoopGroup group, int port, long n) throws Exception {
        StreamCheck check = new StreamCheck();
        CompletableFuture<String> done = new CompletableFuture<>();
        Channel ch = client(group, new ChannelInboundHandlerAdapter() {
            @Override
            public void channelRead(ChannelHandlerContext ctx, Object msg) {
                ByteBuf in = (ByteBuf) msg;
                check.update(in);
                in.release();
            }

            @Override
            public void channelInactive(ChannelHandlerContext ctx) {
                done.complete(check.toString());
            }

            @Override
            public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
                done.completeExceptionally(cause);
                ctx.close();
            }
        }).connect(loopback(port)).sync().channel();
        String channel = describe(ch);
        ch.writeAndFlush(message(ch, 0, (int) n)).sync();
        ((SocketChannel) ch).shutdownOutput().sync();
        say("RECEIVED " + done.get(60, TimeUnit.SECONDS) + " " + channel);
    }

    /** writeAndFlush(message) and close() at once, on one connection per size. */
    private static void writeCloseClient(EventLoopGroup group, int port, boolean inside, boolean exit, int[] sizes)
            throws Exception {
        for (int size : sizes) {
            Channel ch;
            if (inside) {
                ch = client(group, new ChannelInboundHandlerAdapter() {
                    @Override
                    public void channelActive(ChannelHandlerContext ctx) {
                        say("CHANNEL " + describe(ctx.channel()));
                        ctx.writeAndFlush(message(ctx.channel(), 0, size));
                        ctx.close();
                    }
                }).connect(loopback(port)).sync().channel();
            } else {
                ch = client(group, new ChannelInboundHandlerAdapter()).connect(loopback(port)).sync().channel();
                say("CHANNEL " + describe(ch));
                ch.writeAndFlush(message(ch, 0, size));
                ch.close();
            }
            ch.closeFuture().sync();
            say("CLOSED " + size);
        }
        if (exit) {
            // what a program does that returns right after closing: nothing waits for the bytes
            System.exit(0);
        }
        say("DONE");
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        while (stdin.readLine() != null) {
            // stay alive until the test is done
        }
    }
}
