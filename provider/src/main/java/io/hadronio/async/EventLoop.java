package io.hadronio.async;

import java.io.IOException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

/**
 * One selector and the thread that selects it: the reactor under a group's channels. Each
 * channel belongs to one loop for its life and registers its non-blocking NIO channel with
 * the loop's selector, interest set to what it waits for. The loop hands each ready key to
 * its channel ({@link Member#onReady}), which finishes the operation and invokes its handler
 * on this thread (see {@link HadronioAsynchronousChannelGroup#invoke}); it runs the tasks
 * posted to it (handlers dispatched in a fixed pool) and fails the operations whose timeout
 * passed.
 *
 * <p>Timeouts cost nothing per operation: a timed operation keeps its deadline in its
 * channel and lowers the loop's earliest deadline; when that passes, the loop asks every
 * member once ({@link Member#expire}) and they report their next deadline. A deadline of an
 * operation that completed in time only costs that one pass.
 */
final class EventLoop implements Runnable, Consumer<SelectionKey> {
    /** What a loop asks of the channels registered with it (the key's attachment). */
    interface Member {
        /** The key is ready for {@code readyOps}; on the loop's thread. */
        void onReady(int readyOps);

        /** Fails the operations whose deadline is not after {@code now}; lowers the loop's deadline for the rest. */
        void expire(long now);
    }

    private static final long NO_DEADLINE = Long.MAX_VALUE;

    private final HadronioAsynchronousChannelGroup group;
    private final Selector selector;
    // false: an internal loop (a group on the application's executor, initialSize 0), which
    // dispatches every handler to the executor and is not one of the group's threads
    private final boolean runsHandlers;
    // the thread that runs the loop, set once when it starts. Plain, not volatile: it is read on
    // every completion to ask "am I the loop?", which only the loop's own thread answers yes to,
    // and that thread sees its own write; any other thread, whatever it sees, is not the loop
    private Thread thread;
    // handlers invoked directly for the event being handled (the JDK's invoke count): the loop's thread only
    int invokeCount;
    // handlers dispatched to this loop (fixed pools), run between selections
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    // the earliest deadline of a timed operation of a member (NO_DEADLINE: none known)
    private final AtomicLong earliestDeadline = new AtomicLong(NO_DEADLINE);
    // the members found ready by the last selection, and their ready ops (the loop's thread only;
    // grown, never shrunk: nothing is allocated per selection)
    private Member[] ready = new Member[16];
    private int[] readyOps = new int[16];
    private int readyCount;
    private volatile boolean stopping;
    private volatile boolean stopped;

    EventLoop(HadronioAsynchronousChannelGroup group, Selector selector, boolean runsHandlers) {
        this.group = group;
        this.selector = selector;
        this.runsHandlers = runsHandlers;
    }

    Selector selector() {
        return selector;
    }

    HadronioAsynchronousChannelGroup group() {
        return group;
    }

    /** True on the loop's own thread. */
    boolean inLoop() {
        return Thread.currentThread() == thread;
    }

    /** True on the loop's own thread when it may run handlers (it is one of the group's threads). */
    boolean inHandlerLoop() {
        return runsHandlers && Thread.currentThread() == thread;
    }

    /** Runs {@code task} on the loop's thread; rejected once the loop has stopped. */
    void execute(Runnable task) {
        if (stopped) {
            throw new RejectedExecutionException("group terminated");
        }
        tasks.add(task);
        if (stopped && tasks.remove(task)) {
            throw new RejectedExecutionException("group terminated");
        }
        // the loop's own thread runs its tasks before it selects again: no wake-up (a syscall) needed.
        // A handler chain that completes at once is dispatched here every MAX_HANDLER_INVOKE_COUNT
        // handlers (streaming writes: every 16th write)
        if (!inLoop()) {
            selector.wakeup();
        }
    }

    /** Lowers the loop's earliest deadline to {@code deadline}; wakes the loop when it changed it from elsewhere. */
    void deadline(long deadline) {
        while (true) {
            long current = earliestDeadline.get();
            if (deadline - current >= 0 && current != NO_DEADLINE) {
                return;
            }
            if (earliestDeadline.compareAndSet(current, deadline)) {
                if (!inLoop()) {
                    selector.wakeup();
                }
                return;
            }
        }
    }

    /** The loop ends at its next turn, after the tasks posted so far ran. */
    void stop() {
        stopping = true;
        selector.wakeup();
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        if (runsHandlers) {
            group.bindCurrentThread(this);
        }
        try {
            while (!stopping) {
                runTasks();
                long now = System.nanoTime();
                long earliest = earliestDeadline.get();
                if (earliest != NO_DEADLINE && now - earliest >= 0) {
                    expire(now);
                    continue;
                }
                if (!tasks.isEmpty()) {
                    selector.selectNow(this);
                } else if (earliest == NO_DEADLINE) {
                    selector.select(this);
                } else {
                    selector.select(this, Math.max(1, (earliest - now + 999_999) / 1_000_000));
                }
                handleReady();
            }
        } catch (ClosedSelectorException | IOException e) {
            uncaught(e);
        } finally {
            stopped = true;
            runTasks();
            try {
                selector.close();
            } catch (IOException e) {
                uncaught(e);
            }
            group.unbindCurrentThread();
            group.loopEnded();
        }
    }

    /**
     * One ready key, handed over by the selection: kept for {@link #handleReady}, after the
     * selection has returned. Handlers start transfers and close channels, which must not run
     * inside the selection (the selector's locks are held there).
     */
    @Override
    public void accept(SelectionKey key) {
        if (readyCount == ready.length) {
            ready = java.util.Arrays.copyOf(ready, readyCount * 2);
            readyOps = java.util.Arrays.copyOf(readyOps, readyCount * 2);
        }
        ready[readyCount] = (Member) key.attachment();
        readyOps[readyCount++] = key.readyOps();
    }

    /** The ready keys' channels finish what they can. A handler's exception does not end the loop. */
    private void handleReady() {
        int n = readyCount;
        for (int i = 0; i < n; i++) {
            Member m = ready[i];
            ready[i] = null;
            invokeCount = 0;
            try {
                m.onReady(readyOps[i]);
            } catch (RuntimeException | Error e) {
                uncaught(e);
            }
        }
        readyCount = 0;
    }

    private void runTasks() {
        Runnable task;
        while ((task = tasks.poll()) != null) {
            // a dispatched handler counts as one on the stack (the JDK's invokeIndirectly)
            invokeCount = 1;
            try {
                task.run();
            } catch (RuntimeException | Error e) {
                uncaught(e);
            }
        }
    }

    /** Asks every member to fail what is overdue; they lower the deadline again for the rest. */
    private void expire(long now) {
        earliestDeadline.set(NO_DEADLINE);
        for (SelectionKey key : selector.keys()) {
            if (key.attachment() instanceof Member m) {
                invokeCount = 0;
                try {
                    m.expire(now);
                } catch (RuntimeException | Error e) {
                    uncaught(e);
                }
            }
        }
    }

    /** What escaped a handler: the thread's uncaught-exception handler sees it, as it would a pool thread's. */
    static void uncaught(Throwable e) {
        Thread t = Thread.currentThread();
        t.getUncaughtExceptionHandler().uncaughtException(t, e);
    }
}
