package io.hadronio.transport;

import io.hadronio.connection.HandshakeMessages;
import io.hadronio.connection.Peers;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
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
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * The reactor: one daemon thread, with a selector of the JDK's provider, that owns the
 * TCP sockets of handshakes and of accelerated connections. It accepts on kernel
 * listeners while registered clients are expected, runs both sides of handshakes (so a
 * silent or bogus client never holds up {@code accept()}), reads the control records of
 * established connections and fires timer ticks. What a record or a tick means for a
 * connection is decided by its {@link ConnectionLifecycle}, not here. Other threads talk
 * to it only through {@link #execute(Runnable)}.
 */
public final class ControlLoop implements Runnable {
    private static final Logger LOG = System.getLogger(ControlLoop.class.getName());
    // how long JVM exit waits for closes still in progress (see lingerAtExit)
    private static final long EXIT_LINGER_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final UcxRuntime runtime;
    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // connections with something to finish (FIN, CLOSE, progress for a peer): ticked every millisecond
    private final List<ConnectionLifecycle> ticking = new ArrayList<>();
    private final List<Pending> handshakes = new ArrayList<>();
    // run after the next selection, once the sockets whose keys were cancelled have left the selector
    private final List<Runnable> afterDeregistration = new ArrayList<>();
    // accelerated connections not closed yet: a normal JVM exit closes them in order
    private final Set<ConnectionLifecycle> open = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    // handshakes that ended accelerated since start, both directions (a diagnostic, see counts())
    private long accelerated;
    // connections whose accepted bytes wait for a credit or for our worker's progress (Connection.watchSends)
    private final java.util.Map<Connection, Long> flushing = new java.util.IdentityHashMap<>();
    // connections that started holding bytes back or sending a rendezvous, handed over by writers without a task
    private final Queue<Connection> flushRequests = new ConcurrentLinkedQueue<>();
    // released connections whose memory waits for UCX requests in flight to end (Connection.freeIfDone),
    // with when they were handed over
    private final java.util.Map<Connection, Long> freeing = new java.util.IdentityHashMap<>();
    // how long those requests may take before the memory is given up on (left allocated)
    private static final long FREE_PATIENCE_NANOS = TimeUnit.SECONDS.toNanos(60);
    // how often the loop looks at them
    private static final long FREE_EVERY_NANOS = TimeUnit.MILLISECONDS.toNanos(10);
    private long freeLookedAt;
    // true while the loop sleeps with no timeout: only then does a flush request wake it
    private volatile boolean sleepingUntilWoken;
    // how long a connection stays watched after its last held-back bytes left
    private static final long FLUSH_GRACE_NANOS = TimeUnit.MILLISECONDS.toNanos(100);
    private final Thread thread;
    private volatile boolean running = true;
    // connections on the tick list that still owe their peer a FIN or CLOSE, after the last ticks; for the exit hook
    private volatile int owing;
    // loop passes so far, for the exit hook: a count taken after its task ran is fresh
    private volatile long passes;

    ControlLoop(UcxRuntime runtime, SelectorProvider platform) throws IOException {
        this.runtime = runtime;
        this.selector = platform.openSelector();
        this.thread = new Thread(this, "hadronio-control");
        this.thread.setDaemon(true);
        this.thread.start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::lingerAtExit, "hadronio-exit-linger"));
    }

    /**
     * JVM exit: close every accelerated connection the application left open, in order,
     * and wait (bounded) until every close and shutdownOutput has finished, i.e. its
     * posted sends completed and FIN/CLOSE went out. A kernel socket delivers what was
     * written even after the process exits, and its peer then reads end-of-stream; our
     * bytes may still sit in send slots that the peer fetches only while we live (UCX
     * rendezvous), and the control thread is a daemon that exit would stop mid-way.
     * Without this, a program that writes and returns from main (or calls System.exit)
     * loses its last bytes and the peer sees a reset. Plain TCP connections are the
     * kernel's, which does the same for them.
     */
    private void lingerAtExit() {
        long deadline = System.nanoTime() + EXIT_LINGER_NANOS;
        java.util.concurrent.CompletableFuture<Long> queued = new java.util.concurrent.CompletableFuture<>();
        execute(() -> {
            for (ConnectionLifecycle c : new ArrayList<>(open)) {
                c.closeAtExit();
            }
            // every close and shutdownOutput asked for before this task is on the tick list now
            queued.complete(passes);
        });
        long queuedAt;
        try {
            queuedAt = queued.get(1, TimeUnit.SECONDS);
        } catch (InterruptedException | java.util.concurrent.ExecutionException
                 | java.util.concurrent.TimeoutException e) {
            return;
        }
        while ((passes <= queuedAt + 1 || owing > 0) && thread.isAlive() && System.nanoTime() - deadline < 0) {
            selector.wakeup();
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    /**
     * What the control thread holds, as counts (a diagnostic): accelerated connections not
     * closed, connections still finishing a close, handshakes in progress, connections
     * whose bytes wait for a credit; and how many handshakes ended accelerated since start
     * ({@code control.accelerated.total}). Taken on the control thread; empty if it does not
     * answer within ten seconds.
     */
    java.util.Map<String, Long> counts() {
        java.util.function.Supplier<java.util.Map<String, Long>> take = () -> java.util.Map.of(
                "control.open", (long) open.size(), "control.ticking", (long) ticking.size(),
                "control.handshakes", (long) handshakes.size(),
                "control.flushing", (long) (flushing.size() + flushRequests.size()),
                "control.freeing", (long) freeing.size(),
                "control.accelerated.total", accelerated);
        if (Thread.currentThread() == thread) {
            return take.get();
        }
        java.util.concurrent.CompletableFuture<java.util.Map<String, Long>> counts =
                new java.util.concurrent.CompletableFuture<>();
        execute(() -> counts.complete(take.get()));
        try {
            return counts.get(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return java.util.Map.of();
        } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
            return java.util.Map.of();
        }
    }

    /** Wakes every selector and thread sleeping on a worker (a connect's outcome is there). */
    void wakeSelectors() {
        runtime.wakeAll();
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
                long timeout = ticking.isEmpty() && flushing.isEmpty()
                        ? (handshakes.isEmpty() && freeing.isEmpty() ? 0 : 10) : 1;
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
                if (!afterDeregistration.isEmpty()) {
                    // this selection has flushed the cancelled keys: their sockets are free now
                    List<Runnable> ready = new ArrayList<>(afterDeregistration);
                    afterDeregistration.clear();
                    selector.selectNow();
                    ready.forEach(Runnable::run);
                }
                Iterator<SelectionKey> it = selector.selectedKeys().iterator();
                while (it.hasNext()) {
                    SelectionKey key = it.next();
                    it.remove();
                    handle(key);
                }
                flushWaitingBytes();
                freeReleasedMemory();
                tick();
                expireHandshakes();
                passes++;
            } catch (Throwable t) {
                LOG.log(Level.ERROR, "hadroNIO control loop: unexpected error", t);
            }
        }
    }

    private void handle(SelectionKey key) {
        Object attachment = key.attachment();
        if (!key.isValid()) {
            return;
        }
        if (attachment instanceof ListenerWatch listener) {
            listener.acceptAll(key);
        } else if (attachment instanceof Pending handshake) {
            handshake.onReadable(key);
        } else if (attachment instanceof RecordReader records) {
            records.onReadable(key);
        }
    }

    /**
     * Progresses a connection's worker and sends its bytes that wait for credits (every
     * millisecond) until none wait and no send is in flight: a blocking write returned once it
     * accepted them, and they must leave even if the application never calls in again (a UCX
     * rendezvous leaves only while its sender progresses: Connection.watchSends).
     */
    void flushUntilSent(Connection connection) {
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

    /**
     * Frees {@code connection}'s memory once the UCX requests its release found in flight have
     * ended: a send the peer takes a little later, a receive finishing its rendezvous. Any thread.
     */
    void freeWhenDone(Connection connection) {
        execute(() -> freeing.putIfAbsent(connection, System.nanoTime()));
    }

    private void freeReleasedMemory() {
        if (freeing.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        if (now - freeLookedAt < FREE_EVERY_NANOS) {
            return;
        }
        freeLookedAt = now;
        for (var it = freeing.entrySet().iterator(); it.hasNext(); ) {
            var e = it.next();
            if (e.getKey().freeIfDone()) {
                it.remove();
            } else if (now - e.getValue() > FREE_PATIENCE_NANOS) {
                LOG.log(Level.DEBUG, "connection memory left allocated: UCX requests did not end in time");
                e.getKey().abandonInFlight();
                it.remove();
            }
        }
    }

    // ---- listeners and server-side handshakes -------------------------------------------------

    /**
     * Runs the server's side of the handshake of a connection that a server channel
     * accepted from a client that registered ({@code EXPECT}) or comes from a network
     * configured as accelerated ({@code DETECT}), and delivers it to {@code queue} when it
     * ends, accelerated or plain. The socket must be non-blocking.
     */
    public void handshake(SocketChannel child, Peers.Inbound inbound, AcceptQueue queue) {
        execute(() -> {
            ServerHandshake h = new ServerHandshake(queue, child, inbound);
            try {
                child.register(selector, SelectionKey.OP_READ, h);
                handshakes.add(h);
            } catch (IOException e) {
                closeQuietly(child);
            }
        });
    }

    /**
     * Accepts on a server channel's kernel listener for it while it may have clients that
     * expect a handshake: after a registration at the rendezvous ({@code always} false:
     * until no registration for the port is left unclaimed) or for good when clients from
     * other hosts may speak first ({@code always} true). Their connect must complete
     * whether or not the application calls accept(), as a kernel connect does. A plain
     * client accepted here waits in the queue.
     */
    public void acceptFor(ServerSocketChannel tcp, AcceptQueue queue, int port, boolean always) {
        execute(() -> {
            SelectionKey key = tcp.keyFor(selector);
            try {
                if (key == null) {
                    tcp.register(selector, SelectionKey.OP_ACCEPT, new ListenerWatch(tcp, queue, port, always));
                } else if (key.isValid()) {
                    key.interestOps(SelectionKey.OP_ACCEPT);
                }
            } catch (IOException e) {
                // closed meanwhile
            }
        });
    }

    /** A server channel's listener, accepted on by this thread while handshakes are expected. */
    private final class ListenerWatch {
        final ServerSocketChannel tcp;
        final AcceptQueue queue;
        final int port;
        final boolean always;

        ListenerWatch(ServerSocketChannel tcp, AcceptQueue queue, int port, boolean always) {
            this.tcp = tcp;
            this.queue = queue;
            this.port = port;
            this.always = always;
        }

        void acceptAll(SelectionKey key) {
            while (true) {
                SocketChannel child;
                try {
                    child = tcp.accept();
                } catch (IOException e) {
                    LOG.log(Level.DEBUG, "accept failed", e);
                    break;
                }
                if (child == null) {
                    break;
                }
                // the server channel decides, as its own accept() does
                queue.accepted(child);
            }
            if (!always && key.isValid() && !runtime.peers().rendezvous().expects(port)) {
                key.interestOps(0);
            }
        }
    }

    /**
     * A server channel closes: stop accepting for it and refuse its handshakes still in
     * progress. Runs {@code then} once the kernel listener has left this thread's selector
     * (only then does closing it really close it).
     */
    public void abandon(ServerSocketChannel tcp, AcceptQueue queue, Runnable then) {
        execute(() -> {
            SelectionKey key = tcp.keyFor(selector);
            if (key != null) {
                key.cancel();
                try {
                    selector.selectNow();
                } catch (IOException e) {
                    // ignore
                }
            }
            for (Pending p : new ArrayList<>(handshakes)) {
                if (p instanceof ServerHandshake h && h.queue == queue) {
                    h.refuse("server closed");
                }
            }
            then.run();
        });
    }

    /** A handshake in progress on a TCP connection: it ends by itself when its deadline passes. */
    private abstract static class Pending {
        final SocketChannel tcp;
        long deadline;

        Pending(SocketChannel tcp, long deadline) {
            this.tcp = tcp;
            this.deadline = deadline;
        }

        /** False once its socket was closed (by the channel that was connecting, say). */
        final boolean isOpen() {
            return tcp.isOpen();
        }

        abstract void expire();

        abstract void onReadable(SelectionKey key);
    }

    /**
     * Reads handshake frames ({@link HandshakeMessages}) exactly:
     * the header, then as many bytes as it announces, never more, so that whatever
     * follows stays in the kernel for its rightful reader. Remembers every byte it took
     * since the last frame, so that bytes that turn out not to be ours can be handed to
     * the application.
     */
    private static final class FrameReader {
        private ByteBuffer buffer = ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH);
        boolean eof;

        /**
         * Reads what is there; the complete frame, or null while it is incomplete (or at
         * end-of-stream: see {@link #eof}).
         *
         * @throws ProtocolException when the bytes are not a frame of ours
         */
        byte[] read(SocketChannel tcp) throws IOException {
            while (true) {
                int n = tcp.read(buffer);
                if (n < 0) {
                    eof = true;
                    return null;
                }
                if (buffer.position() == HandshakeMessages.HEADER_LENGTH
                        && buffer.capacity() == HandshakeMessages.HEADER_LENGTH) {
                    int length = HandshakeMessages.frameLength(buffer);
                    if (length > buffer.capacity()) {
                        buffer = ByteBuffer.allocate(length).put(buffer.flip());
                        continue;
                    }
                } else if (buffer.position() < HandshakeMessages.HEADER_LENGTH
                        && !HandshakeMessages.mayStartFrame(buffer)) {
                    throw new ProtocolException("not a hadroNIO handshake");
                }
                if (!buffer.hasRemaining()) {
                    byte[] frame = buffer.array();
                    buffer = ByteBuffer.allocate(HandshakeMessages.HEADER_LENGTH);
                    return frame;
                }
                if (n == 0) {
                    return null;
                }
            }
        }

        /** The bytes taken since the last complete frame (a copy), or null when none. */
        ByteBuffer taken() {
            if (buffer.position() == 0) {
                return null;
            }
            return ByteBuffer.wrap(java.util.Arrays.copyOf(buffer.array(), buffer.position()));
        }

        boolean tookNothing() {
            return buffer.position() == 0;
        }
    }

    private static String peer(SocketChannel tcp) {
        try {
            return String.valueOf(tcp.getRemoteAddress());
        } catch (IOException e) {
            return "?";
        }
    }

    /**
     * The server's side of a handshake with a client that registered (or comes from a
     * network configured as accelerated). Until the client's hello proves to be one, the
     * connection may still be plain: bytes that are not a hello are handed to the
     * application with the connection, as plain TCP.
     */
    private final class ServerHandshake extends Pending {
        final AcceptQueue queue;
        final Peers.Inbound inbound;
        final FrameReader reader = new FrameReader();
        byte[] clientHello;
        byte[] serverHello;
        // from the client's hello on
        ConnectionLifecycle life;
        Connection connection;

        ServerHandshake(AcceptQueue queue, SocketChannel tcp, Peers.Inbound inbound) {
            super(tcp, System.nanoTime() + (inbound == Peers.Inbound.DETECT
                    ? runtime.peers().detectNanos() : handshakeNanos()));
            this.queue = queue;
            this.inbound = inbound;
        }

        @Override
        void onReadable(SelectionKey key) {
            byte[] frame;
            try {
                frame = reader.read(tcp);
            } catch (IOException e) {
                if (clientHello == null) {
                    plain(key, reader.taken(), e.getMessage());
                } else {
                    refuse(e.getMessage());
                }
                return;
            }
            if (frame == null) {
                if (reader.eof) {
                    if (clientHello == null) {
                        plain(key, reader.taken(), "end-of-stream before a hello");
                    } else {
                        refuse("connection closed during the handshake");
                    }
                }
                return;
            }
            try {
                if (clientHello == null) {
                    onClientHello(frame);
                } else {
                    onFinish(key, frame);
                }
            } catch (IOException | RuntimeException e) {
                if (clientHello == null) {
                    plain(key, ByteBuffer.wrap(frame), e.getMessage());
                } else {
                    refuse(e.getMessage());
                }
            }
        }

        private void onClientHello(byte[] frame) throws IOException {
            HandshakeMessages.Hello hello = HandshakeMessages
                    .decodeHello(frame, HandshakeMessages.CLIENT_HELLO);
            // a hello: from here on a failure refuses the connection (part of our answer may be
            // out already), it no longer hands the frame to the application as data
            clientHello = frame;
            life = ConnectionLifecycle.accepting(ControlLoop.this, tcp);
            connection = runtime.newConnection(life);
            serverHello = HandshakeMessages.serverHello(runtime.peers().secret(),
                    hello.frame(), connection.localId, connection.rxSliceSize, connection.rxSliceCount,
                    connection.group().address(), runtime.endpointProfile());
            writeFully(tcp, ByteBuffer.wrap(serverHello));
            // it speaks our protocol: from now on the whole handshake may take its full time
            deadline = System.nanoTime() + handshakeNanos();
        }

        private void onFinish(SelectionKey key, byte[] frame) throws IOException {
            byte kind = HandshakeMessages.kind(frame);
            if (kind == HandshakeMessages.PLAIN) {
                // the client could not verify us (another key): plain TCP for both
                connection.release();
                connection = null;
                plain(key, null, "the client does not share our key");
                return;
            }
            if (!HandshakeMessages.verifyFinish(runtime.peers().secret(), clientHello,
                    serverHello, frame)) {
                connection.release();
                connection = null;
                writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(
                        HandshakeMessages.PLAIN)));
                plain(key, null, "the client does not prove our key");
                return;
            }
            HandshakeMessages.Hello hello = HandshakeMessages
                    .decodeHello(clientHello, HandshakeMessages.CLIENT_HELLO);
            if (!hello.profile().equals(runtime.endpointProfile())) {
                // endpoints of different UCX settings fail or abort at wire-up: plain TCP
                connection.release();
                connection = null;
                writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
                plain(key, null, "the client's UCX endpoint settings differ (" + hello.profile() + ")");
                return;
            }
            // only now, authenticated, does the client's worker address reach UCX
            connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
            if (runtime.config().kernelTcp() && connection.onlyTcp()) {
                // UCX would only use tcp: the kernel's TCP connection we have is the faster path
                connection.release();
                connection = null;
                writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(HandshakeMessages.PLAIN)));
                plain(key, null, "UCX would carry it over tcp only: the kernel's TCP connection carries the bytes");
                return;
            }
            writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(
                    HandshakeMessages.READY)));
            life.acceptedAccelerated(connection);
            established(this, key, life, connection, "from");
            queue.deliver(life);
        }

        /** Hands the connection to the application as plain TCP, with the bytes we took from it first. */
        private void plain(SelectionKey key, ByteBuffer taken, String why) {
            handshakes.remove(this);
            if (LOG.isLoggable(Level.DEBUG)) {
                LOG.log(Level.DEBUG, "hadroNIO: connection from " + peer(tcp) + " is plain TCP (" + why + ")");
            }
            key.cancel();
            // the socket leaves our selector at its next selection; only then may the
            // application make it blocking
            afterDeregistration.add(() -> queue.deliverPlain(tcp, taken));
            selector.wakeup();
        }

        /** Closes the connection: it began our handshake and broke it. */
        void refuse(String why) {
            handshakes.remove(this);
            if (LOG.isLoggable(Level.WARNING)) {
                LOG.log(Level.WARNING, "hadroNIO: refused connection from " + peer(tcp) + ": " + why);
            }
            if (connection != null) {
                connection.release();
                connection = null;
            }
            closeQuietly(tcp);
        }

        @Override
        void expire() {
            if (clientHello == null) {
                SelectionKey key = tcp.keyFor(selector);
                if (key != null) {
                    plain(key, reader.taken(), "no hello within the deadline");
                    return;
                }
            }
            refuse("no complete handshake within " + runtime.config().handshakeMillis() + " ms");
        }
    }

    /** A handshake ended accelerated: its TCP connection carries control records from now on. */
    private void established(Pending h, SelectionKey key, ConnectionLifecycle life, Connection connection,
                             String direction) {
        handshakes.remove(h);
        key.attach(new RecordReader(life));
        open.add(life);
        accelerated++;
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "hadroNIO: connection " + direction + " " + peer(h.tcp) + " accelerated over UCX "
                    + connection.transports());
        }
    }

    private long handshakeNanos() {
        return TimeUnit.MILLISECONDS.toNanos(runtime.config().handshakeMillis());
    }

    private void expireHandshakes() {
        if (handshakes.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (Pending h : new ArrayList<>(handshakes)) {
            if (now - h.deadline > 0 || !h.isOpen()) {
                h.expire();
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

    // ---- client-side handshakes --------------------------------------------------------------

    /**
     * Runs a connect to an accelerated server to its end on the control thread: finishes
     * the TCP connect (the lifecycle's socket must be non-blocking with {@code connect}
     * already called), speaks the handshake within the handshake timeout, and tells the
     * lifecycle how it ended.
     */
    public void connectAsync(ConnectionLifecycle life) {
        execute(() -> {
            ClientHandshake h = new ClientHandshake(life);
            try {
                SelectionKey key = life.tcp.register(selector, SelectionKey.OP_CONNECT, h);
                handshakes.add(h);
                if (life.tcp.isConnected()) {
                    // connected at once: no OP_CONNECT will come
                    h.onReadable(key);
                }
            } catch (IOException e) {
                closeQuietly(life.tcp);
                life.handshakeFailed(e);
            }
        });
    }

    /** The connecting side of a handshake, driven by readiness. */
    private final class ClientHandshake extends Pending {
        final ConnectionLifecycle life;
        final FrameReader reader = new FrameReader();
        Connection connection;
        byte[] clientHello;
        byte[] serverHello;

        ClientHandshake(ConnectionLifecycle life) {
            super(life.tcp, System.nanoTime() + handshakeNanos());
            this.life = life;
        }

        @Override
        void onReadable(SelectionKey key) {
            try {
                if (connection == null) {
                    if (!tcp.isConnected() && (!key.isConnectable() || !tcp.finishConnect())) {
                        return;
                    }
                    connection = runtime.newConnection(life);
                    clientHello = HandshakeMessages.clientHello(connection.localId,
                            connection.rxSliceSize, connection.rxSliceCount, connection.group().address(),
                            runtime.endpointProfile());
                    writeFully(tcp, ByteBuffer.wrap(clientHello));
                    key.interestOps(SelectionKey.OP_READ);
                    return;
                }
                byte[] frame;
                try {
                    frame = reader.read(tcp);
                } catch (ProtocolException e) {
                    throw new ProtocolException("hadroNIO handshake: " + peer(tcp) + " does not speak hadroNIO ("
                            + e.getMessage() + "); is it in hadronio.remote.networks by mistake?");
                }
                if (frame == null) {
                    if (reader.eof) {
                        throw new java.net.SocketException("hadroNIO handshake: " + peer(tcp)
                                + " closed the connection during the handshake");
                    }
                    return;
                }
                if (serverHello == null) {
                    onServerHello(key, frame);
                } else {
                    onReady(key, frame);
                }
            } catch (IOException | RuntimeException e) {
                failClient(e instanceof IOException io ? io : new IOException(e));
            }
        }

        private void onServerHello(SelectionKey key, byte[] frame) throws IOException {
            HandshakeMessages.Hello hello = HandshakeMessages.decodeHello(frame, HandshakeMessages.SERVER_HELLO);
            if (!HandshakeMessages.verifyServerHello(runtime.peers().secret(), clientHello, frame)
                    || !hello.profile().equals(runtime.endpointProfile())) {
                writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.signal(
                        HandshakeMessages.PLAIN)));
                plain(key, "the server does not prove our key, or its UCX endpoint settings differ ("
                        + hello.profile() + ")");
                return;
            }
            serverHello = frame;
            writeFully(tcp, ByteBuffer.wrap(HandshakeMessages.finish(
                    runtime.peers().secret(), clientHello, serverHello)));
        }

        private void onReady(SelectionKey key, byte[] frame) throws IOException {
            byte kind = HandshakeMessages.kind(frame);
            if (kind == HandshakeMessages.PLAIN) {
                plain(key, "the server chose plain TCP (it does not accept our key, or UCX would only use tcp)");
                return;
            }
            if (kind != HandshakeMessages.READY) {
                throw new ProtocolException("hadroNIO handshake: unexpected message kind " + kind);
            }
            HandshakeMessages.Hello hello = HandshakeMessages
                    .decodeHello(serverHello, HandshakeMessages.SERVER_HELLO);
            connection.connect(hello.connectionId(), hello.sliceSize(), hello.sliceCount(), hello.workerAddress());
            established(this, key, life, connection, "to");
            if (!life.handshakeAccelerated(connection)) {
                // the channel closed (and with it the socket) while the handshake ran
                forget(life);
                connection.release();
            }
            connection = null;
        }

        private void plain(SelectionKey key, String why) {
            handshakes.remove(this);
            connection.release();
            connection = null;
            if (LOG.isLoggable(Level.DEBUG)) {
                LOG.log(Level.DEBUG, "hadroNIO: connection to " + peer(tcp) + " is plain TCP (" + why + ")");
            }
            key.cancel();
            afterDeregistration.add(life::handshakePlain);
            selector.wakeup();
        }

        @Override
        void expire() {
            failClient(new java.net.SocketTimeoutException("hadroNIO handshake with " + peer(tcp) + ": no answer within "
                    + runtime.config().handshakeMillis() + " ms"));
        }

        private void failClient(IOException cause) {
            handshakes.remove(this);
            if (connection != null) {
                connection.release();
                connection = null;
            }
            closeQuietly(tcp);
            life.handshakeFailed(cause);
        }
    }

    /**
     * Reads an established connection's control records ({@link ControlRecord}) and hands
     * each to its lifecycle, which checks it; end-of-stream or an error on the socket ends
     * the reading.
     */
    private static final class RecordReader {
        final ConnectionLifecycle life;
        private final ByteBuffer in = ByteBuffer.allocate(ControlRecord.LENGTH);

        RecordReader(ConnectionLifecycle life) {
            this.life = life;
        }

        void onReadable(SelectionKey key) {
            try {
                while (true) {
                    int n = life.tcp.read(in);
                    if (n < 0) {
                        key.interestOps(0);
                        life.onControlEof(null);
                        return;
                    }
                    if (in.hasRemaining()) {
                        return;
                    }
                    in.flip();
                    byte type = in.get();
                    long value = in.getLong();
                    in.clear();
                    if (!life.onRecord(type, value)) {
                        // it broke the protocol (the connection is reset): nothing after it is read
                        key.interestOps(0);
                        return;
                    }
                }
            } catch (IOException e) {
                key.interestOps(0);
                life.onControlEof(e.getMessage());
            }
        }
    }

    // ---- timers: what connections have to finish ------------------------------------------------

    /** Ticks {@code life} every millisecond until it has nothing more to finish ({@link ConnectionLifecycle#tick}). */
    void watch(ConnectionLifecycle life) {
        if (Thread.currentThread() == thread) {
            if (life.startTicking()) {
                ticking.add(life);
            }
        } else {
            execute(() -> watch(life));
        }
    }

    private void tick() {
        if (ticking.isEmpty()) {
            owing = 0;
            return;
        }
        int owes = 0;
        for (Iterator<ConnectionLifecycle> it = ticking.iterator(); it.hasNext(); ) {
            ConnectionLifecycle life = it.next();
            if (!life.tick()) {
                it.remove();
            } else if (life.owesPeer()) {
                owes++;
            }
        }
        owing = owes;
    }

    /** Sends a control record on {@code life}'s socket; a peer that does not take it is only logged. */
    void send(ConnectionLifecycle life, byte type, long value) {
        try {
            writeFully(life.tcp, ControlRecord.encode(type, value));
        } catch (IOException e) {
            LOG.log(Level.DEBUG, "control connection: could not send record " + type, e);
        }
    }

    /** An upgraded connection's output moved to UCX: a normal JVM exit must close it in order. */
    void track(ConnectionLifecycle life) {
        execute(() -> open.add(life));
    }

    /** An upgraded connection's input moved to UCX: what follows the raw bytes on its socket are control records. */
    void readRecords(ConnectionLifecycle life) {
        execute(() -> {
            if (life.state() >= ConnectionLifecycle.CLOSED || !life.tcp.isOpen()) {
                return;
            }
            try {
                SelectionKey key = life.tcp.keyFor(selector);
                if (key == null) {
                    life.tcp.register(selector, SelectionKey.OP_READ, new RecordReader(life));
                } else {
                    key.attach(new RecordReader(life));
                    key.interestOps(SelectionKey.OP_READ);
                }
                open.add(life);
            } catch (IOException | java.nio.channels.CancelledKeyException e) {
                // closed meanwhile
            }
        });
    }

    /** {@code life}'s socket leaves this thread's selector (before it closes). Control thread. */
    void forget(ConnectionLifecycle life) {
        open.remove(life);
        SelectionKey key = life.tcp.keyFor(selector);
        if (key != null) {
            key.cancel();
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
