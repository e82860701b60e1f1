package io.hadronio.platform;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

import io.hadronio.ucx.WordCalls;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.nio.charset.StandardCharsets;

/**
 * A non-blocking Linux {@code AF_UNIX}/{@code SOCK_SEQPACKET} socket in the <em>abstract
 * namespace</em> (a name that starts with a NUL byte): what the JDK's Unix-domain channels
 * cannot do. Abstract names belong to the network namespace, need no file, and vanish
 * with the process that bound them, so a crashed process leaves nothing stale behind.
 * Anyone in the namespace may bind or connect to any name: whoever uses one must
 * authenticate the other side itself.
 *
 * <p>SEQPACKET keeps message boundaries: one {@link #receive} returns one whole message
 * (or its first {@code capacity} bytes, flagged as truncated), so a peer cannot make us
 * reassemble anything.
 *
 * <p>Not thread-safe: one thread uses a socket at a time.
 */
public final class UnixSeqpacket implements AutoCloseable {
    private static final int AF_UNIX = 1;
    private static final int SOCK_SEQPACKET = 5;
    private static final int SOCK_NONBLOCK = 0x800;
    private static final int SOCK_CLOEXEC = 0x80000;
    private static final int SOL_SOCKET = 1;
    private static final int SO_PEERCRED = 17;
    private static final int MSG_TRUNC = 0x20;
    private static final int MSG_NOSIGNAL = 0x4000;
    private static final int EAGAIN = 11;
    private static final int EINTR = 4;
    private static final int EINPROGRESS = 115;
    // sizeof(struct sockaddr_un): sa_family_t + char sun_path[108]
    private static final int SOCKADDR_UN_SIZE = 110;
    private static final int MAX_NAME = 107;

    private static final Linker LINKER = Linker.nativeLinker();
    private static final Linker.Option ERRNO = Linker.Option.captureCallState("errno");
    private static final long ERRNO_OFFSET = Linker.Option.captureStateLayout()
            .byteOffset(MemoryLayout.PathElement.groupElement("errno"));

    /** {@snippet lang=c : int socket(int domain, int type, int protocol); } */
    private static final MethodHandle MH$socket = handle("socket",
            WordCalls.call(3));
    /** {@snippet lang=c : int bind(int fd, const struct sockaddr *addr, socklen_t len); } */
    private static final MethodHandle MH$bind = handle("bind",
            WordCalls.call(3));
    /** {@snippet lang=c : int listen(int fd, int backlog); } */
    private static final MethodHandle MH$listen = handle("listen",
            WordCalls.call(2));
    /** {@snippet lang=c : int accept4(int fd, struct sockaddr *addr, socklen_t *len, int flags); } */
    private static final MethodHandle MH$accept4 = handle("accept4",
            WordCalls.call(4));
    /** {@snippet lang=c : int connect(int fd, const struct sockaddr *addr, socklen_t len); } */
    private static final MethodHandle MH$connect = handle("connect",
            WordCalls.call(3));
    /** {@snippet lang=c : ssize_t send(int fd, const void *buf, size_t len, int flags); } */
    private static final MethodHandle MH$send = handle("send",
            WordCalls.call(4));
    /** {@snippet lang=c : ssize_t recv(int fd, void *buf, size_t len, int flags); } */
    private static final MethodHandle MH$recv = handle("recv",
            WordCalls.call(4));
    /** {@snippet lang=c : int getsockopt(int fd, int level, int name, void *val, socklen_t *len); } */
    private static final MethodHandle MH$getsockopt = handle("getsockopt",
            WordCalls.call(5));
    /** {@snippet lang=c : int close(int fd); } */
    private static final MethodHandle MH$close = handle("close",
            WordCalls.call(1));
    /** {@snippet lang=c : int shutdown(int fd, int how); } */
    private static final MethodHandle MH$shutdown = handle("shutdown",
            WordCalls.call(2));
    private static final int SHUT_RDWR = 2;
    private static final short POLLRDHUP = 0x2000;

    private static MethodHandle handle(String name, FunctionDescriptor descriptor) {
        return LINKER.downcallHandle(LINKER.defaultLookup().find(name).orElseThrow(), descriptor, ERRNO);
    }

    /** What {@link #receive} found: a message, nothing yet, or the peer's end. */
    public static final int WOULD_BLOCK = -2;
    public static final int EOF = -1;

