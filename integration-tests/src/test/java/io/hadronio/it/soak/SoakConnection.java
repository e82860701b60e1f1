package io.hadronio.it.soak;

import io.hadronio.it.soak.Streams.Buffers;
import io.hadronio.it.soak.Streams.Receiver;
import io.hadronio.it.soak.Streams.Sender;
import io.hadronio.it.soak.Streams.StreamError;
import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;

/**
 * One side of one soak connection, as an application runs it: blocking ({@link #runBlocking},
 * a reader thread and the caller writing) or non-blocking on a selector ({@link #step}).
 * It writes its messages, the tail only after the peer's end-of-stream, half-closes or
 * closes as the {@link SoakPlan} says, reads and checks the peer's stream to its end, and
 * sums up in one {@link #result()} line.
 */
final class SoakConnection {
    final SoakPlan plan;
    private final boolean isClient;
    private final boolean blocking;
    private final SocketChannel ch;
    private final Buffers buffers = Buffers.take();
    private final Sender out;
    private final Receiver in;
    private final CountDownLatch readerDone = new CountDownLatch(1);
    private boolean outputShut;
    private boolean released;
    private String failure;
    private long failureNanos;
    private boolean broken;

    SoakConnection(SocketChannel ch, SoakPlan plan, long seed, boolean isClient, boolean blocking) {
        this.ch = ch;
        this.plan = plan;
        this.isClient = isClient;
        this.blocking = blocking;
        this.out = new Sender(plan, isClient, SoakPlan.random(seed, plan.id(), isClient ? 2 : 3), buffers);
        this.in = new Receiver(plan, isClient, SoakPlan.random(seed, plan.id(), isClient ? 4 : 5), buffers);
    }

    long id() {
        return plan.id();
    }

    /** The first failure only: what followed it (a close to unblock the other thread) is its consequence. */
    private synchronized void fail(String what, Throwable e) {
        if (failure == null) {
            failureNanos = System.nanoTime();
            failure = what + (e == null ? "" : ": " + e.getClass().getName() + ": " + e.getMessage())
                    + " [on " + transport() + "]";
            broken = e instanceof StreamError;
        }
    }

    /** The path the connection took (tcp, ucx:..., or jdk), for the report; "closed" once it is. */
    private String transport() {
        try {
            return io.hadronio.it.ChannelPath.of(ch);
        } catch (IOException e) {
            return "closed";
        }
    }

    private synchronized boolean failed() {
        return failure != null;
    }

    private void closeQuietly() {
        try {
            ch.close();
        } catch (IOException e) {
            fail("close", e);
        }
    }

    // ---- blocking -----------------------------------------------------------------------------

    /** Runs the connection to its end: the peer's stream read on a thread of its own, ours written here. */
    void runBlocking() throws InterruptedException {
        Thread reader = new Thread(this::readToEnd, "soak-reader");
        reader.setDaemon(true);
        reader.start();
        try {
            while (out.ready(false)) {
                out.write(ch, false);
            }
            if (out.hasTail()) {
                readerDone.await();
                if (!failed()) {
                    while (out.ready(true)) {
                        out.write(ch, true);
                    }
                    close();
                }
            } else {
                ch.shutdownOutput();
            }
        } catch (IOException e) {
            fail("write", e);
            closeQuietly();
        }
        reader.join();
        over();
    }

    private void readToEnd() {
        try {
            while (in.read(ch) >= 0) {
                // every byte is checked by the receiver
            }
            if (!in.complete()) {
                fail(endOfStream(), null);
                closeQuietly();
            }
        } catch (IOException e) {
            fail("read", e);
            // the writer may be blocked: the application gives up the connection
            closeQuietly();
        } finally {
            readerDone.countDown();
        }
    }

    /** Why the stream that ended is not the one the peer sent. */
    private String endOfStream() {
        return (in.firstMismatch >= 0 ? "byte " + in.firstMismatch + " differs from the stream; " : "")
                + "end of stream after " + in.received + " of " + in.expected + " bytes";
    }

    /** After the tail: the whole connection at once, or our output first (the peer's ended already). */
    private void close() throws IOException {
        if (plan.fullClose()) {
            ch.close();
        } else {
            ch.shutdownOutput();
            ch.close();
        }
    }

    // ---- non-blocking ---------------------------------------------------------------------------

    /** Sets the interest of a new connection's key; true when it is over already. */
    boolean start(SelectionKey key) {
        try {
            return settle(key);
        } catch (IOException e) {
            return failedNonBlocking(e, "start");
        }
    }

    /** Handles what the selector found ready; true when the connection is over (closed). */
    boolean step(SelectionKey key) {
        String doing = "read";
        try {
            if (key.isReadable() && !in.ended) {
                for (int i = 0; i < 4; i++) {
                    long n = in.read(ch);
                    if (n < 0) {
                        if (!in.complete()) {
                            fail(endOfStream(), null);
                            return over();
                        }
                        break;
                    }
                    if (n == 0) {
                        break;
                    }
                }
            }
            doing = "write";
            if (key.isValid() && key.isWritable()) {
                for (int i = 0; i < 4 && out.ready(in.ended); i++) {
                    if (out.write(ch, in.ended) == 0) {
                        break;
                    }
                }
            }
            doing = "close";
            return settle(key);
        } catch (IOException e) {
            return failedNonBlocking(e, doing);
        }
    }

    private boolean failedNonBlocking(IOException e, String doing) {
        fail(doing, e);
        return over();
    }

    /** The connection is over: closed (again, if it was), its buffers free for another. */
    private boolean over() {
        closeQuietly();
        if (!released) {
            released = true;
            buffers.give();
        }
        return true;
    }

    private boolean settle(SelectionKey key) throws IOException {
        if (!outputShut && out.done()) {
            if (out.hasTail()) {
                // the tail went out after the peer's end-of-stream: nothing more to read
                close();
                return over();
            }
            ch.shutdownOutput();
            outputShut = true;
        }
        if (outputShut && in.ended) {
            ch.close();
            return over();
        }
        key.interestOps((in.ended ? 0 : SelectionKey.OP_READ) | (out.ready(in.ended) ? SelectionKey.OP_WRITE : 0));
        return false;
    }

    // ---- the outcome ------------------------------------------------------------------------------

    /**
     * {@code @END id side mode outcome sent sentCrc received receivedCrc firstMismatch
     * messagesSent failureNanos lastReadNanos detail}: outcome {@code OK} (every byte both ways, then
     * end-of-stream, then closed), {@code BROKEN} (a wrong, extra or misplaced byte, or a
     * call that broke its contract) or {@code FAULT} (an I/O error or an early end-of-stream
     * with every byte so far right).
     */
    synchronized String result() {
        boolean ok = failure == null && out.done() && in.complete();
        String outcome = ok ? "OK" : broken || in.firstMismatch >= 0 ? "BROKEN" : "FAULT";
        String detail = failure != null ? failure : ok ? "-" : "incomplete: sent " + out.sent + " of " + out.total
                + ", " + endOfStream();
        return "@END " + plan.id() + " " + (isClient ? "c" : "s") + " " + (blocking ? "b" : "n") + " " + outcome
                + " " + out.sent + " " + out.crc.getValue() + " " + in.received + " " + in.crc.getValue() + " "
                + in.firstMismatch + " " + out.messagesSent() + " " + failureNanos + " " + in.lastReadNanos + " " + detail;
    }
}
