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
import java.nio.channels.CancelledKeyException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.CompletionHandler;
import java.nio.channels.ConnectionPendingException;
import java.nio.channels.InterruptedByTimeoutException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.ReadPendingException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.nio.channels.WritePendingException;
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
 * may be pending; its state is guarded by that direction's lock ({@code readLock},
 * {@code writeLock}; the connect's by {@code stateLock}), under which the non-blocking
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
    private final EventLoop loop;
    private final SocketChannel channel;
    private final SelectionKey key;
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

    private final Object readLock = new Object();
    // ---- protected by readLock ----
    private boolean reading;
    // a timeout or a cancel: reading is refused from now on
    private boolean readKilled;
    private boolean readShutdown;
    private ByteBuffer readBuffer;
    private ByteBuffer[] readBuffers;
    private int readOffset;
    private int readLength;
    @SuppressWarnings("rawtypes")
    private CompletionHandler readHandler;
    private Object readAttachment;
    private OperationFuture<Number> readFuture;
    // System.nanoTime() of the timeout, 0: none
    private long readDeadline;

    private final Object writeLock = new Object();
    // ---- protected by writeLock ----
    private boolean writing;
    private boolean writeKilled;
    private boolean writeShutdown;
    private ByteBuffer writeBuffer;
    private ByteBuffer[] writeBuffers;
    private int writeOffset;
    private int writeLength;
    @SuppressWarnings("rawtypes")
    private CompletionHandler writeHandler;
    private Object writeAttachment;
    private OperationFuture<Number> writeFuture;
    private long writeDeadline;

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
        try {
            group.opened(this);
        } catch (RuntimeException e) {
            channel.close();
            throw e;
        }
        try {
            channel.configureBlocking(false);
            this.loop = group.nextLoop();
            this.key = channel.register(loop.selector(), 0, this);
        } catch (IOException | RuntimeException e) {
            channel.close();
            group.closed(this);
            throw e;
        }
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
            arm(SelectionKey.OP_CONNECT);
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
        group.invoke(loop, handler, attachment, null, failure);
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
                disarm(SelectionKey.OP_CONNECT);
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
            disarm(SelectionKey.OP_CONNECT);
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
        read(dst, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> read(ByteBuffer dst) {
        if (dst.isReadOnly()) {
            throw new IllegalArgumentException("Read-only buffer");
        }
        @SuppressWarnings("unchecked")
        Future<Integer> f = (Future<Integer>) (Future<?>) read(dst, null, 0, 0, 0L, TimeUnit.MILLISECONDS, null, null);
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
        read(null, dsts, offset, length, timeout, unit, attachment, handler);
    }

    /**
     * A read: {@code dst}, or {@code length} of {@code dsts} from {@code offset} (a scattering
     * read, whose result is a {@code Long}).
     */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private Future<Number> read(ByteBuffer dst, ByteBuffer[] dsts, int offset, int length, long timeout,
            TimeUnit unit, Object attachment, CompletionHandler handler) {
        if (!isOpen()) {
            return immediate(handler, attachment, null, new ClosedChannelException());
        }
        if (state != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        boolean scattering = dsts != null;
        Number result;
        Throwable failure = null;
        OperationFuture<Number> future = null;
        synchronized (readLock) {
            if (readKilled) {
                throw new IllegalStateException("Reading not allowed due to timeout or cancellation");
            }
            if (reading) {
                throw new ReadPendingException();
            }
            if (readShutdown) {
                result = scattering ? (Number) Long.valueOf(-1L) : (Number) Integer.valueOf(-1);
            } else if (!scattering && !dst.hasRemaining()) {
                result = 0;
            } else if (state == ST_CLOSED) {
                result = null;
                failure = new AsynchronousCloseException();
            } else {
                long n = 0;
                try {
                    n = scattering ? channel.read(dsts, offset, length) : channel.read(dst);
                } catch (IOException e) {
                    failure = closedIfClosing(e);
                }
                if (failure == null && n == 0 && (scattering ? hasRemaining(dsts, offset, length) : true)) {
                    // nothing yet: the loop finishes it
                    future = handler == null ? new OperationFuture<>(this, OperationFuture.READ) : null;
                    reading = true;
                    readBuffer = dst;
                    readBuffers = dsts;
                    readOffset = offset;
                    readLength = length;
                    readHandler = handler;
                    readAttachment = attachment;
                    readFuture = future;
                    if (timeout > 0) {
                        readDeadline = deadline(timeout, unit);
                        loop.deadline(readDeadline);
                    }
                    arm(SelectionKey.OP_READ);
                    return future;
                }
                result = failure != null ? null : scattering ? (Number) Long.valueOf(n) : (Number) Integer.valueOf((int) n);
            }
        }
        return immediate(handler, attachment, result, failure);
    }

    /** The loop: a read is ready to finish. */
    @SuppressWarnings("rawtypes")
    private void finishRead() {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Number> future;
        Number result = null;
        Throwable failure = null;
        synchronized (readLock) {
            if (!reading) {
                // ready with nothing pending: the lazy interest goes
                disarm(SelectionKey.OP_READ);
                return;
            }
            long n = 0;
            boolean scattering = readBuffers != null;
            try {
                n = scattering ? channel.read(readBuffers, readOffset, readLength) : channel.read(readBuffer);
            } catch (IOException e) {
                failure = closedIfClosing(e);
            }
            if (failure == null && n == 0) {
                return;
            }
            if (failure == null) {
                result = scattering ? (Number) Long.valueOf(n) : (Number) Integer.valueOf((int) n);
            }
            handler = readHandler;
            attachment = readAttachment;
            future = readFuture;
            clearRead();
        }
        complete(handler, attachment, future, result, failure);
    }

    private void clearRead() {
        assert Thread.holdsLock(readLock);
        reading = false;
        readBuffer = null;
        readBuffers = null;
        readHandler = null;
        readAttachment = null;
        readFuture = null;
        readDeadline = 0;
    }

    // ---------------------------------------------------------------- write

    @Override
    public <A> void write(ByteBuffer src, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Integer, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        write(src, null, 0, 0, timeout, unit, attachment, handler);
    }

    @Override
    public Future<Integer> write(ByteBuffer src) {
        Objects.requireNonNull(src);
        @SuppressWarnings("unchecked")
        Future<Integer> f = (Future<Integer>) (Future<?>) write(src, null, 0, 0, 0L, TimeUnit.MILLISECONDS, null, null);
        return f;
    }

    @Override
    public <A> void write(ByteBuffer[] srcs, int offset, int length, long timeout, TimeUnit unit, A attachment,
            CompletionHandler<Long, ? super A> handler) {
        Objects.requireNonNull(handler, "'handler' is null");
        Objects.checkFromIndexSize(offset, length, srcs.length);
        write(null, srcs, offset, length, timeout, unit, attachment, handler);
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private Future<Number> write(ByteBuffer src, ByteBuffer[] srcs, int offset, int length, long timeout,
            TimeUnit unit, Object attachment, CompletionHandler handler) {
        boolean gathering = srcs != null;
        if (isOpen() && state != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        Number result;
        Throwable failure = null;
        synchronized (writeLock) {
            if (isOpen() && writeKilled) {
                throw new IllegalStateException("Writing not allowed due to timeout or cancellation");
            }
            if (isOpen() && writing) {
                throw new WritePendingException();
            }
            if (!isOpen() || writeShutdown) {
                // closed, or shut down for writing: the JDK's answer to both
                result = null;
                failure = new ClosedChannelException();
            } else {
                if (!gathering && !src.hasRemaining()) {
                    result = 0;
                } else {
                    long n = 0;
                    try {
                        n = gathering ? channel.write(srcs, offset, length) : channel.write(src);
                    } catch (IOException e) {
                        failure = closedIfClosing(e);
                    }
                    if (failure == null && n == 0 && (gathering ? hasRemaining(srcs, offset, length) : true)) {
                        OperationFuture<Number> future = handler == null
                                ? new OperationFuture<>(this, OperationFuture.WRITE) : null;
                        writing = true;
                        writeBuffer = src;
                        writeBuffers = srcs;
                        writeOffset = offset;
                        writeLength = length;
                        writeHandler = handler;
                        writeAttachment = attachment;
                        writeFuture = future;
                        if (timeout > 0) {
                            writeDeadline = deadline(timeout, unit);
                            loop.deadline(writeDeadline);
                        }
                        arm(SelectionKey.OP_WRITE);
                        return future;
                    }
                    result = failure != null ? null
                            : gathering ? (Number) Long.valueOf(n) : (Number) Integer.valueOf((int) n);
                }
            }
        }
        return immediate(handler, attachment, result, failure);
    }

    /** The loop: a write is ready to finish. */
    @SuppressWarnings("rawtypes")
    private void finishWrite() {
        CompletionHandler handler;
        Object attachment;
        OperationFuture<Number> future;
        Number result = null;
        Throwable failure = null;
        synchronized (writeLock) {
            if (!writing) {
                disarm(SelectionKey.OP_WRITE);
                return;
            }
            long n = 0;
            boolean gathering = writeBuffers != null;
            try {
                n = gathering ? channel.write(writeBuffers, writeOffset, writeLength) : channel.write(writeBuffer);
            } catch (IOException e) {
                failure = closedIfClosing(e);
            }
            if (failure == null && n == 0) {
                return;
            }
            if (failure == null) {
                result = gathering ? (Number) Long.valueOf(n) : (Number) Integer.valueOf((int) n);
            }
            // the writer is usually done for now: its interest goes at once (a full socket is rare)
            disarm(SelectionKey.OP_WRITE);
            handler = writeHandler;
            attachment = writeAttachment;
            future = writeFuture;
            clearWrite();
        }
        complete(handler, attachment, future, result, failure);
    }

    private void clearWrite() {
        assert Thread.holdsLock(writeLock);
        writing = false;
        writeBuffer = null;
        writeBuffers = null;
        writeHandler = null;
        writeAttachment = null;
        writeFuture = null;
        writeDeadline = 0;
    }

    // ---------------------------------------------------------------- the loop's calls

    @Override
    public void onReady(int readyOps) {
        if ((readyOps & SelectionKey.OP_CONNECT) != 0) {
            finishConnect();
        }
        // send completions before receive, as the selector translates them
        if ((readyOps & SelectionKey.OP_WRITE) != 0) {
            finishWrite();
        }
        if ((readyOps & SelectionKey.OP_READ) != 0) {
            finishRead();
        }
    }

    @Override
    @SuppressWarnings("rawtypes")
    public void expire(long now) {
        CompletionHandler handler = null;
        Object attachment = null;
        OperationFuture<Number> future = null;
        boolean expired = false;
        synchronized (readLock) {
            if (reading && readDeadline != 0) {
                if (now - readDeadline >= 0) {
                    handler = readHandler;
                    attachment = readAttachment;
                    future = readFuture;
                    clearRead();
                    // the bytes may have come meanwhile, unseen: no further read may start
                    readKilled = true;
                    expired = true;
                } else {
                    loop.deadline(readDeadline);
                }
            }
        }
        if (expired) {
            fail(handler, attachment, future, new InterruptedByTimeoutException());
        }
        expired = false;
        synchronized (writeLock) {
            if (writing && writeDeadline != 0) {
                if (now - writeDeadline >= 0) {
                    handler = writeHandler;
                    attachment = writeAttachment;
                    future = writeFuture;
                    clearWrite();
                    writeKilled = true;
                    expired = true;
                } else {
                    loop.deadline(writeDeadline);
                }
            }
        }
        if (expired) {
            fail(handler, attachment, future, new InterruptedByTimeoutException());
        }
    }

    @Override
    public void onCancel(OperationFuture<?> future) {
        switch (future.kind()) {
            case OperationFuture.READ -> {
                synchronized (readLock) {
                    if (reading && readFuture == future) {
                        clearRead();
                    }
                    readKilled = true;
                }
            }
            case OperationFuture.WRITE -> {
                synchronized (writeLock) {
                    if (writing && writeFuture == future) {
                        clearWrite();
                    }
                    writeKilled = true;
                }
            }
            default -> {
                // a cancelled connect may have connected meanwhile: no reading or writing
                synchronized (stateLock) {
                    if (connectFuture == future) {
                        clearConnect();
                    }
                }
                synchronized (readLock) {
                    readKilled = true;
                }
                synchronized (writeLock) {
                    writeKilled = true;
                }
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
        group.invoke(loop, handler, attachment, result, failure);
        return null;
    }

    @SuppressWarnings({"rawtypes", "unchecked"})
    private void complete(CompletionHandler handler, Object attachment, OperationFuture future, Object result,
            Throwable failure) {
        if (handler == null) {
            completeFuture(future, result, failure);
        } else {
            group.invoke(loop, handler, attachment, result, failure);
        }
    }

    /** A pending operation failed by a timeout or a close: the JDK dispatches those handlers. */
    @SuppressWarnings({"rawtypes", "unchecked"})
    private void fail(CompletionHandler handler, Object attachment, OperationFuture future, Throwable failure) {
        if (handler == null) {
            future.fail(failure);
        } else {
            group.dispatch(loop, handler, attachment, null, failure);
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

    private static boolean hasRemaining(ByteBuffer[] buffers, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (buffers[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    /** Adds {@code op} to the interest set unless it is there (lazy interest: usually it is). */
    private void arm(int op) {
        try {
            if ((key.interestOps() & op) == 0) {
                key.interestOpsOr(op);
            }
        } catch (CancelledKeyException e) {
            // closed meanwhile: the close fails the operation
        }
    }

    private void disarm(int op) {
        try {
            if ((key.interestOps() & op) != 0) {
                key.interestOpsAnd(~op);
            }
        } catch (CancelledKeyException e) {
            // closed
        }
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
        synchronized (writeLock) {
            if (writeShutdown) {
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
        synchronized (readLock) {
            if (!readShutdown) {
                channel.shutdownInput();
                readShutdown = true;
            }
            pending = reading;
        }
        if (pending) {
            // a pending read ends with -1 now, whatever the selector makes of the shut-down input
            finishRead();
        }
        return this;
    }

    @Override
    public AsynchronousSocketChannel shutdownOutput() throws IOException {
        ensureOpen();
        if (state != ST_CONNECTED) {
            throw new NotYetConnectedException();
        }
        synchronized (writeLock) {
            if (!writeShutdown) {
                channel.shutdownOutput();
                writeShutdown = true;
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
            CompletionHandler handler = null;
            Object attachment = null;
            OperationFuture<Number> future = null;
            boolean pending;
            synchronized (readLock) {
                pending = reading;
                if (pending) {
                    handler = readHandler;
                    attachment = readAttachment;
                    future = readFuture;
                    clearRead();
                }
            }
            if (pending) {
                fail(handler, attachment, future, new AsynchronousCloseException());
            }
            synchronized (writeLock) {
                pending = writing;
                if (pending) {
                    handler = writeHandler;
                    attachment = writeAttachment;
                    future = writeFuture;
                    clearWrite();
                }
            }
            if (pending) {
                fail(handler, attachment, future, new AsynchronousCloseException());
            }
            group.closed(this);
        }
    }

    @Override
    public String toString() {
        return getClass().getSimpleName() + "[" + channel + "]";
    }
}
