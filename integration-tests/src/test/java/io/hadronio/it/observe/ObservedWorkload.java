package io.hadronio.it.observe;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A JVM (hadroNIO as its provider) whose socket I/O the observability tests look at, one
 * connection of each kind, each reported on stdout with its client's local port:
 * <ul>
 * <li>{@code BLOCKING port bytes}: blocking channels, ROUNDS round trips of REQUEST bytes each
 *     way; the server waits SLOW_MILLIS before each answer, so every client read blocks that long
 *     (past the JDK's default 1-ms threshold for socket reads).</li>
 * <li>{@code NETTY port serverPort bytes}: Netty's NIO transport, an echo of NETTY_BYTES in chunks.</li>
 * <li>{@code PLAIN port}: a blocking channel to a {@code java.net.ServerSocket} (the JDK's own
 *     socket, not hadroNIO): a plain peer.</li>
 * <li>{@code LOCAL port} (with {@code hold}): a hadroNIO pair that wrote once, so its upgrade
 *     never began (it begins at a later write).</li>
 * </ul>
 * With {@code hold} it then prints {@code READY} and keeps every connection open until stdin
 * closes (for {@code hadronio ss}); otherwise it closes them, prints {@code DONE} and exits.
 */
public final class ObservedWorkload {
    static final int ROUNDS = 5;
    static final int REQUEST = 1000;
    static final int SLOW_MILLIS = 30;
    static final int NETTY_BYTES = 64 * 1024;

    private ObservedWorkload() {
    }

    public static void main(String[] args) throws Exception {
        boolean hold = args.length > 0 && args[0].equals("hold");
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            CompletableFuture<java.nio.channels.SocketChannel> accepted = CompletableFuture.supplyAsync(() -> {
                try {
                    java.nio.channels.SocketChannel peer = server.accept();
                    ByteBuffer b = ByteBuffer.allocate(REQUEST);
                    for (int r = 0; r < ROUNDS; r++) {
                        b.clear();
                        while (b.hasRemaining()) {
                            if (peer.read(b) < 0) {
                                throw new java.io.EOFException();
                            }
                        }
                        Thread.sleep(SLOW_MILLIS);
                        b.flip();
                        while (b.hasRemaining()) {
                            peer.write(b);
                        }
                    }
                    return peer;
                } catch (Exception e) {
                    throw new RuntimeException(e);
                }
            });
            java.nio.channels.SocketChannel client = java.nio.channels.SocketChannel.open(server.getLocalAddress());
            ByteBuffer b = ByteBuffer.allocate(REQUEST);
            long read = 0;
            for (int r = 0; r < ROUNDS; r++) {
                b.clear();
                while (b.hasRemaining()) {
                    client.write(b);
                }
                b.clear();
                while (b.hasRemaining()) {
                    read += client.read(b);
                }
            }
            java.nio.channels.SocketChannel peer = accepted.get(30, TimeUnit.SECONDS);
            say("BLOCKING " + ((InetSocketAddress) client.getLocalAddress()).getPort() + " " + read);

            long[] netty = netty();
            say("NETTY " + netty[0] + " " + netty[1] + " " + netty[2]);

            try (ServerSocket plain = new ServerSocket(0, 50, InetAddress.getLoopbackAddress())) {
                java.nio.channels.SocketChannel toPlain = java.nio.channels.SocketChannel.open(
                        new InetSocketAddress(InetAddress.getLoopbackAddress(), plain.getLocalPort()));
                try (Socket s = plain.accept()) {
                    OutputStream out = s.getOutputStream();
                    InputStream in = s.getInputStream();
                    // two writes: the second is the one an upgrade would start at
                    for (int i = 0; i < 2; i++) {
                        toPlain.write(ByteBuffer.allocate(100));
                        in.readNBytes(100);
                        Thread.sleep(5);
                    }
                    out.write(new byte[10]);
                    say("PLAIN " + ((InetSocketAddress) toPlain.getLocalAddress()).getPort());
                    if (hold) {
                        holdWithAnIdlePair(server);
                    }
                }
                toPlain.close();
            }
            client.close();
            peer.close();
        }
        say("DONE");
        System.exit(0);
    }

    /** A pair that wrote once (its upgrade never begins), held with the others until stdin closes. */
    private static void holdWithAnIdlePair(ServerSocketChannel server) throws Exception {
        try (java.nio.channels.SocketChannel idle = java.nio.channels.SocketChannel.open(server.getLocalAddress());
             java.nio.channels.SocketChannel idlePeer = server.accept()) {
            idle.write(ByteBuffer.allocate(10));
            ByteBuffer b = ByteBuffer.allocate(10);
            while (b.hasRemaining()) {
                idlePeer.read(b);
            }
            say("LOCAL " + ((InetSocketAddress) idle.getLocalAddress()).getPort());
            say("READY");
            while (System.in.read() >= 0) {
                // until stdin closes
            }
        }
    }

    /** A Netty echo of NETTY_BYTES; returns the client's local port, the server's and the bytes echoed. */
    private static long[] netty() throws Exception {
        EventLoopGroup group = new MultiThreadIoEventLoopGroup(1, NioIoHandler.newFactory());
        try {
            Channel server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(new ChannelInboundHandlerAdapter() {
                                @Override
                                public void channelRead(ChannelHandlerContext ctx, Object msg) {
                                    ctx.writeAndFlush(msg);
                                }
                            });
                        }
                    }).bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0)).sync().channel();
            AtomicLong echoed = new AtomicLong();
            CountDownLatch done = new CountDownLatch(1);
            Channel client = new Bootstrap().group(group).channel(NioSocketChannel.class)
                    .handler(new ChannelInboundHandlerAdapter() {
                        @Override
                        public void channelRead(ChannelHandlerContext ctx, Object msg) {
                            ByteBuf buf = (ByteBuf) msg;
                            if (echoed.addAndGet(buf.readableBytes()) >= NETTY_BYTES) {
                                done.countDown();
                            }
                            buf.release();
                        }
                    }).connect(server.localAddress()).sync().channel();
            for (int sent = 0; sent < NETTY_BYTES; sent += 4096) {
                client.writeAndFlush(Unpooled.wrappedBuffer(new byte[4096])).sync();
                Thread.sleep(1);
            }
            if (!done.await(30, TimeUnit.SECONDS)) {
                throw new AssertionError("echoed " + echoed.get() + " of " + NETTY_BYTES);
            }
            long port = ((InetSocketAddress) client.localAddress()).getPort();
            long serverPort = ((InetSocketAddress) server.localAddress()).getPort();
            client.close().sync();
            server.close().sync();
            return new long[] {port, serverPort, echoed.get()};
        } finally {
            group.shutdownGracefully(0, 0, TimeUnit.SECONDS).sync();
        }
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
