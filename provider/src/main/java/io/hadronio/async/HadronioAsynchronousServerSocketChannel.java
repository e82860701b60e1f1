package io.hadronio.async;

import java.io.IOException;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.AcceptPendingException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.SelectionKey;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Future;

/**
 * hadroNIO's {@link AsynchronousServerSocketChannel}: a facade over one of hadroNIO's
 * {@link ServerSocketChannel}s in non-blocking mode, so a listener accepts hadroNIO's
 * clients onto UCX and everyone else as plain TCP, on the same port. An accepted connection
 * becomes a {@link HadronioAsynchronousSocketChannel} of the same group, on the group's next
 * loop. One accept may be pending (guarded by {@code acceptLock}); it is tried at once and
 * otherwise finished by the loop when the listener is acceptable.
 */
public final class HadronioAsynchronousServerSocketChannel extends AsynchronousServerSocketChannel
        implements EventLoop.Member, OperationFuture.Cancellable {
    private final HadronioAsynchronousChannelGroup group;
    private final ServerSocketChannel channel;
    // the listener's options but IP_TOS, which the JDK's asynchronous listener does not have
    private final Set<SocketOption<?>> options;
    // its loop and its key there
    private final LoopKey place;
    private volatile boolean open = true;
    private volatile boolean bound;

    private final Object acceptLock = new Object();
    // ---- protected by acceptLock ----
    private boolean accepting;
    // a cancel: the connection may have been accepted and dropped, no accept may start
    private boolean acceptKilled;
    @SuppressWarnings("rawtypes")
    private CompletionHandler acceptHandler;
    private Object acceptAttachment;
    private OperationFuture<AsynchronousSocketChannel> acceptFuture;

    /**
     * A new listener in {@code group}.
     *
     * @throws java.nio.channels.ShutdownChannelGroupException if the group is shut down
     */
    public static HadronioAsynchronousServerSocketChannel open(AsynchronousChannelProvider provider,
            HadronioAsynchronousChannelGroup group) throws IOException {
        return new HadronioAsynchronousServerSocketChannel(provider, group);
    }

    private HadronioAsynchronousServerSocketChannel(AsynchronousChannelProvider provider,
            HadronioAsynchronousChannelGroup group) throws IOException {
        super(provider);
        this.group = group;
        this.channel = group.selectors().openServerSocketChannel();
        Set<SocketOption<?>> all = new HashSet<>(channel.supportedOptions());
        all.remove(StandardSocketOptions.IP_TOS);
        this.options = Set.copyOf(all);
        this.place = LoopKey.register(group, channel, this, this);
    }

    @Override
    public AsynchronousServerSocketChannel bind(SocketAddress local, int backlog) throws IOException {
        ensureOpen();
        channel.bind(local, backlog);
        bound = true;
        return this;
    }

    @Override
    public <A> void accept(A attachment, CompletionHandler<AsynchronousSocketChannel, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        implAccept(attachment, handler);
    }

    @Override
    public Future<AsynchronousSocketChannel> accept() {
        return implAccept(null, null);
    }

    @SuppressWarnings("rawtypes")
    private Future<AsynchronousSocketChannel> implAccept(Object attachment, CompletionHandler handler) {
        if (!open) {
            return immediate(handler, attachment, null, new ClosedChannelException());
        }
        if (!bound) {
            throw new NotYetBoundException();
        }
        SocketChannel accepted = null;
        Throwable failure = null;
        synchronized (acceptLock) {
            if (acceptKilled) {
                // the JDK's exception and words
                throw new RuntimeException("Accept not allowed due cancellation");
            }
            if (accepting) {
                throw new AcceptPendingException();
            }
            try {
                accepted = channel.accept();
            } catch (IOException e) {
                failure = closedIfClosing(e);
            }
            if (accepted == null && failure == null) {
                OperationFuture<AsynchronousSocketChannel> future = handler == null
                        ? new OperationFuture<>(this, OperationFuture.ACCEPT) : null;
                accepting = true;
                acceptHandler = handler;
                acceptAttachment = attachment;
                acceptFuture = future;
                place.arm(SelectionKey.OP_ACCEPT);
                return future;
            }
        }
        AsynchronousSocketChannel result = null;
        if (accepted != null) {
            try {
                result = wrap(accepted);
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
        return immediate(handler, attachment, result, failure);
    }

    /** An accepted NIO connection as an asynchronous channel of the group. */
    private AsynchronousSocketChannel wrap(SocketChannel accepted) throws IOException {
        return new HadronioAsynchronousSocketChannel(provider(), group, accepted);
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void onReady(int readyOps) {
        SocketChannel accepted = null;
        Throwable failure = null;
        CompletionHandler handler;
        Object attachment;
        OperationFuture<AsynchronousSocketChannel> future;
        synchronized (acceptLock) {
            if (!accepting) {
                place.disarm(SelectionKey.OP_ACCEPT);
                return;
            }
            try {
                accepted = channel.accept();
            } catch (IOException e) {
                failure = closedIfClosing(e);
            }
            if (accepted == null && failure == null) {
                return;
            }
            handler = acceptHandler;
            attachment = acceptAttachment;
            future = acceptFuture;
            clearAccept();
        }
        AsynchronousSocketChannel result = null;
        if (accepted != null) {
            try {
                result = wrap(accepted);
            } catch (IOException | RuntimeException e) {
                failure = e;
            }
        }
        complete(handler, attachment, future, result, failure);
    }

    @Override
    public void expire(long now) {
        // accepts have no timeout
    }

    private void clearAccept() {
        assert Thread.holdsLock(acceptLock);
        accepting = false;
        acceptHandler = null;
        acceptAttachment = null;
        acceptFuture = null;
    }

    @Override
    public void onCancel(OperationFuture<?> future) {
        synchronized (acceptLock) {
            if (accepting && acceptFuture == future) {
                clearAccept();
            }
            acceptKilled = true;
        }
    }

    @Override
    public void closeForCancel() {
        try {
            close();
        } catch (IOException ignore) {
            // the cancel has happened
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private Future<AsynchronousSocketChannel> immediate(CompletionHandler handler, Object attachment,
            AsynchronousSocketChannel result, Throwable failure) {
        if (handler == null) {
            return failure != null ? OperationFuture.failed(failure) : OperationFuture.completed(result);
        }
        group.invoke(place.loop, handler, attachment, result, failure);
        return null;
    }

    @SuppressWarnings("rawtypes")
    private void complete(CompletionHandler handler, Object attachment, OperationFuture<AsynchronousSocketChannel> future,
            AsynchronousSocketChannel result, Throwable failure) {
        if (handler == null) {
            if (failure == null) {
                future.complete(result);
            } else {
                future.fail(failure);
            }
        } else {
            group.invoke(place.loop, handler, attachment, result, failure);
        }
    }

    private Throwable closedIfClosing(IOException e) {
        if (!open && !(e instanceof AsynchronousCloseException)) {
            AsynchronousCloseException closed = new AsynchronousCloseException();
            closed.addSuppressed(e);
            return closed;
        }
        return e;
    }

    @Override
    public <T> AsynchronousServerSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ensureOpen();
        channel.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        Objects.requireNonNull(name);
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ensureOpen();
        return channel.getOption(name);
    }

    /** The NIO listener's options but {@code IP_TOS}, which the JDK's asynchronous listener does not have. */
    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return options;
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return channel.getLocalAddress();
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!open) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void close() throws IOException {
        synchronized (acceptLock) {
            if (!open) {
                return;
            }
            open = false;
        }
        CompletionHandler handler = null;
        Object attachment = null;
        OperationFuture<AsynchronousSocketChannel> future = null;
        boolean pending;
        try {
            channel.close();
        } finally {
            synchronized (acceptLock) {
                pending = accepting;
                if (pending) {
                    handler = acceptHandler;
                    attachment = acceptAttachment;
                    future = acceptFuture;
                    clearAccept();
                }
            }
            if (pending) {
                AsynchronousCloseException closed = new AsynchronousCloseException();
                if (handler == null) {
                    future.fail(closed);
                } else {
                    group.dispatch(place.loop, handler, attachment, null, closed);
                }
            }
            group.closed(this);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + channel + "]";
    }
}
