package io.hadronio.async;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.InterruptedByTimeoutException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.util.HashSet;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

/**
 * hadroNIO's {@link AsynchronousSocketChannel}: a facade over one of hadroNIO's
 * {@link SocketChannel}s in non-blocking mode, registered with its {@link EventLoop}'s
 * selector. The connection under it is the NIO channel's, so whatever that channel does
 * (the path to the peer, UCX between hadroNIO peers, plain TCP to everyone else, the move
 * from the kernel socket to UCX, the trust model, {@code HadronioSocketOptions.TRANSPORT})
 * this channel does too.
 *
 * <p>An operation is tried at once on the thread that starts it; what cannot complete
 * waits for its key's readiness, and the loop finishes it. Per direction one operation
 * may be pending; its state is guarded by that direction's lock (its {@link Direction};
 * the connect's by {@code stateLock}), under which the non-blocking
 * transfer is tried, so the starting thread and the loop never transfer for one operation
 * at the same time. Handlers run outside the locks. The interest set is kept lazily: an op
 * stays in it after its operation completed, and is taken out when it is ready with
 * nothing pending, so a channel that reads again and again changes its key only when it
 * goes idle.
 *
 * <p>What the JDK documents and its channels do, this does: a timeout fails the operation
 * with {@link InterruptedByTimeoutException} and the channel then refuses operations of
 * that kind ({@code IllegalStateException}), as it does after a pending operation's future
 * was cancelled; a close fails every pending operation with
 * {@link AsynchronousCloseException}; a failed connect closes the channel.
 */
