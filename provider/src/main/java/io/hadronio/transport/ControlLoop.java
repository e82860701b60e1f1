package io.hadronio.transport;

import java.io.IOException;
import java.net.ProtocolException;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One daemon thread, with a selector of the JDK's provider, that owns every TCP socket
 * once a connection is up: it accepts on the kernel listeners and runs server-side
 * handshakes (so a silent or bogus client never holds up {@code accept()}), watches the
 * control connections for end-of-stream, close and reset, and finishes local closes
 * (waiting until posted sends completed before announcing FIN/CLOSE, so nothing is
 * lost). Channels talk to it only through {@link #execute(Runnable)}.
 */
public final class ControlLoop implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(ControlLoop.class);
    // how long a closing connection may wait for its sends before it is torn down anyway
    private static final long LINGER_NANOS = TimeUnit.SECONDS.toNanos(30);
    // how long JVM exit waits for closes still in progress (see lingerAtExit)
    private static final long EXIT_LINGER_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final UcxRuntime runtime;
    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final List<Closing> closing = new ArrayList<>();
    private final List<PendingHandshake> handshakes = new ArrayList<>();
    // connections whose accepted bytes wait for a credit
    private final java.util.Map<Connection, Long> flushing = new java.util.IdentityHashMap<>();
    // connections that started holding bytes back, handed over by writers without a task
    private final Queue<Connection> flushRequests = new ConcurrentLinkedQueue<>();
    // true while the loop sleeps with no timeout: only then does a flush request wake it
    private volatile boolean sleepingUntilWoken;
    // how long a connection stays watched after its last held-back bytes left
    private static final long FLUSH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private final Thread thread;
    private volatile boolean running = true;
    // shutdownOutput/close calls whose FIN/CLOSE is not sent yet; read by the exit hook
    private final AtomicInteger unfinishedCloses = new AtomicInteger();

    ControlLoop(UcxRuntime runtime, SelectorProvider platform) throws IOException {
        this.runtime = runtime;
        this.selector = platform.openSelector();
        this.thread = new Thread(this, "hadronio-control");
        this.thread.setDaemon(true);
        this.thread.start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::lingerAtExit, "hadronio-exit-linger"));
    }

    /**
     * JVM exit: wait (bounded) until every close and shutdownOutput the application made
     * has finished, i.e. its posted sends completed and FIN/CLOSE went out. A kernel
     * socket delivers what was written before close() even after the process exits; our
     * bytes may still sit in send slots that the peer fetches only while we live (UCX
     * rendezvous), and the control thread is a daemon that exit would stop mid-way. Without
     * this, a program that writes, closes and returns from main loses its last bytes and
     * the peer sees a reset.
     */
    private void lingerAtExit() {
        long deadline = System.nanoTime() + EXIT_LINGER_NANOS;
        while (unfinishedCloses.get() > 0 && thread.isAlive() && System.nanoTime() - deadline < 0) {
            selector.wakeup();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /** Runs a task on the control thread. */
    public void execute(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    @Override
    public void run() {
        while (running) {
            try {
                takeFlushRequests();
                long timeout = closing.isEmpty() && flushing.isEmpty() && nudgedBy.isEmpty()
                        ? (handshakes.isEmpty() ? 0 : 200) : 1;
                if (timeout == 0) {
                    // announce the open-ended sleep before the last look at the flush requests,
                    // so that a writer adding one after that look sees the flag and wakes us
                    sleepingUntilWoken = true;
                    if (flushRequests.isEmpty()) {
                        selector.select();
                    } else {
                        selector.selectNow();
                    }
                    sleepingUntilWoken = false;
                } else {
                    selector.select(timeout);
                }
                Runnable task;
                while ((task = tasks.poll()) != null) {
                    task.run();
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    handle(key);
                }
                flushWaitingBytes();
                progressForPeers();
                finishClosing();
                expireHandshakes();
            } catch (Throwable t) {
                LOG.error("hadroNIO control loop: unexpected error", t);
            }
        }
    }

    private void handle(SelectionKey key) {
        Object attachment = key.attachment();
        if (!key.isValid()) {
            return;
        }
        if (attachment instanceof Listener listener) {
            listener.acceptAll(key);
        } else if (attachment instanceof PendingHandshake handshake) {
            handshake.onReadable(key);
        } else if (attachment instanceof Control control) {
            control.onReadable(key);
        }
    }

    /**
     * Keeps sending a connection's bytes that wait for credits (every millisecond) until
     * none wait: a blocking write returned once it accepted them, and they must leave
     * even if the application never calls in again.
     */
    void flushWhenCredited(Connection connection) {
        flushRequests.add(connection);
        // the loop ticks every millisecond while it flushes anything; only an open-ended
        // sleep needs a wake-up (an eventfd write per held-back burst cost streaming writers
        // a fifth of their time)
        if (sleepingUntilWoken) {
            selector.wakeup();
        }
    }

    private void takeFlushRequests() {
        Connection c;
        long now = System.nanoTime();
        while ((c = flushRequests.poll()) != null) {
            flushing.putIfAbsent(c, now);
        }
    }

    /**
     * Flushes held-back bytes. A connection stays on the list for a while after its last
     * held-back bytes left, so that a streaming writer, which holds bytes back again and
     * again, does not have to wake this thread each time.
     */
    private void flushWaitingBytes() {
        if (flushing.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (var it = flushing.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getKey().flushFromControl()) {
                e.setValue(now);
            } else if (now - e.getValue() > FLUSH_GRACE_NANOS && e.getKey().endFlushWatch()) {
                it.remove();
            }
        }
    }

    // ---- listeners and server-side handshakes -------------------------------------------------

    /** Starts accepting on a bound, non-blocking kernel listener on behalf of a server channel. */
    public void listen(ServerSocketChannel tcp, AcceptQueue queue) {
        execute(() -> {
            try {
                tcp.register(selector, SelectionKey.OP_ACCEPT, new Listener(tcp, queue));
            } catch (ClosedChannelException e) {
                // closed before we got to it
            }
        });
    }

    /** Re-enables accepting after the server channel's queue drained below its backlog. */
    public void resumeAccepting(ServerSocketChannel tcp) {
        execute(() -> {
            SelectionKey key = tcp.keyFor(selector);
            if (key != null && key.isValid()) {
                key.interestOps(SelectionKey.OP_ACCEPT);
            }
        });
    }

    /** Stops watching a listener (its server channel closes it). */
    public void unlisten(ServerSocketChannel tcp, Runnable then) {
        execute(() -> {
            SelectionKey key = tcp.keyFor(selector);
            if (key != null) {
                key.cancel();
            }
            for (PendingHandshake h : new ArrayList<>(handshakes)) {
                if (h.listener.tcp == tcp) {
                    h.fail("server closed");
                }
            }
            try {
                selector.selectNow(); // flush the cancelled key so the socket really closes
            } catch (IOException e) {
                // ignore
            }
            then.run();
        });
    }

    private final class Listener {
        final ServerSocketChannel tcp;
        final AcceptQueue queue;

        Listener(ServerSocketChannel tcp, AcceptQueue queue) {
            this.tcp = tcp;
            this.queue = queue;
        }

        void acceptAll(SelectionKey key) {
            while (true) {
                long pending = handshakes.stream().filter(h -> h.listener == this).count();
                if (!queue.hasRoom() || pending >= 64) {
                    // backlog exhausted: leave further connections in the kernel's queue
                    key.interestOps(0);
                    return;
                }
                SocketChannel child;
                try {
                    child = tcp.accept();
                } catch (IOException e) {
                    LOG.debug("accept failed", e);
                    return;
                }
                if (child == null) {
                    return;
                }
                try {
                    child.configureBlocking(false);
                    PendingHandshake h = new PendingHandshake(this, child);
                    child.register(selector, SelectionKey.OP_READ, h);
                    handshakes.add(h);
                } catch (IOException e) {
                    closeQuietly(child);
                }
            }
        }
    }

    private class PendingHandshake {
        final Listener listener;
        final SocketChannel tcp;
        final long deadline;
        final ByteBuffer header = ByteBuffer.allocate(Handshake.HEADER_LENGTH);
        ByteBuffer address;

        PendingHandshake(Listener listener, SocketChannel tcp) {
            this.listener = listener;
            this.tcp = tcp;
            this.deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(runtime.config().handshakeMillis());
        }

        /** Reads what is there of the peer's hello; the hello once complete, else null. */
        Handshake.Hello readHello() throws IOException {
            if (address == null) {
                if (tcp.read(header) < 0) {
                    throw new ProtocolException("connection closed after " + header.position()
                            + " bytes of the handshake header");
                }
                if (header.position() >= 4) {
                    Handshake.checkMagic(header);
                }
                if (header.hasRemaining()) {
                    return null;
                }
                address = ByteBuffer.allocate(Handshake.checkHeader(header));
            }
            if (tcp.read(address) < 0) {
                throw new ProtocolException("connection closed inside the worker address");
            }
            if (address.hasRemaining()) {
                return null;
            }
            return Handshake.decode(header, address.flip());
        }

        void onReadable(SelectionKey key) {
            try {
                Handshake.Hello hello = readHello();
                if (hello == null) {
                    return;
                }
                handshakes.remove(this);
                Connection connection = runtime.newConnection();
                try {
                    connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(),
                            hello.workerAddress());
                    writeFully(tcp, Handshake.encode(connection.localId, connection.rxSliceSize,
                            connection.rxSliceCount, connection.group().address()));
                } catch (IOException | RuntimeException e) {
                    connection.release();
                    throw e;
                }
                Control control = new Control(tcp, connection);
                key.attach(control);
                listener.queue.deliver(tcp, connection, control);
                if (!listener.queue.hasRoom()) {
                    SelectionKey lk = listener.tcp.keyFor(selector);
                    if (lk != null && lk.isValid()) {
                        lk.interestOps(0);
                    }
                }
            } catch (IOException | RuntimeException e) {
                fail(e.getMessage());
            }
        }

        void fail(String why) {
            handshakes.remove(this);
            String peer;
            try {
                peer = String.valueOf(tcp.getRemoteAddress());
            } catch (IOException e) {
                peer = "?";
            }
            LOG.warn("hadroNIO: refused connection from {}: {}", peer, why);
            closeQuietly(tcp);
            SelectionKey lk = listener.tcp.keyFor(selector);
            if (lk != null && lk.isValid() && listener.queue.hasRoom()) {
                lk.interestOps(SelectionKey.OP_ACCEPT);
            }
        }
    }

    private void expireHandshakes() {
        if (handshakes.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (PendingHandshake h : new ArrayList<>(handshakes)) {
            if (now - h.deadline > 0) {
                h.fail("no complete handshake within " + runtime.config().handshakeMillis() + " ms");
            }
        }
    }

    static void writeFully(SocketChannel tcp, ByteBuffer b) throws IOException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
        while (b.hasRemaining()) {
            if (tcp.write(b) == 0) {
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException("control connection: peer does not read");
                }
                Thread.onSpinWait();
            }
        }
    }

    // ---- control connections -----------------------------------------------------------------

    /** Told how a non-blocking connect ended. */
    public interface ConnectListener {
        void connected(Connection connection, Control control);

        void failed(IOException cause);
    }

    /**
     * Runs a non-blocking connect to its end on the control thread: finishes the TCP
     * connect (the socket must be non-blocking with {@code connect} already called),
     * sends our hello, reads the server's within the handshake timeout, creates the
     * endpoint, and tells the listener.
     */
    public void connectAsync(SocketChannel tcp, ConnectListener listener) {
        execute(() -> {
            ClientHandshake h = new ClientHandshake(tcp, listener);
            try {
                tcp.register(selector, SelectionKey.OP_CONNECT, h);
                handshakes.add(h);
            } catch (IOException e) {
                listener.failed(e);
            }
        });
    }

    /** The connecting side of a handshake, driven by readiness instead of blocking reads. */
    private final class ClientHandshake extends PendingHandshake {
        final ConnectListener listener;
        Connection connection;

        ClientHandshake(SocketChannel tcp, ConnectListener listener) {
            super(null, tcp);
            this.listener = listener;
        }

        @Override
        void onReadable(SelectionKey key) {
            try {
                if (connection == null) {
                    if (!key.isConnectable() || !tcp.finishConnect()) {
                        return;
                    }
                    connection = runtime.newConnection();
                    writeFully(tcp, Handshake.encode(connection.localId, connection.rxSliceSize,
                            connection.rxSliceCount, connection.group().address()));
                    key.interestOps(SelectionKey.OP_READ);
                    return;
                }
                Handshake.Hello hello = readHello();
                if (hello == null) {
                    return;
                }
                handshakes.remove(this);
                connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
                Control control = new Control(tcp, connection);
                key.attach(control);
                listener.connected(connection, control);
            } catch (IOException | RuntimeException e) {
                failClient(e instanceof IOException io ? io : new IOException(e));
            }
        }

        @Override
        void fail(String why) {
            failClient(new java.net.SocketTimeoutException("hadroNIO handshake: " + why + " (not a hadroNIO server?)"));
        }

        private void failClient(IOException cause) {
            handshakes.remove(this);
            if (connection != null) {
                connection.release();
            }
            closeQuietly(tcp);
            listener.failed(cause);
        }
    }

    /** Starts watching the control connection of a connected channel (client side). */
    public Control watch(SocketChannel tcp, Connection connection) {
        Control control = new Control(tcp, connection);
        execute(() -> {
            try {
                tcp.register(selector, SelectionKey.OP_READ, control);
            } catch (ClosedChannelException e) {
                connection.reset("control connection closed");
            }
        });
        return control;
    }

    /** The TCP side of one connection, owned by the control thread. */
    public final class Control {
        final SocketChannel tcp;
        final Connection connection;
        private final ByteBuffer in = ByteBuffer.allocate(Handshake.CONTROL_LENGTH);
        private boolean closeReceived;
        private boolean finSent;
        private boolean eof;

        Control(SocketChannel tcp, Connection connection) {
            this.tcp = tcp;
            this.connection = connection;
        }

        void onReadable(SelectionKey key) {
            try {
                while (true) {
                    int n = tcp.read(in);
                    if (n < 0) {
                        eof(key, null);
                        return;
                    }
                    if (in.hasRemaining()) {
                        return;
                    }
                    in.flip();
                    byte type = in.get();
                    long value = in.getLong();
                    in.clear();
                    if (type == Handshake.FIN) {
                        connection.peerFinished(value);
                    } else if (type == Handshake.NUDGE) {
                        if (!nudgedBy.contains(connection)) {
                            nudgedBy.add(connection);
                        }
                    } else if (type == Handshake.CLOSE) {
                        closeReceived = true;
                        connection.peerClosed();
                    } else {
                        throw new ProtocolException("unknown control record " + type);
                    }
                }
            } catch (IOException e) {
                eof(key, e.getMessage());
            }
        }

        private void eof(SelectionKey key, String error) {
            eof = true;
            key.interestOps(0);
            if (!closeReceived) {
                connection.reset(error != null ? error : "peer closed the control connection without closing");
            }
        }

        /** Local shutdownOutput: announce FIN once the sends posted so far completed. */
        public void shutdownOutput() {
            unfinishedCloses.incrementAndGet();
            execute(() -> closing.add(new Closing(this, false)));
        }

        /** Local close: FIN and CLOSE once the sends completed, then free everything. */
        public void close() {
            unfinishedCloses.incrementAndGet();
            execute(() -> closing.add(new Closing(this, true)));
        }

        /**
         * Abortive local close ({@code SO_LINGER} 0), as the kernel does it: nothing more
         * is sent, unsent bytes are dropped, and the control socket (which has
         * {@code SO_LINGER} 0 itself) closes with a reset, which the peer reports as one.
         */
        public void abort() {
            execute(() -> {
                SelectionKey key = tcp.keyFor(selector);
                if (key != null) {
                    key.cancel();
                }
                closeQuietly(tcp);
                connection.release();
            });
        }
    }

    /** A local close or shutdownOutput waiting for its sends to complete. */
    private static final class Closing {
        final Control control;
        final boolean close;
        final long started = System.nanoTime();
        final long deadline = started + LINGER_NANOS;
        // a NUDGE went out: the peer progresses for us
        boolean nudged;

        Closing(Control control, boolean close) {
            this.control = control;
            this.close = close;
        }
    }

    // connections whose peer nudged us: progressed every loop until its FIN arrives
    private final List<Connection> nudgedBy = new ArrayList<>();
    // after this long with sends outstanding, a closing side nudges its peer
    private static final long NUDGE_AFTER_NANOS = TimeUnit.MILLISECONDS.toNanos(2);

    private void progressForPeers() {
        nudgedBy.removeIf(c -> !c.progressForPeer());
    }

    private void finishClosing() {
        for (Iterator<Closing> it = closing.iterator(); it.hasNext(); ) {
            Closing c = it.next();
            Control control = c.control;
            Connection connection = control.connection;
            boolean done;
            try {
                done = connection.isReset() || connection.sendsComplete() || System.nanoTime() - c.deadline > 0;
            } catch (IOException | RuntimeException e) {
                done = true;
            }
            if (!done) {
                if (!c.nudged && !control.eof && System.nanoTime() - c.started > NUDGE_AFTER_NANOS) {
                    // the peer may not be reading (and so not progressing): ask it to take our messages
                    c.nudged = true;
                    try {
                        writeFully(control.tcp, Handshake.control(Handshake.NUDGE, 0));
                    } catch (IOException e) {
                        LOG.debug("control connection: could not nudge the peer", e);
                    }
                }
                continue;
            }
            it.remove();
            if (!control.eof && !connection.isReset()) {
                try {
                    if (!control.finSent) {
                        writeFully(control.tcp, Handshake.control(Handshake.FIN, connection.messagesSent()));
                        control.finSent = true;
                    }
                    if (c.close) {
                        writeFully(control.tcp, Handshake.control(Handshake.CLOSE, 0));
                    }
                } catch (IOException e) {
                    LOG.debug("control connection: could not announce close", e);
                }
            }
            if (c.close) {
                SelectionKey key = control.tcp.keyFor(selector);
                if (key != null) {
                    key.cancel();
                }
                closeQuietly(control.tcp);
                connection.release();
            }
            unfinishedCloses.decrementAndGet();
        }
    }

    private static void closeQuietly(SocketChannel tcp) {
        try {
            tcp.close();
        } catch (IOException e) {
            // nothing to do
        }
    }

    void shutdown() {
        running = false;
        selector.wakeup();
        try {
            thread.join(1000);
            selector.close();
        } catch (InterruptedException | IOException e) {
            Thread.currentThread().interrupt();
        }
    }
}