    // confined unless another thread will use the socket: closing a shared arena stops every
    // thread for a moment, which a client that connects per connection cannot afford
    private final Arena arena;
    private final MemorySegment errno;
    private final MemorySegment scratch;
    private MemorySegment buffer = MemorySegment.NULL;
    private final boolean shared;
    // -1 once closed; calls that use it hold this object's lock, so close() never frees the
    // number while one of them runs (the kernel could hand it to another socket)
    private int fd;
    // the last receive did not fit its buffer: the rest of that message is lost
    private boolean truncated;

    private UnixSeqpacket(int fd, boolean shared) {
        this.fd = fd;
        // a shared socket (a listener) is closed by any thread, possibly while the rendezvous
        // thread is in a call that uses this memory: the GC frees it, not close()
        this.arena = shared ? Arena.ofAuto() : Arena.ofConfined();
        this.shared = shared;
        this.errno = arena.allocate(Linker.Option.captureStateLayout());
        this.scratch = arena.allocate(16, 8);
    }

    private static UnixSeqpacket open(boolean shared) throws IOException {
        Arena tmp = Arena.ofConfined();
        try (tmp) {
            MemorySegment err = tmp.allocate(Linker.Option.captureStateLayout());
            int f = (int) (long) MH$socket.invokeExact(err, (long) AF_UNIX, (long) (SOCK_SEQPACKET | SOCK_NONBLOCK | SOCK_CLOEXEC), 0L, 0L);
            if (f < 0) {
                throw new IOException("socket(AF_UNIX, SOCK_SEQPACKET): errno " + err.get(JAVA_INT, ERRNO_OFFSET));
            }
            return new UnixSeqpacket(f, shared);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("socket", t);
        }
    }

    /**
     * Binds and listens on an abstract name. The socket may be used by another thread than
     * the one that made it (one at a time); the sockets it accepts belong to the accepting thread.
     *
     * @return the listening socket, or null when another socket holds the name
     */
    public static UnixSeqpacket listen(String name, int backlog) throws IOException {
        UnixSeqpacket s = open(true);
        try {
            MemorySegment addr = s.abstractAddress(name);
            int r = (int) (long) MH$bind.invokeExact(s.errno, (long) s.fd, addr.address(), addr.byteSize(), 0L);
            if (r < 0) {
                int e = s.lastErrno();
                s.close();
                if (e == 98) { // EADDRINUSE
                    return null;
                }
                throw new IOException("bind(@" + name + "): errno " + e);
            }
            r = (int) (long) MH$listen.invokeExact(s.errno, (long) s.fd, (long) backlog, 0L, 0L);
            if (r < 0) {
                int e = s.lastErrno();
                s.close();
                throw new IOException("listen(@" + name + "): errno " + e);
            }
            return s;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("bind/listen", t);
        }
    }

    /**
     * Connects to an abstract name. Connecting to a local listener completes at once or
     * fails at once (nobody listens, or its backlog is full): never waits. The socket
     * belongs to the calling thread.
     *
     * @return the connected socket, or null when nobody accepts connections on that name
     * @throws BacklogFullException someone listens, but its backlog is full: it has not
     *         accepted the connections before ours yet (a wave of them); a later try may get in
     */
    public static UnixSeqpacket connect(String name) throws IOException {
        // most connects find nobody (the peer is a plain server): a socket whose connect
        // failed is still unconnected and is kept for the next try, which then costs one
        // system call instead of three
        Integer spare = SPARE.poll();
        int fd;
        if (spare != null) {
            spareCount.decrementAndGet();
            fd = spare;
        } else {
            UnixSeqpacket fresh = open(false);
            fd = fresh.fd;
            fresh.fd = -1;
            fresh.arena.close();
        }
        int e;
        try (Arena call = Arena.ofConfined()) {
            MemorySegment err = call.allocate(Linker.Option.captureStateLayout());
            MemorySegment addr = abstractAddress(name, call);
            int r = (int) (long) MH$connect.invokeExact(err, (long) fd, addr.address(), addr.byteSize(), 0L);
            if (r == 0) {
                return new UnixSeqpacket(fd, false);
            }
            e = err.get(JAVA_INT, ERRNO_OFFSET);
        } catch (Throwable t) {
            closeFd(fd);
            if (t instanceof RuntimeException re) {
                throw re;
            }
            throw new AssertionError("connect", t);
        }
        if (e == 111 /* ECONNREFUSED */ || e == 2 /* ENOENT */) {
            if (spareCount.incrementAndGet() <= MAX_SPARE) {
                SPARE.add(fd);
            } else {
                spareCount.decrementAndGet();
                closeFd(fd);
            }
            return null;
        }
        closeFd(fd);
        if (e == EAGAIN || e == EINPROGRESS) {
            // (a non-blocking AF_UNIX connect fails with EAGAIN only when the listener's backlog is full)
            throw new BacklogFullException(name);
        }
        throw new IOException("connect(@" + name + "): errno " + e);
    }