public final class HadronioAsynchronousSocketChannel extends AsynchronousSocketChannel
        implements EventLoop.Member, OperationFuture.Cancellable {
    private static final int ST_UNCONNECTED = 0;
    private static final int ST_PENDING = 1;
    private static final int ST_CONNECTED = 2;
    private static final int ST_CLOSED = 3;

    private final HadronioAsynchronousChannelGroup group;
    private final SocketChannel channel;
    // its loop and its key there
    private final LoopKey place;
    // supportedOptions(), made at its first call
    private volatile Set<SocketOption<?>> options;

    private final Object stateLock = new Object();
    // ST_*, need stateLock to change
    private volatile int state;
    // the pending connect; protected by stateLock
    @SuppressWarnings("rawtypes")
    private CompletionHandler connectHandler;
    private Object connectAttachment;
    private OperationFuture<Void> connectFuture;

    // the reads and the writes, each with its lock (the JDK's readLock and writeLock)
    private final Direction reads;
    private final Direction writes;

    /**
     * A new unconnected channel in {@code group}.
     *
     * @throws java.nio.channels.ShutdownChannelGroupException if the group is shut down
     */
    public static HadronioAsynchronousSocketChannel open(AsynchronousChannelProvider provider,
            HadronioAsynchronousChannelGroup group) throws IOException {
        return new HadronioAsynchronousSocketChannel(provider, group, group.selectors().openSocketChannel(),
                ST_UNCONNECTED);
    }

    /** An accepted connection. */
    HadronioAsynchronousSocketChannel(AsynchronousChannelProvider provider, HadronioAsynchronousChannelGroup group,
            SocketChannel accepted) throws IOException {
        this(provider, group, accepted, ST_CONNECTED);
    }

    private HadronioAsynchronousSocketChannel(AsynchronousChannelProvider provider,
            HadronioAsynchronousChannelGroup group, SocketChannel channel, int state) throws IOException {
        super(provider);
        this.group = group;
        this.channel = channel;
        this.state = state;
        this.reads = new Direction(channel, true);
        this.writes = new Direction(channel, false);
        this.place = LoopKey.register(group, channel, this, this);
    }

    // ---------------------------------------------------------------- connect

    @Override
    public <A> void connect(SocketAddress remote, A attachment, CompletionHandler<Void, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        implConnect(remote, attachment, handler);
    }

    @Override
    public Future<Void> connect(SocketAddress remote) {
        return implConnect(remote, null, null);
    }

    @SuppressWarnings("rawtypes")
    private Future<Void> implConnect(SocketAddress remote, Object attachment, CompletionHandler handler) {
        if (!isOpen()) {
            return immediate(handler, attachment, null, new ClosedChannelException());
        }
        InetSocketAddress isa = checkAddress(remote);
        OperationFuture<Void> future = handler == null ? new OperationFuture<>(this, OperationFuture.CONNECT) : null;
        synchronized (stateLock) {
            if (state == ST_CONNECTED) {
                throw new AlreadyConnectedException();
            }
            if (state == ST_PENDING) {
                throw new ConnectionPendingException();
            }
            if (state == ST_CLOSED) {
                return immediate(handler, attachment, null, new ClosedChannelException());
            }
            state = ST_PENDING;
            connectHandler = handler;
            connectAttachment = attachment;
            connectFuture = future;
        }
        Throwable failure = null;
        boolean connected = false;
        try {
            connected = channel.connect(isa);
        } catch (IOException e) {
            failure = e;
        }
        if (failure == null && !connected) {
            // the loop finishes it
            place.arm(SelectionKey.OP_CONNECT);
            return future;
        }
        synchronized (stateLock) {
            if (state != ST_PENDING || !ownsConnect(handler, future)) {
                // a close took it (and failed it)
                return future;
            }
            clearConnect();
            if (failure == null) {
                state = ST_CONNECTED;
            }
        }
        if (failure != null) {
            closeAfterFailedConnect(failure);
        }
        if (handler == null) {
            completeFuture(future, null, failure);
            return future;
        }
        group.invoke(place.loop, handler, attachment, null, failure);
        return null;
    }

    @SuppressWarnings("rawtypes")
    private boolean ownsConnect(CompletionHandler handler, OperationFuture<Void> future) {
        return handler != null ? connectHandler == handler && connectFuture == null : connectFuture == future;
    }

    private void clearConnect() {
        assert Thread.holdsLock(stateLock);
        connectHandler = null;
        connectAttachment = null;
        connectFuture = null;
    }

    /** The loop: the connect is ready to finish. */
    @SuppressWarnings("rawtypes")
    private void finishConnect() {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Void> future;
        Throwable failure = null;
        synchronized (stateLock) {
            if (state != ST_PENDING || (connectHandler == null && connectFuture == null)) {
                place.disarm(SelectionKey.OP_CONNECT);
                return;
            }
            try {
                if (!channel.finishConnect()) {
                    return;
                }
                state = ST_CONNECTED;
            } catch (IOException e) {
                failure = e;
            }
            place.disarm(SelectionKey.OP_CONNECT);
            handler = connectHandler;
            attachment = connectAttachment;
            future = connectFuture;
            clearConnect();
        }
        if (failure != null) {
            closeAfterFailedConnect(failure);
        }
        complete(handler, attachment, future, null, failure);
    }

    /** A failed connect closes the channel, as the JDK's does. */
    private void closeAfterFailedConnect(Throwable failure) {
        try {
            close();
        } catch (IOException | RuntimeException e) {
            failure.addSuppressed(e);
        }
    }

    private static InetSocketAddress checkAddress(SocketAddress remote) {
        Objects.requireNonNull(remote);
        if (!(remote instanceof InetSocketAddress isa)) {
            throw new UnsupportedAddressTypeException();
        }
        if (isa.isUnresolved()) {
            throw new UnresolvedAddressException();
        }
        return isa;
    }

    // ---------------------------------------------------------------- read

    @Override
    public <A> void read(ByteBuffer dst, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        start(reads, dst, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> read(ByteBuffer dst) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        @SuppressWarnings("unchecked")
        Future<Integer> f = (Future<Integer>) (Future<?>) start(reads, dst, null, 0, 0, 0L, TimeUnit.MILLISECONDS, null,
                null);
        return f;
    }

    @Override
    public <A> void read(ByteBuffer[] dsts, int offset, int length, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        Objects.checkFromIndexSize(offset, length, dsts.length);
        for (int i = offset; i < offset + length; i++) {
            if (dsts[i].isReadOnly()) {
                throw new IllegalArgumentException("Read-only buffer");
            }
        }
        start(reads, null, dsts, offset, length, timeout, unit, attachment, handler);
    }

    // ---------------------------------------------------------------- write

    @Override
    public <A> void write(ByteBuffer src, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        start(writes, src, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> write(ByteBuffer src) {
        Objects.requireNonNull(src);
        @SuppressWarnings("unchecked")
        Future<Integer> f = (Future<Integer>) (Future<?>) start(writes, src, null, 0, 0, 0L, TimeUnit.MILLISECONDS, null,
                null);
        return f;
    }

    @Override
    public <A> void write(ByteBuffer[] srcs, int offset, int length, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        Objects.checkFromIndexSize(offset, length, srcs.length);
        start(writes, null, srcs, offset, length, timeout, unit, attachment, handler);
    }

    // ---------------------------------------------------------------- a read or a write

    /**
     * Starts a read or a write ({@code d}): tried at once; what moves nothing waits in
     * {@code d} for the loop. The checks and their order are the JDK's: closed (the failure goes
     * to the handler or the future), not connected, killed, pending; then a shut-down direction
     * (a read: -1; a write: {@link ClosedChannelException}) and nothing to transfer (0).
     */
    @SuppressWarnings("rawtypes")
    private Future<Number> start(Direction d, ByteBuffer b, ByteBuffer[] bs, int offset, int length, long timeout,
            TimeUnit unit, Object attachment, CompletionHandler handler) {
        // one volatile read for both checks; a close after it is seen under the direction's lock
        int st = state;
        if (st == ST_CLOSED) {
            return immediate(handler, attachment, null, new ClosedChannelException());
        }
        if (st != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        boolean vectored = bs != null;
        Number result = null;
        Throwable failure = null;
        synchronized (d) {
            if (d.killed) {
                throw d.killedException();
            }
            if (d.pending) {
                throw d.pendingException();
            }
            if (d.shutdown) {
                if (d.reads) {
                    result = Direction.result(-1, vectored);
                } else {
                    failure = new ClosedChannelException();
                }
            } else if (!vectored && !b.hasRemaining()) {
                result = Direction.result(0, false);
            } else if (state == ST_CLOSED) {
                failure = new ClosedChannelException();
            } else {
                long n = 0;
                try {
                    n = d.transfer(b, bs, offset, length);
                } catch (IOException e) {
                    failure = closedIfClosing(e);
                }
                if (failure == null && n == 0 && (!vectored || Direction.hasRemaining(bs, offset, length))) {
                    // nothing moved: the loop finishes it
                    OperationFuture<Number> future = handler == null ? new OperationFuture<>(this, d.reads
                            ? OperationFuture.READ : OperationFuture.WRITE) : null;
                    long deadline = timeout > 0 ? deadline(timeout, unit) : 0;
                    d.park(b, bs, offset, length, handler, attachment, future, deadline);
                    if (deadline != 0) {
                        place.loop.deadline(deadline);
                    }
                    place.arm(d.interestOp);
                    return future;
                }
                if (failure == null) {
                    result = Direction.result(n, vectored);
                }
            }
        }
        return immediate(handler, attachment, result, failure);
    }

    /** The loop (or a shut-down input): the pending operation of {@code d} may finish. */
    @SuppressWarnings("rawtypes")
    private void finish(Direction d) {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Number> future;
        Number result = null;
        Throwable failure = null;
        synchronized (d) {
            if (!d.pending) {
                // ready with nothing pending: the lazy interest goes
                place.disarm(d.interestOp);
                return;
            }
            long n = 0;
            try {
                n = d.transferPending();
            } catch (IOException e) {
                failure = closedIfClosing(e);
            }
            if (failure == null && n == 0) {
                return;
            }
            if (failure == null) {
                result = Direction.result(n, d.vectored());
            }
            if (!d.reads) {
                // a writer is usually done for now: its interest goes at once (a full socket is rare)
                place.disarm(d.interestOp);
            }
            handler = d.handler;
            attachment = d.attachment;
            future = d.future;
            d.clear();
        }
        complete(handler, attachment, future, result, failure);
    }

    /** Fails the operation of {@code d} if its deadline is not after {@code now}; else keeps the loop's deadline. */
    @SuppressWarnings("rawtypes")
    private void expire(Direction d, long now) {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Number> future;
        synchronized (d) {
            if (!d.pending || d.deadline == 0) {
                return;
            }
            if (now - d.deadline < 0) {
                place.loop.deadline(d.deadline);
                return;
            }
            handler = d.handler;
            attachment = d.attachment;
            future = d.future;
            d.clear();
            d.killed = true;
        }
        fail(handler, attachment, future, new InterruptedByTimeoutException());
    }

    /** Fails the pending operation of {@code d}, if there is one, with {@link AsynchronousCloseException}. */
    @SuppressWarnings("rawtypes")
    private void failPending(Direction d) {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Number> future;
        synchronized (d) {
            if (!d.pending) {
                return;
            }
            handler = d.handler;
            attachment = d.attachment;
            future = d.future;
            d.clear();
        }
        fail(handler, attachment, future, new AsynchronousCloseException());
    }

    /** A cancel: forgets {@code future}'s operation if it is the pending one, and refuses further ones. */
    private static void kill(Direction d, OperationFuture<?> future) {
        synchronized (d) {
            if (d.pending && d.future == future) {
                d.clear();
            }
            d.killed = true;
        }
    }

    // ---------------------------------------------------------------- the loop's calls

    @Override
    public void onReady(int readyOps) {
        if ((readyOps & SelectionKey.OP_CONNECT) != 0) {
            finishConnect();
        }
        // send completions before receive, as the selector translates them
        if ((readyOps & SelectionKey.OP_WRITE) != 0) {
            finish(writes);
        }
        if ((readyOps & SelectionKey.OP_READ) != 0) {
            finish(reads);
        }
    }

    @Override
    public void expire(long now) {
        expire(reads, now);
        expire(writes, now);
    }

    @Override
    public void onCancel(OperationFuture<?> future) {
        switch (future.kind()) {
            case OperationFuture.READ -> kill(reads, future);
            case OperationFuture.WRITE -> kill(writes, future);
            default -> {
                // a cancelled connect may have connected meanwhile: no reading or writing
                synchronized (stateLock) {
                    if (connectFuture == future) {
                        clearConnect();
                    }
                }
                kill(reads, future);
                kill(writes, future);
            }
        }
    }

    @Override
    public void closeForCancel() {
        try {
            close();
        } catch (IOException ignore) {
            // the cancel has happened; the close is a courtesy
        }
    }

    // ---------------------------------------------------------------- completion

    /** The result of an operation that completed where it started. */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private <V> Future<V> immediate(CompletionHandler handler, Object attachment, Object result, Throwable failure) {
        if (handler == null) {
            return failure != null ? OperationFuture.failed(failure) : OperationFuture.completed((V) result);
        }
        group.invoke(place.loop, handler, attachment, result, failure);
        return null;
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private void complete(CompletionHandler handler, Object attachment, OperationFuture future, Object result,
            Throwable failure) {
        if (handler == null) {
            completeFuture(future, result, failure);
        } else {
            group.invoke(place.loop, handler, attachment, result, failure);
        }
    }

    /** A pending operation failed by a timeout or a close: the JDK dispatches those handlers. */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private void fail(CompletionHandler handler, Object attachment, OperationFuture future, Throwable failure) {
        if (handler == null) {
            future.fail(failure);
        } else {
            group.dispatch(place.loop, handler, attachment, null, failure);
        }
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private static void completeFuture(OperationFuture future, Object result, Throwable failure) {
        if (failure == null) {
            future.complete(result);
        } else {
            future.fail(failure);
        }
    }

    /** What a transfer failed with, as the contract names it when the channel is being closed. */
    private Throwable closedIfClosing(IOException e) {
        if (state == ST_CLOSED && !(e instanceof AsynchronousCloseException)) {
            AsynchronousCloseException closed = new AsynchronousCloseException();
            closed.addSuppressed(e);
            return closed;
        }
        return e;
    }

    private static long deadline(long timeout, TimeUnit unit) {
        long d = System.nanoTime() + unit.toNanos(timeout);
        // 0 means no deadline
        return d == 0 ? 1 : d;
    }

    // ---------------------------------------------------------------- the rest of the channel

    @Override
    public AsynchronousSocketChannel bind(SocketAddress local) throws IOException {
        ensureOpen();
        channel.bind(local);
        return this;
    }

    @Override
    public <T> AsynchronousSocketChannel setOption(SocketOption<T> name, T value) throws IOException {
        Objects.requireNonNull(name);
        if (!supportedOptions().contains(name)) {
            throw new UnsupportedOperationException("'" + name + "' not supported");
        }
        ensureOpen();
        synchronized (writes) {
            if (writes.shutdown) {
                throw new IOException("Connection has been shutdown for writing");
            }
        }
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

    /**
     * The NIO channel's options but those an asynchronous channel of the JDK does not have
     * ({@code SO_LINGER}, {@code IP_TOS}, {@code SO_OOBINLINE}); hadroNIO's {@code TRANSPORT} stays.
     */
    @Override
    public Set<SocketOption<?>> supportedOptions() {
        Set<SocketOption<?>> set = options;
        if (set == null) {
            Set<SocketOption<?>> all = new HashSet<>(channel.supportedOptions());
            all.remove(StandardSocketOptions.SO_LINGER);
            all.remove(StandardSocketOptions.IP_TOS);
            all.removeIf(o -> o.name().equals("SO_OOBINLINE"));
            options = set = Set.copyOf(all);
        }
        return set;
    }

    @Override
    public AsynchronousSocketChannel shutdownInput() throws IOException {
        ensureOpen();
        if (state != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        boolean pending;
        synchronized (reads) {
            if (!reads.shutdown) {
                channel.shutdownInput();
                reads.shutdown = true;
            }
            pending = reads.pending;
        }
        if (pending) {
            // a pending read ends with -1 now, whatever the selector makes of the shut-down input
            finish(reads);
        }
        return this;
    }

    @Override
    public AsynchronousSocketChannel shutdownOutput() throws IOException {
        ensureOpen();
        if (state != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        synchronized (writes) {
            if (!writes.shutdown) {
                channel.shutdownOutput();
                writes.shutdown = true;
            }
        }
        return this;
    }

    @Override
    public SocketAddress getRemoteAddress() throws IOException {
        ensureOpen();
        return channel.getRemoteAddress();
    }

    @Override
    public SocketAddress getLocalAddress() throws IOException {
        ensureOpen();
        return channel.getLocalAddress();
    }

    private void ensureOpen() throws ClosedChannelException {
        if (!isOpen()) {
            throw new ClosedChannelException();
        }
    }

    @Override
    public boolean isOpen() {
        return state != ST_CLOSED;
    }

    /**
     * Closes the NIO channel, then fails the pending operations with
     * {@link AsynchronousCloseException} on the group's threads.
     */
    @Override
    @SuppressWarnings("rawtypes")
    public void close() throws IOException {
        CompletionHandler cHandler;
        Object cAttachment;
        OperationFuture<Void> cFuture;
        synchronized (stateLock) {
            if (state == ST_CLOSED) {
                return;
            }
            state = ST_CLOSED;
            cHandler = connectHandler;
            cAttachment = connectAttachment;
            cFuture = connectFuture;
            clearConnect();
        }
        try {
            channel.close();
        } finally {
            if (cHandler != null || cFuture != null) {
                fail(cHandler, cAttachment, cFuture, new AsynchronousCloseException());
            }
            failPending(reads);
            failPending(writes);
            group.closed(this);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + channel + "]";
    }
}
