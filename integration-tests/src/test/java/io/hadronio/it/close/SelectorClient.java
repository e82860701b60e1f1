package io.hadronio.it.close;

import io.hadronio.it.ChannelPath;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;

/**
 * {@link CloseAfterAnswerPeer}'s client as the JDK's HttpClient is one: one thread and one
 * selector drive {@code concurrent} connections at once, each non-blocking from its connect
 * on, with 2..7 requests each (the last marked {@link CloseAfterAnswerPeer#LAST}), until
 * {@code total} connections are done. A connection whose last answer came is closed at once
 * or after its end-of-stream, by turns. Prints {@code DONE total switched}, or, when a
 * connection makes no progress for 20 s, {@code ERROR} lines naming each such connection
 * and its state.
 */
final class SelectorClient {
    private static final long STALL_NANOS = TimeUnit.SECONDS.toNanos(20);

    private SelectorClient() {
    }

    /** One connection's exchange. */
    private static final class Exchange {
        final int id;
        final int requests;
        final boolean readEnd;
        int sent;
        byte[] body;
        ByteBuffer request;
        ByteBuffer answer;
        boolean awaitingEnd;
        long lastProgress = System.nanoTime();

        Exchange(int id, Random random) {
            this.id = id;
            this.requests = 2 + random.nextInt(6);
            this.readEnd = random.nextBoolean();
        }

        void next(Random random) {
            body = new byte[random.nextInt(4097)];
            random.nextBytes(body);
            request = CloseAfterAnswerPeer.request(body, sent == requests - 1);
            answer = ByteBuffer.allocate(4 + body.length);
            sent++;
        }

        @Override
        public String toString() {
            return "connection " + id + ": request " + sent + " of " + requests + (request == null ? ""
                    : ", request bytes " + request.position() + "/" + request.limit() + ", answer bytes "
                    + answer.position() + "/" + answer.limit()) + (awaitingEnd ? ", awaiting end-of-stream" : "");
        }
    }

    static void run(InetSocketAddress address, int concurrent, int total) throws IOException {
        Random random = new Random(7);
        int started = 0;
        int done = 0;
        int switched = 0;
        try (Selector selector = Selector.open()) {
            while (done < total) {
                while (started < total && selector.keys().size() < concurrent) {
                    SocketChannel channel = SocketChannel.open();
                    channel.configureBlocking(false);
                    Exchange exchange = new Exchange(started++, random);
                    if (channel.connect(address)) {
                        exchange.next(random);
                        channel.register(selector, SelectionKey.OP_WRITE, exchange);
                    } else {
                        channel.register(selector, SelectionKey.OP_CONNECT, exchange);
                    }
                }
                selector.select(1000);
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    SocketChannel channel = (SocketChannel) key.channel();
                    Exchange exchange = (Exchange) key.attachment();
                    try {
                        if (step(key, channel, exchange, random)) {
                            if (ChannelPath.of(channel).startsWith("ucx")) {
                                switched++;
                            }
                            channel.close();
                            done++;
                        }
                    } catch (IOException e) {
                        throw new IOException(exchange + " (" + channel + "): " + e, e);
                    }
                }
                long now = System.nanoTime();
                List<String> stalled = new ArrayList<>();
                for (SelectionKey key : selector.keys()) {
                    Exchange exchange = (Exchange) key.attachment();
                    if (now - exchange.lastProgress > STALL_NANOS) {
                        stalled.add(exchange + ", interest " + key.interestOps() + " (" + key.channel() + ")");
                    }
                }
                if (!stalled.isEmpty()) {
                    stalled.forEach(line -> System.out.println("ERROR stalled: " + line));
                    System.out.flush();
                    System.exit(1);
                }
            }
        }
        System.out.println("DONE " + total + " " + switched);
        System.out.flush();
        System.exit(0);
    }

    /** Moves one connection on; true when it is done. */
    private static boolean step(SelectionKey key, SocketChannel channel, Exchange exchange, Random random)
            throws IOException {
        if (key.isConnectable()) {
            if (!channel.finishConnect()) {
                return false;
            }
            exchange.next(random);
            key.interestOps(SelectionKey.OP_WRITE);
        }
        if (exchange.awaitingEnd) {
            int n = channel.read(ByteBuffer.allocate(1));
            if (n > 0) {
                throw new IOException("a byte after the last answer, not end-of-stream");
            }
            return n < 0;
        }
        if (exchange.request.hasRemaining()) {
            if (channel.write(exchange.request) > 0) {
                exchange.lastProgress = System.nanoTime();
            }
            if (exchange.request.hasRemaining()) {
                return false;
            }
            key.interestOps(SelectionKey.OP_READ);
        }
        int n = channel.read(exchange.answer);
        if (n < 0) {
            throw new EOFException("end-of-stream inside an answer");
        }
        if (n > 0) {
            exchange.lastProgress = System.nanoTime();
        }
        if (exchange.answer.hasRemaining()) {
            return false;
        }
        if (!CloseAfterAnswerPeer.answers(exchange.answer, exchange.body)) {
            throw new IOException("not the request's bytes");
        }
        if (exchange.sent < exchange.requests) {
            exchange.next(random);
            key.interestOps(SelectionKey.OP_WRITE);
            return false;
        }
        if (!exchange.readEnd) {
            return true;
        }
        exchange.awaitingEnd = true;
        return false;
    }
}
