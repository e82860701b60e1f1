package io.hadronio.async;

import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The {@link Future} of one asynchronous operation that the caller asked for one (the only
 * allocation an operation's API forces). Completed at most once, by the channel or by
 * {@link #cancel}; {@code get} waits on the future's monitor.
 *
 * <p>Cancelling a pending operation does what the JDK's does: the channel forgets the
 * operation and refuses further operations of its kind ({@link Cancellable#onCancel}: the
 * bytes may have been transferred), and {@code cancel(true)} also closes the channel.
 */
final class OperationFuture<V> implements Future<V> {
    /** What a channel does when one of its pending operations is cancelled. */
    interface Cancellable {
        /** Forgets {@code future}'s operation if it is still pending; called under the future's lock. */
        void onCancel(OperationFuture<?> future);

        /** Closes the channel ({@code cancel(true)}). */
        void closeForCancel();
    }

    // the operation kinds, for the channel's onCancel
    static final int READ = 0;
    static final int WRITE = 1;
    static final int CONNECT = 2;
    static final int ACCEPT = 3;

    // null for a future made completed
    private final Cancellable channel;
    private final int kind;
    // guarded by this
    private boolean done;
    private boolean cancelled;
    private V value;
    private Throwable failure;

    OperationFuture(Cancellable channel, int kind) {
        this.channel = channel;
        this.kind = kind;
    }

    static <V> OperationFuture<V> completed(V value) {
        OperationFuture<V> f = new OperationFuture<>(null, -1);
        f.done = true;
        f.value = value;
        return f;
    }

    static <V> OperationFuture<V> failed(Throwable failure) {
        OperationFuture<V> f = new OperationFuture<>(null, -1);
        f.done = true;
        f.failure = failure;
        return f;
    }

    int kind() {
        return kind;
    }

    /** Completes with {@code v} unless done already (cancelled). */
    synchronized void complete(V v) {
        if (!done) {
            value = v;
            done = true;
            notifyAll();
        }
    }

    /** Fails with {@code e} unless done already (cancelled). */
    synchronized void fail(Throwable e) {
        if (!done) {
            failure = e;
            done = true;
            notifyAll();
        }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        synchronized (this) {
            if (done) {
                return false;
            }
            if (channel != null) {
                channel.onCancel(this);
            }
            cancelled = true;
            done = true;
            notifyAll();
        }
        if (mayInterruptIfRunning && channel != null) {
            channel.closeForCancel();
        }
        return true;
    }

    @Override
    public synchronized boolean isCancelled() {
        return cancelled;
    }

    @Override
    public synchronized boolean isDone() {
        return done;
    }

    @Override
    public synchronized V get() throws InterruptedException, ExecutionException {
        while (!done) {
            wait();
        }
        return result();
    }

    @Override
    public synchronized V get(long timeout, TimeUnit unit)
            throws InterruptedException, ExecutionException, TimeoutException {
        long deadline = System.nanoTime() + unit.toNanos(timeout);
        while (!done) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new TimeoutException();
            }
            TimeUnit.NANOSECONDS.timedWait(this, left);
        }
        return result();
    }

    private V result() throws ExecutionException {
        assert Thread.holdsLock(this) && done;
        if (cancelled) {
            throw new CancellationException();
        }
        if (failure != null) {
            throw new ExecutionException(failure);
        }
        return value;
    }
}
