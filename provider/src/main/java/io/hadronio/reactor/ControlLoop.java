package io.hadronio.reactor;

import io.hadronio.platform.LazyLogger;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
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
 * dispatches their readiness to the {@link Reactor.Handler} attached to their keys, fires
 * deadlines and timer ticks, retries work until it is done, runs tasks, and closes in order
 * at a normal JVM exit what it was given to close. It runs no connection logic of its own:
 * what a hello, a record, a tick or a retry means is the business of what it drives
 * ({@link ConnectionControl}, the handshakes). Other threads talk to it only through
 * {@link #execute(Runnable)} and a {@link Reactor.RetryList}'s {@code request}.
 *
 * <p>One pass, in this order: take the retry requests, select (without a timeout only when
 * nothing is ticked, retried or due: else 1 ms while anything is ticked or retried every
 * pass, 10 ms otherwise), run the tasks, run what waited for a deregistration, dispatch the
 * selected keys, retry the retry lists (in the order they were made), tick, expire the
 * deadlines that had passed when the selection began. A pass with nothing to do allocates nothing.
 */
public final class ControlLoop implements Runnable, Reactor {
    private static final Logger LOG = LazyLogger.of(ControlLoop.class);
    // how long JVM exit waits for closes still in progress (see lingerAtExit)
    private static final long EXIT_LINGER_NANOS = TimeUnit.SECONDS.toNanos(10);

    private final Selector selector;
    private final Queue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // what has something to finish (a connection's FIN, CLOSE, progress for a peer): ticked every millisecond
    private final List<Ticked> ticking = new ArrayList<>();
    // what must end by itself (handshakes): asked every pass whether it is due
    private final List<Deadlined> deadlines = new ArrayList<>();
    // run after the next selection, once the sockets whose keys were cancelled have left the selector
    private final List<Runnable> afterDeregistration = new ArrayList<>();
    // what is open and not closed yet (accelerated connections): a normal JVM exit closes it in order
    private final Set<ClosedAtExit> open = java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>());
    // work retried until it is done, in the order the lists were made (this thread only: made through a task)
    private final List<Retrying<?>> retrying = new ArrayList<>();
    // true while the loop sleeps with no timeout: only then does a retry request wake it
    private volatile boolean sleepingUntilWoken;
    private final Thread thread;
    private volatile boolean running = true;
    // ticked things that still owe their peer something (a FIN or CLOSE), after the last ticks; for the exit hook
    private volatile int owing;
    // loop passes so far, for the exit hook: a count taken after its task ran is fresh
    private volatile long passes;

    public ControlLoop(SelectorProvider platform) throws IOException {
        this.selector = platform.openSelector();
        this.thread = new Thread(this, "hadronio-control");
        this.thread.setDaemon(true);
        this.thread.start();
        Runtime.getRuntime().addShutdownHook(new Thread(this::lingerAtExit, "hadronio-exit-linger"));
    }

    /**
     * JVM exit: close everything still open that was given to close in order (accelerated
     * connections the application left open), and wait (bounded) until every close and
     * shutdownOutput has finished, i.e. its posted sends completed and FIN/CLOSE went out
     * ({@link Ticked#owesPeer}). A kernel socket delivers what was
     * written even after the process exits, and its peer then reads end-of-stream; our
     * bytes may still sit in send slots that the peer fetches only while we live (UCX
     * rendezvous), and the control thread is a daemon that exit would stop mid-way.
     * Without this, a program that writes and returns from main (or calls System.exit)
     * loses its last bytes and the peer sees a reset. Plain TCP connections are the
     * kernel's, which does the same for them.
     */
    private void lingerAtExit() {
        if (!thread.isAlive()) {
            // shut down (a test's loop): nothing runs tasks to close anything
            return;
        }
        long deadline = System.nanoTime() + EXIT_LINGER_NANOS;
        java.util.concurrent.CompletableFuture<Long> queued = new java.util.concurrent.CompletableFuture<>();
        execute(() -> {
            for (ClosedAtExit c : new ArrayList<>(open)) {
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
     * What the control thread holds, as counts (a diagnostic): what is open for the exit to
     * close ({@code control.open}), what is ticked ({@code control.ticking}), and the items of
     * each retry list, handed over or waiting to be taken (under the list's name). Taken on
     * the control thread; empty if it does not answer within ten seconds.
     */
    public java.util.Map<String, Long> counts() {
        java.util.function.Supplier<java.util.Map<String, Long>> take = () -> {
            java.util.Map<String, Long> counts = new java.util.HashMap<>();
            counts.put("control.open", (long) open.size());
            counts.put("control.ticking", (long) ticking.size());
            for (Retrying<?> r : retrying) {
                counts.put(r.name, (long) (r.size() + r.requests.size()));
            }
            return counts;
        };
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

    /** Runs a task on the control thread. */
    @Override
    public void execute(Runnable task) {
        tasks.add(task);
        selector.wakeup();
    }

    @Override
    public boolean inReactorThread() {
        return Thread.currentThread() == thread;
    }

    @Override
    public void run() {
        while (running) {
            try {
                turn();
            } catch (Throwable t) {
                LOG.log(Level.ERROR, "hadroNIO control loop: unexpected error", t);
            }
        }
    }

    /**
     * One turn of the loop: requests, a selection, tasks, ready keys, retries, ticks. A method of
     * its own so that the JIT compiles it: a loop that turns a few hundred times a second (once per
     * connection's event) would reach the backedge count of an on-stack compilation only after
     * minutes, and ran its body in the interpreter all that time.
     */
    private void turn() throws java.io.IOException {
        takeRequests();
        long timeout = timeout();
        // the deadlines of this turn are judged by when its selection began: a socket whose bytes
        // came before that is among the keys it selects, handled before the deadlines; one that
        // expired later than that, while this thread was held up (a slow task, a loaded machine),
        // waits for the next selection, which sees its bytes if they came meanwhile
        long selectionBegan = System.nanoTime();
        if (timeout == 0) {
            // announce the open-ended sleep before the last look at the retry requests,
            // so that a thread adding one after that look sees the flag and wakes us
            sleepingUntilWoken = true;
            if (!anyRequest()) {
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
        for (int i = 0; i < retrying.size(); i++) {
            retrying.get(i).retryAll();
        }
        tick();
        expireDeadlines(selectionBegan);
        passes++;
    }

    /**
     * How long the next selection may sleep: 1 ms while anything is ticked or retried every
     * pass, 10 ms while a deadline or a slower retry waits, else without a timeout (0).
     */
    private long timeout() {
        if (!ticking.isEmpty()) {
            return 1;
        }
        long timeout = deadlines.isEmpty() ? 0 : 10;
        for (int i = 0; i < retrying.size(); i++) {
            Retrying<?> r = retrying.get(i);
            if (!r.isEmpty()) {
                if (r.everyNanos == 0) {
                    return 1;
                }
                timeout = 10;
            }
        }
        return timeout;
    }

    private void takeRequests() {
        for (int i = 0; i < retrying.size(); i++) {
            retrying.get(i).takeRequests();
        }
    }

    private boolean anyRequest() {
        for (int i = 0; i < retrying.size(); i++) {
            if (!retrying.get(i).requests.isEmpty()) {
                return true;
            }
        }
        return false;
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

    // ---- work retried until it is done --------------------------------------------------------

    @Override
    public <T> RetryList<T> retryList(String name, long everyNanos, Retry<T> how) {
        Retrying<T> list = new Retrying<>(name, everyNanos, how);
        // the list joins the passes on this thread, before any task that adds to it runs
        execute(() -> retrying.add(list));
        return list;
    }

    /**
     * One retry list: its items with when each was handed over or was last busy. A pass over it
     * runs every millisecond while it holds anything, so it allocates nothing: the items and their
     * times are parallel arrays (a done item's place takes the last one's), and membership is an
     * {@link java.util.IdentityHashMap}, which stores its keys in one flat array. (The map of items
     * to boxed times that this replaced allocated an entry and a {@code Long} per item and pass:
     * about 5 MB/s on a server answering 1,000 connections at 1,000 requests/s, most of them watched.)
     */
    private final class Retrying<T> implements RetryList<T> {
        final String name;
        final long everyNanos;
        final Retry<T> how;
        // the items, in no particular order, and when each was handed over or last busy
        private Object[] items = new Object[16];
        private long[] since = new long[16];
        private int size;
        private final java.util.Map<T, Boolean> members = new java.util.IdentityHashMap<>();
        // items handed over by other threads without a task, taken at the start of a pass
        final Queue<T> requests = new ConcurrentLinkedQueue<>();
        // when the items were last retried (a list retried at most every everyNanos)
        private long lookedAt;

        Retrying(String name, long everyNanos, Retry<T> how) {
            this.name = name;
            this.everyNanos = everyNanos;
            this.how = how;
        }

        @Override
        public void add(T item) {
            addAt(item, System.nanoTime());
        }

        private void addAt(T item, long now) {
            if (members.putIfAbsent(item, Boolean.TRUE) != null) {
                return;
            }
            if (size == items.length) {
                items = java.util.Arrays.copyOf(items, 2 * size);
                since = java.util.Arrays.copyOf(since, 2 * size);
            }
            items[size] = item;
            since[size] = now;
            size++;
        }

        int size() {
            return size;
        }

        boolean isEmpty() {
            return size == 0;
        }

        @Override
        public void request(T item) {
            requests.add(item);
            // the loop passes every millisecond while it retries anything every pass; only an
            // open-ended sleep needs a wake-up (an eventfd write per held-back burst cost
            // streaming writers a fifth of their time)
            if (sleepingUntilWoken) {
                selector.wakeup();
            }
        }

        void takeRequests() {
            T item = requests.poll();
            if (item == null) {
                return;
            }
            long now = System.nanoTime();
            do {
                addAt(item, now);
            } while ((item = requests.poll()) != null);
        }

        @SuppressWarnings("unchecked")
        void retryAll() {
            if (size == 0) {
                return;
            }
            long now = System.nanoTime();
            if (everyNanos > 0) {
                if (now - lookedAt < everyNanos) {
                    return;
                }
                lookedAt = now;
            }
            int i = 0;
            while (i < size) {
                T item = (T) items[i];
                switch (how.retry(item, now - since[i])) {
                    case Retry.BUSY -> {
                        since[i] = now;
                        i++;
                    }
                    case Retry.DONE -> {
                        // the last item takes its place, and is retried next
                        members.remove(item);
                        size--;
                        items[i] = items[size];
                        since[i] = since[size];
                        items[size] = null;
                    }
                    default -> i++; // idle: it stays
                }
            }
        }
    }

    // ---- sockets --------------------------------------------------------------------------------

    @Override
    public void abandon(SelectableChannel channel, Runnable then) {
        execute(() -> {
            SelectionKey key = channel.keyFor(selector);
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

    @Override
    public SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException {
        return channel.register(selector, ops, handler);
    }

    @Override
    public SelectionKey keyFor(SelectableChannel channel) {
        return channel.keyFor(selector);
    }

    @Override
    public void deregisterThen(SelectionKey key, Runnable then) {
        key.cancel();
        // the socket leaves the selector at its next selection; run() runs what waits for that after it
        afterDeregistration.add(then);
        selector.wakeup();
    }

    // ---- deadlines, ticks, exit -----------------------------------------------------------------

    @Override
    public void addDeadline(Deadlined d) {
        deadlines.add(d);
    }

    @Override
    public void removeDeadline(Deadlined d) {
        deadlines.remove(d);
    }

    /** Ends what was due by {@code now}, the start of this turn's selection (see {@link #turn}). */
    private void expireDeadlines(long now) {
        if (deadlines.isEmpty()) {
            return;
        }
        for (Deadlined d : new ArrayList<>(deadlines)) {
            if (d.due(now)) {
                d.expire();
            }
        }
    }

    @Override
    public void tickUntilDone(Ticked t) {
        ticking.add(t);
    }

    private void tick() {
        if (ticking.isEmpty()) {
            owing = 0;
            return;
        }
        int owes = 0;
        for (Iterator<Ticked> it = ticking.iterator(); it.hasNext(); ) {
            Ticked t = it.next();
            if (!t.tick()) {
                it.remove();
            } else if (t.owesPeer()) {
                owes++;
            }
        }
        owing = owes;
    }

    @Override
    public void closeAtExit(ClosedAtExit c) {
        open.add(c);
    }

    @Override
    public void removeExitClose(ClosedAtExit c) {
        open.remove(c);
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
