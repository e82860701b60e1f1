package io.hadronio.transport;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.TimeUnit;

/**
 * What connection logic that runs on the control thread (the handshakes) needs from the
 * reactor that drives it ({@link ControlLoop}), and no more: readiness of its sockets
 * delivered to what it attached, a socket handed back once it has left the reactor's
 * selector, an accelerated connection handed over to the reading of its control records,
 * and deadlines. The reactor decides nothing about a connection; whatever is attached to
 * a key does. Every method but {@link #execute} is called on the reactor's thread.
 */
interface Reactor {
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

    /** Runs {@code task} on the reactor's thread; any thread. */
    void execute(Runnable task);

    /** Registers {@code socket} (non-blocking) for {@code ops}; {@code handler} is told of its readiness. */
    SelectionKey register(SocketChannel socket, int ops, Handler handler) throws IOException;

    /**
     * Cancels {@code key} and runs {@code then} once its socket has left the reactor's selector:
     * only then may it be made blocking, or closed for real.
     */
    void deregisterThen(SelectionKey key, Runnable then);

    /**
     * A handshake ended accelerated: from now on the socket of {@code key} carries
     * {@code life}'s control records, and a normal JVM exit must close {@code life} in order.
     */
    void established(SelectionKey key, ConnectionLifecycle life);

    /** {@code life}'s socket leaves the reactor (before it closes). */
    void forget(ConnectionLifecycle life);

    /** Asks {@code d} every pass whether it is due, and expires it when it is. */
    void addDeadline(Deadlined d);

    void removeDeadline(Deadlined d);

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
