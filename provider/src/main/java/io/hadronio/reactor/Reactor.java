package io.hadronio.reactor;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * What connection logic that runs on the control thread needs from the reactor that drives
 * it ({@link ControlLoop}), and no more: readiness of its sockets delivered to what it
 * attached, a socket handed back once it has left the reactor's selector, deadlines, timer
 * ticks for what has something to finish, work retried until it is done, and what a normal
 * JVM exit must close in order. The reactor decides nothing about a connection; whatever is
 * attached to a key, ticked, retried or closed at exit does. Every method is called on the
 * reactor's thread unless its Javadoc says "any thread".
 */
public interface Reactor {
    /** What is attached to a selection key: told when its socket is ready. */
    interface Handler {
        void ready(SelectionKey key);
    }

    /** Something that must end by itself: the reactor asks it every pass (at least every 10 ms). */
    interface Deadlined {
        /** True once it must end: its deadline passed, or nothing else can end it any more. */
        boolean due(long now);

        /** Ends it. It leaves the reactor's list itself ({@link #removeDeadline}). */
        void expire();
    }

    /** Something with work to finish: ticked every millisecond until it says it is done ({@link #tickUntilDone}). */
    interface Ticked {
        /** One tick of its work; false once it is done (it then leaves the tick list). */
        boolean tick();

        /**
         * Asked after a tick that kept it on the list: true while it still owes the far end
         * of its socket something that a normal JVM exit must wait for.
         */
        boolean owesPeer();
    }

    /** Something a normal JVM exit closes in order ({@link #closeAtExit}); closed on the reactor's thread. */
    interface ClosedAtExit {
        void closeAtExit();
    }

    /**
     * How the reactor retries one kind of work on its items until each is done
     * ({@link #retryList}). The reactor keeps, per item, when it was handed over or last
     * reported {@link #BUSY}.
     */
    interface Retry<T> {
        /** The item has nothing new: it stays, and its idle time goes on. */
        int IDLE = 0;
        /** The item made progress: it stays, and its idle time starts over. */
        int BUSY = 1;
        /** The item is done: it leaves the list. */
        int DONE = 2;

        /** One try at {@code item}, idle for {@code idleNanos}: {@link #IDLE}, {@link #BUSY} or {@link #DONE}. */
        int retry(T item, long idleNanos);
    }

    /** The items one {@link Retry} works on, each once however often it is handed over. */
    interface RetryList<T> {
        /** Adds {@code item} (if it is not there yet); reactor thread. */
        void add(T item);

        /**
         * Adds {@code item} from any thread without a task: the reactor takes it at its next
         * pass, and is woken for it only when it sleeps without a timeout (its passes come at
         * least every millisecond while anything is retried every pass).
         */
        void request(T item);
    }

    /** Runs {@code task} on the reactor's thread; any thread. */
    void execute(Runnable task);

    /** Whether the caller is the reactor's thread; any thread. */
    boolean inReactorThread();

    /** Registers {@code channel} (non-blocking) for {@code ops}; {@code handler} is told of its readiness. */
    SelectionKey register(SelectableChannel channel, int ops, Handler handler) throws IOException;

    /** The key of {@code channel} in the reactor's selector, or null. */
    SelectionKey keyFor(SelectableChannel channel);

    /**
     * Cancels {@code key} and runs {@code then} once its socket has left the reactor's selector:
     * only then may it be made blocking, or closed for real.
     */
    void deregisterThen(SelectionKey key, Runnable then);

    /**
     * {@code channel} leaves the reactor at once: its key is cancelled and flushed out of the
     * selector, then {@code then} runs (only then does closing a listener really close it).
     * Any thread.
     */
    void abandon(SelectableChannel channel, Runnable then);

    /** Asks {@code d} every pass whether it is due, and expires it when it is. */
    void addDeadline(Deadlined d);

    void removeDeadline(Deadlined d);

    /**
     * Ticks {@code t} every millisecond, after the retry lists and before the deadlines,
     * until its {@link Ticked#tick} says it is done. The caller keeps {@code t} from being
     * added while it is on the list.
     */
    void tickUntilDone(Ticked t);

    /** A normal JVM exit closes {@code c} in order, unless it is taken back ({@link #removeExitClose}) first. */
    void closeAtExit(ClosedAtExit c);

    void removeExitClose(ClosedAtExit c);

    /**
     * A list of items that {@code how} retries on the reactor's thread until each is done:
     * every pass ({@code everyNanos} 0; passes then come at least every millisecond while an
     * item waits) or at most every {@code everyNanos} (passes then come at least every 10 ms).
     * Lists are retried in the order they were made, before the ticks; {@code name} is the
     * list's entry in the reactor's counts. Any thread, before the list is used.
     */
    <T> RetryList<T> retryList(String name, long everyNanos, Retry<T> how);

    /**
     * Writes all of {@code b} on a non-blocking socket from the reactor's thread, which must
     * never wait without bound: a peer that takes nothing for 5 s fails the write. The frames
     * and records written this way are small and the kernel's send buffer takes them at once;
     * only a peer that stops reading ever makes it wait.
     */
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
}