    /**
     * A {@link #connect} that found a listener whose backlog is full: not "nobody listens",
     * which a caller takes for good, but "not now".
     */
    public static final class BacklogFullException extends IOException {
        BacklogFullException(String name) {
            super("connect(@" + name + "): the listener's backlog is full");
        }
    }

    // unconnected sockets whose connect failed, for the next connect (bounded, any thread)
    private static final java.util.Queue<Integer> SPARE = new java.util.concurrent.ConcurrentLinkedQueue<>();
    private static final java.util.concurrent.atomic.AtomicInteger spareCount =
            new java.util.concurrent.atomic.AtomicInteger();
    private static final int MAX_SPARE = 16;

    private static void closeFd(int fd) {
        try (Arena call = Arena.ofConfined()) {
            int r = (int) (long) MH$close.invokeExact(call.allocate(Linker.Option.captureStateLayout()), (long) fd, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
    }

    private MemorySegment abstractAddress(String name) {
        return abstractAddress(name, arena);
    }

    private static MemorySegment abstractAddress(String name, Arena arena) {
        byte[] bytes = name.getBytes(StandardCharsets.US_ASCII);
        if (bytes.length > MAX_NAME) {
            throw new IllegalArgumentException("abstract socket name too long: " + name);
        }
        MemorySegment addr = arena.allocate(SOCKADDR_UN_SIZE, 2);
        addr.set(JAVA_SHORT, 0, (short) AF_UNIX);
        addr.set(JAVA_BYTE, 2, (byte) 0);
        MemorySegment.copy(bytes, 0, addr, JAVA_BYTE, 3, bytes.length);
        return addr.asSlice(0, 3 + bytes.length);
    }

    public int fd() {
        return fd;
    }

    /** Accepts one pending connection; null when none is pending. */
    public synchronized UnixSeqpacket accept() throws IOException {
        if (fd < 0) {
            return null;
        }
        try {
            int c = (int) (long) MH$accept4.invokeExact(errno, (long) fd, 0L, 0L, (long) (SOCK_NONBLOCK | SOCK_CLOEXEC));
            if (c < 0) {
                int e = lastErrno();
                if (e == EAGAIN || e == EINTR || e == 103 /* ECONNABORTED */) {
                    return null;
                }
                throw new IOException("accept4: errno " + e);
            }
            return new UnixSeqpacket(c, false);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("accept4", t);
        }
    }

    /** The user id of the peer's process (when it connected or listened), from {@code SO_PEERCRED}. */
    public int peerUid() throws IOException {
        return peerCredential(4);
    }

    /** The process id of the peer (when it connected or listened), from {@code SO_PEERCRED}: for diagnostics. */
    public int peerPid() throws IOException {
        return peerCredential(0);
    }

    // struct ucred { pid_t pid; uid_t uid; gid_t gid; }: the field at offset
    private synchronized int peerCredential(int offset) throws IOException {
        if (fd < 0) {
            throw new IOException("closed");
        }
        try {
            MemorySegment cred = arena.allocate(12, 4);
            scratch.set(JAVA_INT, 8, 12);
            int r = (int) (long) MH$getsockopt.invokeExact(errno, (long) fd, (long) SOL_SOCKET, (long) SO_PEERCRED, cred.address(),
                    scratch.address() + 8, 0L, 0L, 0L);
            if (r < 0) {
                throw new IOException("getsockopt(SO_PEERCRED): errno " + lastErrno());
            }
            return cred.get(JAVA_INT, offset);
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("getsockopt", t);
        }
    }

    /** Sends one message whole (again when a signal interrupts it); false when the socket's buffer is full (try again later). */
    public synchronized boolean send(byte[] message) throws IOException {
        if (fd < 0) {
            throw new IOException("closed");
        }
        MemorySegment b = buffer(message.length);
        MemorySegment.copy(message, 0, b, JAVA_BYTE, 0, message.length);
        try {
            while (true) {
                long n = (long) MH$send.invokeExact(errno, (long) fd, b.address(), (long) message.length, (long) MSG_NOSIGNAL);
                if (n >= 0) {
                    return true;
                }
                int e = lastErrno();
                if (e == EINTR) {
                    // a signal is no reason to give up: a caller that drops the message on false (a
                    // registration's answer) would have the peer read its close as a refusal
                    continue;
                }
                if (e == EAGAIN) {
                    return false;
                }
                throw new IOException("send: errno " + e);
            }
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("send", t);
        }
    }

    /**
     * Receives one message of at most {@code capacity} bytes.
     *
     * @return the message (check {@link #truncated()}), or null: then {@link #status} says
     *         {@link #WOULD_BLOCK} or {@link #EOF}
     */
    public synchronized byte[] receive(int capacity) throws IOException {
        if (fd < 0) {
            status = EOF;
            return null;
        }
        MemorySegment b = buffer(capacity + 1);
        try {
            long n = (long) MH$recv.invokeExact(errno, (long) fd, b.address(), (long) capacity + 1, (long) MSG_TRUNC);
            if (n < 0) {
                int e = lastErrno();
                if (e == EAGAIN || e == EINTR) {
                    status = WOULD_BLOCK;
                    return null;
                }
                if (e == 104) { // ECONNRESET
                    status = EOF;
                    return null;
                }
                throw new IOException("recv: errno " + e);
            }
            if (n == 0) {
                status = EOF;
                return null;
            }
            truncated = n > capacity;
            int length = (int) Math.min(n, capacity);
            byte[] message = new byte[length];
            MemorySegment.copy(b, JAVA_BYTE, 0, message, 0, length);
            return message;
        } catch (IOException e) {
            throw e;
        } catch (Throwable t) {
            throw new AssertionError("recv", t);
        }
    }

    // why the last receive returned null
    private int status;

    public int status() {
        return status;
    }

    /** True when the last message received was longer than the capacity asked for. */
    public boolean truncated() {
        return truncated;
    }

    /**
     * Waits until a message (or the peer's end) can be received, at most until the
     * {@link System#nanoTime()} deadline.
     *
     * @return false when the deadline passed first
     */
    public boolean awaitReadable(long deadline) throws IOException {
        while (true) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return false;
            }
            if (PollSet.pollOne(fd, PollSet.POLLIN, (int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)))
                    != 0) {
                return true;
            }
        }
    }

    private MemorySegment buffer(int size) {
        if (buffer.byteSize() < size) {
            buffer = arena.allocate(Math.max(size, 256), 8);
        }
        return buffer;
    }

    private int lastErrno() {
        return errno.get(JAVA_INT, ERRNO_OFFSET);
    }

    /**
     * Ends the connection both ways now, from any thread (the socket stays open until
     * {@link #close}): the peer reads its end at once, and a later send here fails. Does
     * nothing once closed.
     */
    public synchronized void shutdown() {
        if (fd < 0) {
            return;
        }
        // not this socket's errno segment: it belongs to the thread that uses the socket
        try (Arena call = Arena.ofConfined()) {
            int r = (int) (long) MH$shutdown.invokeExact(call.allocate(Linker.Option.captureStateLayout()), (long) fd,
                    (long) SHUT_RDWR, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("shutdown", t);
        }
    }

    /** True when the peer has ended the connection (closed or shut it down), whatever it left unread here. */
    public synchronized boolean peerClosed() {
        if (fd < 0) {
            return true;
        }
        try {
            return (PollSet.pollOne(fd, POLLRDHUP, 0) & (POLLRDHUP | PollSet.POLLHUP | PollSet.POLLERR)) != 0;
        } catch (IOException e) {
            return true;
        }
    }

    @Override
    public synchronized void close() {
        if (fd < 0) {
            return;
        }
        try {
            int r = (int) (long) MH$close.invokeExact(errno, (long) fd, 0L, 0L, 0L);
        } catch (Throwable t) {
            throw new AssertionError("close", t);
        }
        fd = -1;
        if (!shared) {
            arena.close();
        }
    }
}
