package io.hadronio.transport;

import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
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
 * TCP sockets of handshakes and of accelerated connections. It registers sockets and
 * dispatches their readiness to what is attached to their keys (a listener it accepts on
 * while registered clients are expected, a {@link Handshake}, the reader of a
 * connection's control records), fires deadlines and timer ticks, and runs tasks. It
 * runs no connection logic of its own: what a hello means is the handshake's business
 * ({@link Handshakes}), what a record or a tick means is the connection's
 * {@link ConnectionLifecycle}'s. Other threads talk to it only through
 * {@link #execute(Runnable)}.
 */
public final class ControlLoop implements Runnable, Reactor {
    private static final Logger LOG = System.getLogger(ControlLoop.class.getName());
    // how long JVM exit waits for closes still in progress (see lingerAtExit)
    private static final long EXIT_LINGER_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final UcxRuntime runtime;
    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // connections with something to finish (FIN, CLOSE, progress for a peer): ticked every millisecond
    private final List<ConnectionLifecycle> ticking = new ArrayList<>();
    // what must end by itself (handshakes): asked every pass whether it is due
    private final List<Deadlined> deadlines = new ArrayList<>();
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
     * closed, connections still finishing a close, connections whose bytes wait for a
     * credit; and how many handshakes ended accelerated since start
     * ({@code control.accelerated.total}). Taken on the control thread; empty if it does not
     * answer within ten seconds.
     */
    java.util.Map<String, Long> counts() {
        java.util.function.Supplier<java.util.Map<String, Long>> take = () -> java.util.Map.of(
                "control.open", (long) open.size(), "control.ticking", (long) ticking.size(),
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
    @Override
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
                        ? (deadlines.isEmpty() && freeing.isEmpty() ? 0 : 10) : 1;
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
                expireDeadlines();
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
        if (attachment instanceof Handler handler) {
            handler.ready(key);
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

    // ---- listeners ------------------------------------------------------------------------------

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
    private final class ListenerWatch implements Handler {
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

        @Override
        public void ready(SelectionKey key) {
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
     * A server channel closes: stop accepting for it. Runs {@code then} once the kernel
     * listener has left this thread's selector (only then does closing it really close it).
     */
    void abandon(ServerSocketChannel tcp, Runnable then) {
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
            then.run();
        });
    }

    // ---- what handshakes need (Reactor) -----------------------------------------------------------

    @Override
    public SelectionKey register(SocketChannel socket, int ops, Handler handler) throws IOException {
        return socket.register(selector, ops, handler);
    }

    @Override
    public void deregisterThen(SelectionKey key, Runnable then) {
        key.cancel();
        // the socket leaves the selector at its next selection; run() runs what waits for that after it
        afterDeregistration.add(then);
        selector.wakeup();
    }

    @Override
    public void established(SelectionKey key, ConnectionLifecycle life) {
        key.attach(new RecordReader(life));
        open.add(life);
        accelerated++;
    }

    @Override
    public void addDeadline(Deadlined d) {
        deadlines.add(d);
    }

    @Override
    public void removeDeadline(Deadlined d) {
        deadlines.remove(d);
    }

    private void expireDeadlines() {
        if (deadlines.isEmpty()) {
            return;
        }
        long now = System.nanoTime();
        for (Deadlined d : new ArrayList<>(deadlines)) {
            if (d.due(now)) {
                d.expire();
            }
        }
    }

    /**
     * Reads an established connection's control records ({@link ControlRecord}) and hands
     * each to its lifecycle, which checks it; end-of-stream or an error on the socket ends
     * the reading.
     */
    private static final class RecordReader implements Handler {
        final ConnectionLifecycle life;
        private final ByteBuffer in = ByteBuffer.allocate(ControlRecord.LENGTH);

        RecordReader(ConnectionLifecycle life) {
            this.life = life;
        }

        @Override
        public void ready(SelectionKey key) {
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
            Reactor.writeFully(life.tcp, ControlRecord.encode(type, value));
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
    @Override
    public void forget(ConnectionLifecycle life) {
        open.remove(life);
        SelectionKey key = life.tcp.keyFor(selector);
        if (key != null) {
            key.cancel();
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
