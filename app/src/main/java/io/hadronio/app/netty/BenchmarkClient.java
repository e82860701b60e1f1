package io.hadronio.app.netty;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.PracticeRounds;
import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoopGroup;
import java.io.EOFException;
import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The client side of one benchmark connection: sends the settings, runs the warm-up and
 * the measured part on the event loop, and completes {@link #result()}.
 */
abstract class BenchmarkClient<R> extends ChannelInboundHandlerAdapter {
    final BenchmarkHeader settings;
    final CompletableFuture<R> result = new CompletableFuture<>();
    // one message's bytes; each write sends a retained duplicate (pooled, nothing allocated per message)
    ByteBuf template;
    String transport = "unknown";

    BenchmarkClient(BenchmarkHeader settings) {
        this.settings = settings;
    }

    CompletableFuture<R> result() {
        return result;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        transport = NettySupport.transport(ctx.channel());
        template = ctx.alloc().directBuffer(settings.length(), settings.length()).writeZero(settings.length());
        ByteBuf header = ctx.alloc().buffer(BenchmarkHeader.LENGTH);
        settings.write(header);
        ctx.write(header, ctx.voidPromise());
        start(ctx);
    }

    /** Connected and the settings are written (not flushed). */
    abstract void start(ChannelHandlerContext ctx);

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (template != null) {
            template.release();
            template = null;
        }
        result.completeExceptionally(new EOFException("connection closed before the benchmark ended"));
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        result.completeExceptionally(cause);
        ctx.close();
    }

    record LatencyRun(long[] rtt, long start, long end, String transport) {
    }

    /**
     * Ping-pong: one message in flight; its round trip ends when all its bytes came back. The
     * warm-up is {@link PracticeRounds}: every round, practice or measured, runs the same code on
     * the event loop, so that the measured round starts in the code the JIT compiled for it.
     */
    static final class Latency extends BenchmarkClient<LatencyRun> {
        private final long[] rtt;
        private final long[] rounds;
        private int round;
        // round trips of this round so far
        private int done;
        private long received;
        private long sentAt;
        private long start;

        Latency(BenchmarkHeader settings) {
            super(settings);
            this.rtt = new long[Math.toIntExact(settings.messages())];
            this.rounds = PracticeRounds.of(settings.warmup(), settings.messages());
        }

        @Override
        void start(ChannelHandlerContext ctx) {
            beginRound();
            send(ctx);
        }

        private void beginRound() {
            done = 0;
            MeasurementWindow.openRound(round);
            start = System.nanoTime();
        }

        private void send(ChannelHandlerContext ctx) {
            sentAt = System.nanoTime();
            ctx.writeAndFlush(template.retainedDuplicate(), ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            received += in.readableBytes();
            in.release();
            if (received < settings.length()) {
                return;
            }
            long now = System.nanoTime();
            received -= settings.length();
            rtt[done] = now - sentAt;
            if (++done < rounds[round]) {
                send(ctx);
            } else if (++round < rounds.length) {
                beginRound();
                send(ctx);
            } else {
                // the path at the end: a hadroNIO connection in upgrade mode starts on kernel TCP
                result.complete(new LatencyRun(rtt, start, now, NettySupport.transport(ctx.channel())));
                ctx.close();
            }
        }
    }

    record ThroughputRun(long start, long end, String transport) {
    }

    /**
     * Streaming: writes while the channel is writable, flushing every {@code flushEvery}
     * messages; the server acknowledges the end of the warm-up and of the measured messages.
     */
    static final class Throughput extends BenchmarkClient<ThroughputRun> {
        private final int flushEvery;
        private long remaining;
        private int unflushed;
        private boolean pumping;
        private long acks;
        private long start;
        private ChannelHandlerContext ctx;

        Throughput(BenchmarkHeader settings, int flushEvery) {
            super(settings);
            this.flushEvery = flushEvery;
        }

        @Override
        void start(ChannelHandlerContext ctx) {
            this.ctx = ctx;
            remaining = settings.warmup();
            unflushed = 1; // the settings
            pump();
        }

        /** Writes what the channel takes; not re-entered from the writability events a flush fires. */
        private void pump() {
            if (pumping) {
                return;
            }
            pumping = true;
            try {
                Channel ch = ctx.channel();
                while (remaining > 0) {
                    if (!ch.isWritable()) {
                        if (unflushed > 0) {
                            unflushed = 0;
                            ctx.flush();
                            continue;
                        }
                        break;
                    }
                    ctx.write(template.retainedDuplicate(), ctx.voidPromise());
                    remaining--;
                    if (++unflushed >= flushEvery) {
                        unflushed = 0;
                        ctx.flush();
                    }
                }
                if (unflushed > 0) {
                    unflushed = 0;
                    ctx.flush();
                }
            } finally {
                pumping = false;
            }
        }

        @Override
        public void channelWritabilityChanged(ChannelHandlerContext ctx) {
            if (ctx.channel().isWritable()) {
                pump();
            }
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            long n = in.readableBytes();
            in.release();
            for (long k = 0; k < n; k++) {
                acks++;
                if (acks == 1) {
                    // warm-up received: the measured part starts now
                    MeasurementWindow.open();
                    start = System.nanoTime();
                    remaining = settings.messages();
                    pump();
                } else if (acks == 2) {
                    result.complete(new ThroughputRun(start, System.nanoTime(), NettySupport.transport(ctx.channel())));
                    ctx.close();
                }
            }
        }
    }

    record ConnectionRun(long[] times, long start, long end, String transport) {
    }

    /**
     * The connection benchmark: {@code settings.connections()} chains, each opening one
     * connection after another until warm-up + measured connections were made; each
     * connection sends its settings and one message, waits for the echo and closes.
     * A connection's time runs from {@code connect} to the echo.
     */
    static ConnectionRun runConnections(EventLoopGroup group, InetSocketAddress remote, BenchmarkHeader settings)
            throws Exception {
        long total = settings.warmup() + settings.messages();
        if (settings.messages() > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("too many connections");
        }
        long[] times = new long[(int) settings.messages()];
        AtomicLong next = new AtomicLong();
        AtomicLong measuredStart = new AtomicLong(Long.MAX_VALUE);
        AtomicLong measuredEnd = new AtomicLong(Long.MIN_VALUE);
        String[] transport = {"unknown"};
        CompletableFuture<Void> done = new CompletableFuture<>();
        AtomicLong chainsLeft = new AtomicLong(Math.min(settings.connections(), total));
        Bootstrap base = NettySupport.client(group, null);
        // wait until the server listens: a connection without settings does not count there
        NettySupport.connect(base, remote, ChannelInboundHandlerAdapter::new).channel().close().sync();
        final class Chain {
            void next() {
                long index = next.getAndIncrement();
                if (index >= total) {
                    if (chainsLeft.decrementAndGet() == 0) {
                        done.complete(null);
                    }
                    return;
                }
                long t0 = System.nanoTime();
                if (index >= settings.warmup()) {
                    measuredStart.accumulateAndGet(t0, Math::min);
                }
                OneConnection handler = new OneConnection(settings, index, t0);
                handler.result().whenComplete((t1, error) -> {
                    if (error != null) {
                        done.completeExceptionally(error);
                        return;
                    }
                    if (index >= settings.warmup()) {
                        times[(int) (index - settings.warmup())] = t1 - t0;
                        measuredEnd.accumulateAndGet(t1, Math::max);
                    }
                    if (index == 0) {
                        transport[0] = handler.transport;
                    }
                });
                handler.closed.whenComplete((v, error) -> next());
                base.clone().handler(handler).connect(remote).addListener(f -> {
                    if (!f.isSuccess()) {
                        done.completeExceptionally(f.cause());
                    }
                });
            }
        }
        for (long c = chainsLeft.get(); c > 0; c--) {
            new Chain().next();
        }
        done.get();
        return new ConnectionRun(times, measuredStart.get(), measuredEnd.get(), transport[0]);
    }

    /** One connection of the connection benchmark: settings and a message out, the echo back, close. */
    static final class OneConnection extends BenchmarkClient<Long> {
        final CompletableFuture<Void> closed = new CompletableFuture<>();
        private long received;

        OneConnection(BenchmarkHeader settings, long index, long t0) {
            super(settings);
        }

        @Override
        void start(ChannelHandlerContext ctx) {
            ctx.writeAndFlush(template.retainedDuplicate(), ctx.voidPromise());
        }

        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf in = (ByteBuf) msg;
            received += in.readableBytes();
            in.release();
            if (received >= settings.length() && !result.isDone()) {
                result.complete(System.nanoTime());
                ctx.close();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            super.channelInactive(ctx);
            closed.complete(null);
        }
    }
}
