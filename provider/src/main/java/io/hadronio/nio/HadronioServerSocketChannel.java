package io.hadronio.nio;

import io.hadronio.transport.AcceptQueue;
import io.hadronio.transport.Connection;
import io.hadronio.transport.ControlLoop;
import io.hadronio.transport.UcxRuntime;
import java.io.IOException;
import java.net.ServerSocket;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ServerSocketChannel} whose accepted channels carry their bytes over UCX.
 *
 * <p>{@code bind} opens a real kernel listener (JDK provider), so ports, port 0, the
 * wildcard, backlog and {@code getLocalAddress} behave as with the JDK. The control
 * loop accepts on it and runs each handshake; connections that completed one wait in
 * a queue bounded by the backlog, from which {@link #accept()} takes them. A client that
 * never completes its handshake holds up nobody.
 */
public final class HadronioServerSocketChannel extends ServerSocketChannel implements AcceptQueue, UcxSelectable {
    private static final int DEFAULT_BACKLOG = 50;

    /** A connection waiting for accept(): accelerated (connection and control set) or plain (prefix or null). */
    private record Accepted(SocketChannel tcp, Connection connection, ControlLoop.Control control,
                            java.nio.ByteBuffer prefix) {
        void close() {
            if (control != null) {
                control.close();
            } else {
                try {
                    tcp.close();
                } catch (IOException e) {
                    // nothing to do
                }
            }
        }
    }

    // put into the queue by close() to wake a blocked accept at once
    private static final Accepted CLOSED = new Accepted(null, null, null, null);
    // where the local rendezvous listens for this channel's clients (null until bound)
    private volatile java.net.InetSocketAddress rendezvousAddress;

    private final UcxRuntime runtime;
    // the kernel listener
    private final ServerSocketChannel tcp;
    private final ReentrantLock acceptLock = new ReentrantLock();
    private final Object stateLock = new Object();
    private final LinkedBlockingQueue<Accepted> ready = new LinkedBlockingQueue<>();
    // connections the queue may hold; set by bind
    private volatile int backlog = DEFAULT_BACKLOG;
    // need stateLock to change
    private volatile boolean bound;
    // SO_TIMEOUT of the adaptor's accept, in ms
    volatile int acceptTimeoutMillis;
    private ServerSocketAdaptor socket;

    public HadronioServerSocketChannel(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        super(provider);
        this.runtime = runtime;
        this.tcp = runtime.platform().openServerSocketChannel();
    }

    @Override
    public ServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        synchronized (stateLock) {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            tcp.bind(local, backlog);
            this.backlog = backlog < 1 ? DEFAULT_BACKLOG : backlog;
            tcp.configureBlocking(false);
            bound = true;
            runtime.control().listen(tcp, this);
            offerRendezvous();
        }
        return this;
    }

    /**
     * Lets local hadroNIO clients find this listener ({@link io.hadronio.connection.LocalRendezvous}),
     * unless SO_REUSEPORT is on: another process (maybe a plain one) may then share the
     * port, and a client that registered with us could land on it.
     */
    private void offerRendezvous() throws IOException {
        Boolean reusePort = tcp.supportedOptions().contains(java.net.StandardSocketOptions.SO_REUSEPORT)
                ? tcp.getOption(java.net.StandardSocketOptions.SO_REUSEPORT) : Boolean.FALSE;
        if (Boolean.TRUE.equals(reusePort)) {
            return;
        }
        java.net.InetSocketAddress local = (java.net.InetSocketAddress) tcp.getLocalAddress();
        rendezvousAddress = local;
        runtime.peers().rendezvous().listen(local.getAddress(), local.getPort());
    }

    @Override
    public boolean hasRoom() {
        return ready.size() < backlog && isOpen();
    }

    @Override
    public void deliver(SocketChannel channel, Connection connection, ControlLoop.Control control) {
        if (!isOpen()) {
            control.close();
            return;
        }
        ready.add(new Accepted(channel, connection, control, null));
        // a selector waiting for OP_ACCEPT sleeps on the workers' event fds
        runtime.wakeAll();
    }

    @Override
    public void deliverPlain(SocketChannel channel, java.nio.ByteBuffer taken) {
        Accepted a = new Accepted(channel, null, null, taken);
        if (!isOpen()) {
            a.close();
            return;
        }
        ready.add(a);
        runtime.wakeAll();
    }

    @Override
    public int readyOps(int interestOps) {
        if ((interestOps & java.nio.channels.SelectionKey.OP_ACCEPT) != 0) {
            Accepted head = ready.peek();
            if (head != null && head != CLOSED) {
                return java.nio.channels.SelectionKey.OP_ACCEPT;
            }
        }
        return 0;
    }

    @Override
    public SocketChannel accept() throws IOException {
        return accept(0);
    }

    /** Accept bounded by {@code timeoutMillis} (> 0) in blocking mode, for the socket adaptor. */
    SocketChannel accept(int timeoutMillis) throws IOException {
        acceptLock.lock();
        try {
            if (!isOpen()) {
                throw new ClosedChannelException();
            }
            if (!bound) {
                throw new NotYetBoundException();
            }
            boolean blocking = isBlocking();
            Accepted a = null;
            try {
                if (blocking) {
                    begin();
                    a = timeoutMillis > 0 ? ready.poll(timeoutMillis, TimeUnit.MILLISECONDS) : ready.take();
                    if (a == null) {
                        throw new SocketTimeoutException("Accept timed out");
                    }
                } else {
                    a = ready.poll();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } finally {
                if (blocking) {
                    end(a != null && a != CLOSED);
                }
            }
            if (a == null || a == CLOSED) {
                if (blocking && Thread.currentThread().isInterrupted()) {
                    // Thread.interrupt() sets the status and unparks us before it runs the
                    // channel's interruptor; if our end() got in first, the interruptor never
                    // runs (we are no longer blocked on the channel). Do its work: close the
                    // channel and report the interrupt, as the NIO contract says.
                    close();
                    throw new ClosedByInterruptException();
                }
                if (!isOpen()) {
                    throw new ClosedChannelException();
                }
                return null;
            }
            runtime.control().resumeAccepting(tcp);
            if (a.control == null) {
                try {
                    return new HadronioSocketChannel(provider(), runtime, a.tcp, a.prefix);
                } catch (IOException e) {
                    a.close();
                    throw e;
                }
            }
            return new HadronioSocketChannel(provider(), runtime, a.tcp, a.connection, a.control);
        } finally {
            acceptLock.unlock();
        }
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return tcp.getLocalAddress();
    }

    boolean isBound() {
        return bound;
    }

    @Override
    public <T> ServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        tcp.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
        return tcp.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return tcp.supportedOptions();
    }

    @Override
    public ServerSocket socket() {
        synchronized (stateLock) {
            if (socket == null) {
                socket = new ServerSocketAdaptor(this);
            }
            return socket;
        }
    }

    @Override
    protected void implConfigureBlocking(boolean block) {
        // accept() waits on the queue; the kernel listener stays non-blocking
    }

    @Override
    protected void implCloseSelectableChannel() throws IOException {
        ready.add(CLOSED);
        java.net.InetSocketAddress r = rendezvousAddress;
        if (r != null) {
            runtime.peers().rendezvous().unlisten(r.getAddress(), r.getPort());
        }
        if (bound) {
            CountDownLatch closed = new CountDownLatch(1);
            runtime.control().unlisten(tcp, () -> {
                try {
                    tcp.close();
                } catch (IOException e) {
                    // nothing to do
                } finally {
                    closed.countDown();
                }
            });
            try {
                closed.await(2, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        } else {
            tcp.close();
        }
        Accepted a;
        while ((a = ready.poll()) != null) {
            if (a != CLOSED) {
                a.close();
            }
        }
        ready.add(CLOSED);
    }

    @Override
    public String toString() {
        String local;
        try {
            local = isOpen() ? String.valueOf(tcp.getLocalAddress()) : "closed";
        } catch (IOException e) {
            local = "?";
        }
        return getClass().getSimpleName() + "[" + local + "]";
    }
}
