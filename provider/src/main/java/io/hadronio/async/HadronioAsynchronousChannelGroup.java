package io.hadronio.async;

import java.io.Closeable;
import java.io.IOException;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ShutdownChannelGroupException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A group of hadroNIO's asynchronous channels: {@link EventLoop}s, each a selector of the
 * group's {@link SelectorProvider} (hadroNIO's) and the thread that selects it, and the
 * thread pool that runs the handlers dispatched to it. Which thread runs what follows the
 * JDK's groups ({@code sun.nio.ch.AsynchronousChannelGroupImpl}):
 *
 * <table>
 * <caption>threads of a group</caption>
 * <tr><th>made by</th><th>loops</th><th>a completion's handler</th></tr>
 * <tr><td>{@code withFixedThreadPool(n, factory)}</td><td>n, one on each pool thread</td>
 *     <td>on the loop's thread; dispatched: posted to the channel's loop</td></tr>
 * <tr><td>{@code withCachedThreadPool(executor, k)}, k &gt; 0 (the default group: k = the
 *     processors)</td><td>k, each on a thread of the executor</td>
 *     <td>on the loop's thread; dispatched: the executor</td></tr>
 * <tr><td>{@code withCachedThreadPool(executor, 0)}, {@code withThreadPool(executor)}</td>
 *     <td>1, on an internal daemon thread</td><td>always dispatched to the executor</td></tr>
 * </table>
 *
 * <p>A handler runs directly on the thread where its operation completed when that is a
 * thread of the group and fewer than {@link #MAX_HANDLER_INVOKE_COUNT} handlers ran
 * directly for the event being handled (a handler that starts an operation that completes
 * at once would otherwise recurse without bound); otherwise it is dispatched. A read that
 * completes on a loop is thus handed to its handler on the loop's thread, without a hop,
 * and a handler's next read that finds its bytes waiting completes within it.
 *
 * <p>Shutdown as documented: {@link #shutdown} refuses new channels and terminates once the
 * last channel closed; {@link #shutdownNow} closes them; termination stops the loops and
 * shuts the executor down.
 */
public final class HadronioAsynchronousChannelGroup extends AsynchronousChannelGroup {
    /** The JDK's bound on handlers invoked directly on one stack ({@code sun.nio.ch.maxCompletionHandlersOnStack}). */
    static final int MAX_HANDLER_INVOKE_COUNT = Integer.getInteger("sun.nio.ch.maxCompletionHandlersOnStack", 16);

    /** A thread of a group that is not a loop: a pool thread running dispatched handlers. */
    private static final class PoolThread {
        final HadronioAsynchronousChannelGroup group;
        int invokeCount;

        PoolThread(HadronioAsynchronousChannelGroup group) {
            this.group = group;
        }
    }

    // the group of the current thread, for pool threads and loops (a loop's count is its own)
    private static final ThreadLocal<Object> CURRENT = new ThreadLocal<>();
    private static final AtomicInteger INTERNAL_THREADS = new AtomicInteger();

    private final SelectorProvider selectors;
    private final ExecutorService executor;
    // the loops run on the pool's threads, all of them (a fixed pool): a dispatched handler goes to a loop
    private final boolean loopsOwnPool;
    private final EventLoop[] loops;
    private final AtomicInteger nextLoop = new AtomicInteger();
    private final CountDownLatch loopsRunning;
    // the open channels (shutdownNow closes them)
    private final Set<Closeable> channels = ConcurrentHashMap.newKeySet();
    private final Object stateLock = new Object();
    // guarded by stateLock
    private boolean shutdown;
    private boolean terminating;
    private int openChannels;

    private HadronioAsynchronousChannelGroup(AsynchronousChannelProvider provider, SelectorProvider selectors,
            ExecutorService executor, int loopCount, boolean loopsOwnPool, boolean loopsRunHandlers)
            throws IOException {
        super(provider);
        this.selectors = selectors;
        this.executor = executor;
        this.loopsOwnPool = loopsOwnPool;
        this.loops = new EventLoop[loopCount];
        this.loopsRunning = new CountDownLatch(loopCount);
        try {
            for (int i = 0; i < loopCount; i++) {
                loops[i] = new EventLoop(this, selectors.openSelector(), loopsRunHandlers);
            }
        } catch (IOException | RuntimeException e) {
            for (EventLoop loop : loops) {
                if (loop != null) {
                    loop.selector().close();
                }
            }
            throw e;
        }
    }

    /** {@code withFixedThreadPool}: n pool threads, each running a loop, handlers on them. */
    public static HadronioAsynchronousChannelGroup withFixedThreadPool(AsynchronousChannelProvider provider, SelectorProvider selectors,
            int nThreads, ThreadFactory factory) throws IOException {
        if (nThreads <= 0) {
            throw new IllegalArgumentException("'nThreads' must be > 0");
        }
        ExecutorService pool = new ThreadPoolExecutor(nThreads, nThreads, 0L, TimeUnit.MILLISECONDS,
                new LinkedBlockingQueue<>(), factory);
        HadronioAsynchronousChannelGroup group = new HadronioAsynchronousChannelGroup(provider, selectors, pool,
                nThreads, true, true);
        for (EventLoop loop : group.loops) {
            pool.execute(loop);
        }
        return group;
    }

    /** {@code withCachedThreadPool} and {@code withThreadPool} (initialSize 0). */
    public static HadronioAsynchronousChannelGroup withCachedThreadPool(AsynchronousChannelProvider provider, SelectorProvider selectors,
            ExecutorService executor, int initialSize) throws IOException {
        HadronioAsynchronousChannelGroup group = new HadronioAsynchronousChannelGroup(provider, selectors, executor,
                Math.max(1, initialSize), false, initialSize > 0);
        if (initialSize > 0) {
            for (EventLoop loop : group.loops) {
                executor.execute(loop);
            }
        } else {
            // internal: the application's executor only runs handlers, as the JDK's internal threads
            Thread t = new Thread(group.loops[0], "hadronio-aio-" + INTERNAL_THREADS.incrementAndGet());
            t.setDaemon(true);
            t.start();
        }
        return group;
    }

    SelectorProvider selectors() {
        return selectors;
    }

    /** The loop of a new channel: round robin. */
    EventLoop nextLoop() {
        return loops[Math.floorMod(nextLoop.getAndIncrement(), loops.length)];
    }

    /**
     * A channel opened in the group.
     *
     * @throws ShutdownChannelGroupException if the group is shut down
     */
    void opened(Closeable channel) {
        synchronized (stateLock) {
            if (shutdown) {
                throw new ShutdownChannelGroupException();
            }
            openChannels++;
            channels.add(channel);
        }
    }

    /** A channel of the group closed: the last one ends a shut-down group. */
    void closed(Closeable channel) {
        boolean terminate;
        synchronized (stateLock) {
            if (!channels.remove(channel)) {
                return;
            }
            openChannels--;
            terminate = shutdown && openChannels == 0 && !terminating;
            terminating |= terminate;
        }
        if (terminate) {
            terminate();
        }
    }

    @Override
    public boolean isShutdown() {
        synchronized (stateLock) {
            return shutdown;
        }
    }

    @Override
    public boolean isTerminated() {
        return loopsRunning.getCount() == 0 && executor.isTerminated();
    }

    @Override
    public void shutdown() {
        boolean terminate;
        synchronized (stateLock) {
            if (shutdown) {
                return;
            }
            shutdown = true;
            terminate = openChannels == 0 && !terminating;
            terminating |= terminate;
        }
        if (terminate) {
            terminate();
        }
    }

    @Override
    public void shutdownNow() throws IOException {
        synchronized (stateLock) {
            shutdown = true;
        }
        for (Closeable channel : channels) {
            try {
                channel.close();
            } catch (IOException ignore) {
                // closing anyway: the group must terminate
            }
        }
        boolean terminate;
        synchronized (stateLock) {
            terminate = openChannels == 0 && !terminating;
            terminating |= terminate;
        }
        if (terminate) {
            terminate();
        }
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) throws InterruptedException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        if (!loopsRunning.await(timeout, unit)) {
            return false;
        }
        return executor.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
    }

    /** Stops the loops (each runs the handlers posted to it first), then the executor. */
    private void terminate() {
        for (EventLoop loop : loops) {
            loop.stop();
        }
        if (!loopsOwnPool) {
            executor.shutdown();
        }
    }

    /** A loop ended: when the last one has, a fixed pool (whose threads they were) shuts down. */
    void loopEnded() {
        loopsRunning.countDown();
        if (loopsOwnPool && loopsRunning.getCount() == 0) {
            executor.shutdown();
        }
    }

    void bindCurrentThread(EventLoop loop) {
        CURRENT.set(loop);
    }

    void unbindCurrentThread() {
        CURRENT.remove();
    }

    /** True on a thread of this group (a loop's, or a pool thread that ran a dispatched handler). */
    private boolean isGroupThread() {
        Object current = CURRENT.get();
        return current instanceof EventLoop l ? l.group() == this
                : current instanceof PoolThread p && p.group == this;
    }

    /**
     * Invokes {@code handler} for an operation of a channel on {@code loop} that completed on
     * this thread: directly when the thread is one of the group's and the bound on handlers
     * on its stack allows, else dispatched (the JDK's {@code Invoker.invoke}).
     *
     * @throws ShutdownChannelGroupException when it must be dispatched and the group has terminated
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void invoke(EventLoop loop, CompletionHandler handler, Object attachment, Object result, Throwable exc) {
        if (loop.inHandlerLoop()) {
            // the common case, without a thread-local look-up: a completion on the channel's own loop
            if (loop.invokeCount < MAX_HANDLER_INVOKE_COUNT) {
                loop.invokeCount++;
                invokeUnchecked(handler, attachment, result, exc);
                return;
            }
        } else {
            Object current = CURRENT.get();
            if (current instanceof EventLoop l && l.group() == this && l.invokeCount < MAX_HANDLER_INVOKE_COUNT) {
                l.invokeCount++;
                invokeUnchecked(handler, attachment, result, exc);
                return;
            }
            if (current instanceof PoolThread p && p.group == this && p.invokeCount < MAX_HANDLER_INVOKE_COUNT) {
                p.invokeCount++;
                invokeUnchecked(handler, attachment, result, exc);
                return;
            }
        }
        dispatch(loop, handler, attachment, result, exc);
    }

    /**
     * Runs {@code handler} on another thread of the group (the JDK's {@code invokeIndirectly}):
     * for failures of a close, timeouts, and completions on threads that are not the group's.
     * A group that has terminated runs it here if this is one of its threads.
     *
     * @throws ShutdownChannelGroupException if the group has terminated and this is not its thread
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    void dispatch(EventLoop loop, CompletionHandler handler, Object attachment, Object result, Throwable exc) {
        try {
            if (loopsOwnPool) {
                loop.execute(() -> invokeUnchecked(handler, attachment, result, exc));
            } else {
                executor.execute(() -> {
                    PoolThread self = poolThread();
                    self.invokeCount = 1;
                    invokeUnchecked(handler, attachment, result, exc);
                });
            }
        } catch (RejectedExecutionException e) {
            if (isGroupThread()) {
                invokeUnchecked(handler, attachment, result, exc);
            } else {
                throw new ShutdownChannelGroupException();
            }
        }
    }

    /** This pool thread's binding to the group, made at its first dispatched handler. */
    private PoolThread poolThread() {
        Object current = CURRENT.get();
        if (current instanceof PoolThread p && p.group == this) {
            return p;
        }
        PoolThread p = new PoolThread(this);
        CURRENT.set(p);
        return p;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void invokeUnchecked(CompletionHandler handler, Object attachment, Object result, Throwable exc) {
        if (exc == null) {
            handler.completed(result, attachment);
        } else {
            handler.failed(exc, attachment);
        }
        // as the JDK's: an interrupt a handler left must not reach the next one on this thread
        Thread.interrupted();
    }
}
