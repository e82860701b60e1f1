package io.hadronio.app.netty;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;

/** The server side of one benchmark connection: reads the client's settings, then the data. */
abstract class BenchmarkServerHandler extends ChannelInboundHandlerAdapter {
    private final BenchmarkServerState state;
    private ByteBuf header;
    private BenchmarkHeader settings;
    private boolean failed;

    BenchmarkServerHandler(BenchmarkServerState state) {
        this.state = state;
    }

    /** Connections the server waits for, from the settings. */
    long expectedConnections(BenchmarkHeader s) {
        return s.connections();
    }

    /** The settings arrived. */
    void begin(ChannelHandlerContext ctx, BenchmarkHeader s) {
    }

    /** Data after the settings; the handler owns {@code in}. */
    abstract void data(ChannelHandlerContext ctx, ByteBuf in);

    @Override
    public void handlerAdded(ChannelHandlerContext ctx) {
        header = ctx.alloc().heapBuffer(BenchmarkHeader.LENGTH, BenchmarkHeader.LENGTH);
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf in = (ByteBuf) msg;
        if (settings == null) {
            header.writeBytes(in, Math.min(in.readableBytes(), header.writableBytes()));
            if (header.isWritable()) {
                in.release();
                return;
            }
            settings = BenchmarkHeader.read(header);
            header.release();
            header = null;
            state.expect(expectedConnections(settings));
            begin(ctx, settings);
            if (!in.isReadable()) {
                in.release();
                return;
            }
        }
        data(ctx, in);
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (header != null) {
            header.release();
            header = null;
        }
        if (settings != null) {
            state.finished(failed);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        System.out.println("connection " + ctx.channel().remoteAddress() + " failed: " + cause);
        failed = true;
        ctx.close();
    }

    /** Echoes everything (latency, connection set-up). */
    static final class Echo extends BenchmarkServerHandler {
        private boolean countsConnections;

        Echo(BenchmarkServerState state) {
            super(state);
        }

        @Override
        long expectedConnections(BenchmarkHeader s) {
            // the connection benchmark announces its connection count as warm-up + measured messages
            return countsConnections ? s.warmup() + s.messages() : s.connections();
        }

        Echo countingConnections() {
            countsConnections = true;
            return this;
        }

        @Override
        void data(ChannelHandlerContext ctx, ByteBuf in) {
            ctx.write(in, ctx.voidPromise());
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) {
            ctx.flush();
        }
    }

    /** Counts what arrives and acknowledges the end of the warm-up and of the measured messages (throughput). */
    static final class Sink extends BenchmarkServerHandler {
        private long received;
        private long warmupBytes;
        private long totalBytes;
        private boolean warmupAcked;

        Sink(BenchmarkServerState state) {
            super(state);
        }

        @Override
        void begin(ChannelHandlerContext ctx, BenchmarkHeader s) {
            warmupBytes = s.warmup() * s.length();
            totalBytes = (s.warmup() + s.messages()) * s.length();
            check(ctx);
        }

        @Override
        void data(ChannelHandlerContext ctx, ByteBuf in) {
            received += in.readableBytes();
            in.release();
            check(ctx);
        }

        private void check(ChannelHandlerContext ctx) {
            if (!warmupAcked && received >= warmupBytes) {
                warmupAcked = true;
                ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(1), ctx.voidPromise());
            }
            if (warmupAcked && received == totalBytes && totalBytes > 0) {
                totalBytes = -1;
                ctx.writeAndFlush(ctx.alloc().buffer(1).writeByte(2), ctx.voidPromise());
            }
        }
    }
}
