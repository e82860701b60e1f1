package io.hadronio.app.grpc;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.NettyServerBuilder;
import io.hadronio.HadronioProvider;
import io.hadronio.app.netty.NettySupport;
import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.channels.spi.SelectorProvider;
import java.util.Collection;
import java.util.concurrent.TimeUnit;

/**
 * gRPC servers and channels on gRPC's Netty transport, pinned to Netty's NIO channels and
 * event loops, so every byte goes through the JVM's NIO provider (with an epoll jar on the
 * class path gRPC would otherwise pick the native transport). Owns the event loops it made.
 */
public final class GrpcTransport implements AutoCloseable {
    private final EventLoopGroup boss = NettySupport.newGroup(1);
    private final EventLoopGroup workers;

    public GrpcTransport(int threads) {
        workers = NettySupport.newGroup(threads);
    }

    /** A started plaintext server at {@code address} with these services. */
    public Server serve(InetSocketAddress address, ServerServiceDefinition... services) throws IOException {
        NettyServerBuilder builder = NettyServerBuilder.forAddress(address)
                .channelType(NioServerSocketChannel.class)
                .bossEventLoopGroup(boss)
                .workerEventLoopGroup(workers);
        for (ServerServiceDefinition s : services) {
            builder.addService(s);
        }
        return builder.build().start();
    }

    /** A plaintext channel to {@code remote} (HTTP/2 connections are made on first use). */
    public ManagedChannel channel(InetSocketAddress remote) {
        return NettyChannelBuilder.forAddress(remote)
                .channelType(NioSocketChannel.class)
                .eventLoopGroup(workers)
                .usePlaintext()
                .build();
    }

    /**
     * As {@link #channel(InetSocketAddress)}, and every Netty channel (TCP connection) it makes
     * is added to {@code made}, so that a benchmark can tell which path its connections took.
     */
    public ManagedChannel channel(InetSocketAddress remote, Collection<Channel> made) {
        return NettyChannelBuilder.forAddress(remote)
                .channelFactory(() -> {
                    NioSocketChannel c = new NioSocketChannel();
                    made.add(c);
                    return c;
                }, InetSocketAddress.class)
                .eventLoopGroup(workers)
                .usePlaintext()
                .build();
    }

    /** "hadronio" or "jdk": the provider this JVM's NIO runs on. */
    public static String provider() {
        return NettySupport.provider();
    }

    /** The provider's class name, for the start-up line. */
    public static String providerClass() {
        return NettySupport.providerClass();
    }

    /**
     * What carries this JVM's connections: {@code ucx} while hadroNIO holds UCX endpoints
     * (one per accelerated connection), {@code kernel-tcp} otherwise. gRPC hides its
     * channels, so this looks at the provider rather than at one connection.
     */
    public static String transport() {
        if (SelectorProvider.provider() instanceof HadronioProvider h) {
            Long endpoints = h.resources().get("ucx.endpoints");
            if (endpoints != null && endpoints > 0) {
                return "ucx";
            }
        }
        return "kernel-tcp";
    }

    @Override
    public void close() {
        boss.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
        workers.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
}
