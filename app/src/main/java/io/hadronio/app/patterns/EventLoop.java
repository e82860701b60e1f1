package io.hadronio.app.patterns;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.Iterator;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A framework's I/O thread, as Netty's event loop and most NIO frameworks shape it: one
 * Selector, one thread, and a queue through which application threads hand it work. An
 * application thread that writes queues the write ({@link Session#write}) and wakes the
 * selector only when the loop is in (or about to enter) {@code select()}: Netty's
 * {@code nextWakeupNanos}, here one flag. Every session of the loop is registered before
 * {@link #start()}.
 */
final class EventLoop implements AutoCloseable {
    private final Selector selector;
    // sessions with writes queued by another thread, flushed by the loop
    private final Queue<Session> flushes = new ConcurrentLinkedQueue<>();
    // false while the loop selects or is about to: the next submit must wake it (Netty's AWAKE)
    private final AtomicBoolean awake = new AtomicBoolean(true);
    private final Thread thread;
    private volatile boolean running = true;
    // the loop's end: an exception that stopped it, or null
    private volatile Throwable failure;

    EventLoop(String name) throws IOException {
        selector = Selector.open();
        thread = new Thread(this::run, name);
        thread.setDaemon(true);
    }

    Selector selector() {
        return selector;
    }

    void start() {
        thread.start();
    }

    /** From any thread: {@code session} has writes queued; the loop flushes them. */
    void submit(Session session) {
        flushes.add(session);
        if (!awake.getAndSet(true)) {
            selector.wakeup();
        }
    }

    /** Throws what stopped the loop, if anything did. */
    void check() {
        Throwable t = failure;
        if (t != null) {
            throw new IllegalStateException("I/O thread failed", t);
        }
    }

    private void run() {
        try {
            while (running) {
                awake.set(false);
                // a submit before this check is seen here; one after it saw awake == false and woke us
                if (flushes.isEmpty()) {
                    selector.select();
                } else {
                    selector.selectNow();
                }
                awake.set(true);
                for (Iterator<SelectionKey> it = selector.selectedKeys().iterator(); it.hasNext(); ) {
                    SelectionKey key = it.next();
                    it.remove();
                    Session s = (Session) key.attachment();
                    if (key.isValid() && key.isReadable()) {
                        s.readable();
                    }
                    if (key.isValid() && key.isWritable()) {
                        s.flush();
                    }
                }
                for (Session s; (s = flushes.poll()) != null; ) {
                    s.flush();
                }
            }
        } catch (IOException e) {
            failure = new UncheckedIOException(e);
        } catch (RuntimeException | Error e) {
            failure = e;
        }
    }

    @Override
    public void close() throws IOException {
        running = false;
        selector.wakeup();
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        selector.close();
    }
}
