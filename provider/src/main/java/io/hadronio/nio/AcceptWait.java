package io.hadronio.nio;

import io.hadronio.platform.EPollSet;
import io.hadronio.platform.EventFd;
import io.hadronio.worker.AdaptiveSpin;
import java.io.IOException;
import java.nio.channels.SelectableChannel;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Where a server channel's blocking accept waits: an {@code epoll(7)} set of the listeners' fds
 * and of {@link #wakeFd}, which a finished handshake, {@code close} and an interrupt (through
 * close) signal. Before it sleeps it spins, as every adaptive waiter does
 * ({@code hadronio.polling}), asking epoll without waiting: a server that accepts connections
 * one by one then takes the next one on a core that never went idle, where the JDK's accept
 * wakes from {@code accept(2)} on an idle one (short connections with one client: 1.32x the
 * JDK's rate with the spin, level without it; docs/benchmarks/connections.md).
 *
 * <p>Made at bind; used under the channel's accept lock, except {@link #signal()} and
 * {@link #signalIfSleeping()} (any thread).
 */
final class AcceptWait {
    // the channel, and its connections whose handshake ended: either ends a wait
    private final SelectableChannel channel;
    private final ConcurrentLinkedQueue<?> handshaken;
    // signalled by a finished handshake and by close
    private final EventFd wakeFd = new EventFd();
    // the listeners' fds and wakeFd, made once (a poll(2) sets up and tears down its wait on
    // both fds at every accept: ~4 us of a connection's ~100 in a thread-per-connection server)
    private final EPollSet set = new EPollSet(3);
    // the spin before a sleep (hadronio.polling)
    private final AdaptiveSpin spin;
    // a blocking accept is about to sleep or sleeps in poll(2): a finished handshake must
    // signal wakeFd (set before it looks at handshaken, read after an enqueue: no lost wake-up)
    private volatile boolean sleeping;
    // blocking accepts that slept in epoll_wait; written under the accept lock
    private volatile long sleeps;
    // the set and wakeFd are closed (under the accept lock)
    private boolean closed;
    // the local stream listener's fd (addListener), or -1; and whether the last wait ended with
    // fds ready among which it was not (under the accept lock; see takeLocalIdle)
    private int localFd = -1;
    private boolean localIdle;

    AcceptWait(SelectableChannel channel, ConcurrentLinkedQueue<?> handshaken, int listenerFd, AdaptiveSpin spin)
            throws IOException {
        this.channel = channel;
        this.handshaken = handshaken;
        this.spin = spin;
        set.add(listenerFd, EPollSet.EPOLLIN);
        set.add(wakeFd.fd(), EPollSet.EPOLLIN);
    }

    /** Another listener (the local stream one) whose connections end a wait too. */
    void addListener(int fd) throws IOException {
        set.add(fd, EPollSet.EPOLLIN);
        localFd = fd;
    }

    /**
     * True when the last wait ended on ready fds and the local stream listener was not among
     * them: the accept that follows need not ask it (a failed {@code accept(2)} per TCP
     * connection otherwise). Asked once: false until the next wait says so again. A local
     * connection that comes meanwhile waits for the next accept, whose wait reports it at once.
     */
    boolean takeLocalIdle() {
        boolean idle = localIdle;
        localIdle = false;
        return idle;
    }

    /** Wakes a blocked accept (close): it sees the channel closed. */
    void signal() {
        wakeFd.signal();
    }

    /** A connection was queued: wakes a blocked accept that sleeps (a write(2) per connection otherwise). */
    void signalIfSleeping() {
        if (sleeping) {
            wakeFd.signal();
        }
    }

    /** How often a blocking accept slept in {@code epoll_wait(2)} (for tests: the spin caught the others). */
    long sleeps() {
        return sleeps;
    }

    private boolean ended() {
        return !handshaken.isEmpty() || !channel.isOpen();
    }

    /**
     * Sleeps until a listener has a connection, a handshake finished, or close/interrupt signalled.
     *
     * @param timeoutMillis the accept's timeout, -1 for none
     */
    void await(int timeoutMillis) throws IOException {
        EPollSet e = set;
        int n;
        sleeping = true;
        try {
            if (ended()) {
                return;
            }
            long start = System.nanoTime();
            n = spinForConnection(e, timeoutMillis);
            if (n == 0 && !ended()) {
                // what is left of the timeout after the spin (busy polling spins all of it)
                long left = timeoutMillis < 0 ? -1
                        : Math.max(0, timeoutMillis - (System.nanoTime() - start) / 1_000_000);
                if (left != 0) {
                    sleeps++;
                    n = e.poll((int) left);
                }
            }
        } finally {
            sleeping = false;
        }
        int wake = wakeFd.fd();
        boolean local = false;
        for (int i = 0; i < n; i++) {
            int fd = e.readyFd(i);
            if (fd == wake) {
                wakeFd.drain();
            }
            local |= fd == localFd;
        }
        localIdle = n > 0 && localFd >= 0 && !local;
    }

    /**
     * The adaptive spin of a blocking accept before it sleeps ({@link AdaptiveSpin}):
     * epoll's count of ready fds once a listener or {@link #wakeFd} is ready, 0 when the
     * spin ended (its window, the crowd check, {@code hadronio.polling=event}), a handshake
     * finished, or the channel closed. Each turn is one {@code epoll_wait(2)} that does not
     * wait.
     *
     * @param timeoutMillis the accept's timeout, -1 for none
     */
    private int spinForConnection(EPollSet e, int timeoutMillis) throws IOException {
        if (!spin.spins()) {
            return 0;
        }
        long start = System.nanoTime();
        long deadline = timeoutMillis < 0 ? Long.MAX_VALUE : start + timeoutMillis * 1_000_000L;
        spin.start(start);
        try {
            while (true) {
                int n = e.poll(0);
                if (n != 0 || ended()) {
                    return n;
                }
                long now = System.nanoTime();
                if (deadline != Long.MAX_VALUE && now - deadline >= 0) {
                    return 0;
                }
                if (!spin.turn(now)) {
                    return 0;
                }
            }
        } finally {
            spin.stop();
        }
    }

    /** Closes the set and the wake-up fd, once (a closed channel's; under the accept lock). */
    void close() {
        if (!closed) {
            closed = true;
            set.close();
            wakeFd.close();
        }
    }
}
