package io.hadronio.path;

import io.hadronio.config.TransportOption;
import io.hadronio.path.Connection;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.observe.PathKind;
import java.io.IOException;
import java.net.Socket;
import java.net.SocketOption;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * Which {@link DataPath} each direction of a connection takes now, as its lifecycle says:
 * the kernel socket as the JDK drives it while the direction is plain, the kernel socket with
 * emulated blocking while the connection moves to UCX, UCX once the direction switched. A
 * direction only ever moves along that line: a path answers {@link DataPath#MOVED} when its
 * direction moved on during the call, and the call goes to the next one. A direction's readiness is its
 * path's: the kernel socket's fd (a selector polls it) while on the kernel, UCX's completions
 * (signalled) once switched. What the channel does to a direction beyond its bytes (shut it
 * down, change its blocking mode, send urgent data) goes to its path here too, and so does what
 * the channel reports of them ({@link #transport()}, {@link #describe()}), and the bytes each
 * direction carried by path ({@link DirectionBytes}, for the observing tools).
 */
public final class Paths {
    private final ConnectionLifecycle life;
    private final KernelStream kernel;
    private final UpgradingKernelPath upgrading;
    private final UcxPath ucx;
    // the application's bytes so far, by the path that carried them, one padded object per
    // direction (each written only by its reader or writer); the observing tools sum them when
    // asked (observe/Counters): no shared counter is touched per read or write
    private final DirectionBytes in = new DirectionBytes();
    private final DirectionBytes out = new DirectionBytes();

    public Paths(ConnectionLifecycle life, KernelStream kernel, ChannelIo io) {
        this.life = life;
        this.kernel = kernel;
        this.upgrading = new UpgradingKernelPath(kernel, life, io);
        this.ucx = new UcxPath(life, io);
    }

    /**
     * Reads from the input's path, and from the next one if the input moved on during the call
     * ({@link DataPath#MOVED}). The UCX path is called at a call site of its own: a connection
     * spends its life there, and the JIT can inline it there whatever paths the connection took
     * before.
     */
    public long read(ByteBuffer[] dsts, int offset, int length, int timeoutMillis) throws IOException {
        long n;
        do {
            // one read of the lifecycle's word says both whether the direction is raw and which kernel path
            int route = life.inputRoute();
            if (route != ConnectionLifecycle.ROUTE_UCX) {
                n = kernelPath(route).read(dsts, offset, length, timeoutMillis);
                if (n > 0) {
                    in.addRaw(n);
                }
            } else {
                n = ucx.read(dsts, offset, length, timeoutMillis);
                if (n > 0) {
                    in.addUcx(n);
                }
            }
        } while (n == DataPath.MOVED);
        return n;
    }

    /** Writes to the output's path, and to the next one if the output moved on ({@link DataPath#MOVED}). */
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long n;
        do {
            // one read of the lifecycle's word says both whether the direction is raw and which kernel path
            int route = life.outputRoute();
            if (route != ConnectionLifecycle.ROUTE_UCX) {
                n = kernelPath(route).write(srcs, offset, length);
                if (n > 0) {
                    out.addRaw(n);
                }
            } else {
                n = ucx.write(srcs, offset, length);
                if (n > 0) {
                    out.addUcx(n);
                }
            }
        } while (n == DataPath.MOVED);
        return n;
    }

    /**
     * Bytes a read takes now without waiting for the network, as the socket stream's
     * {@code available()} says: the kernel socket's (never past the peer's switch point while the
     * connection moves), or UCX's; 0 once the input is shut. An estimate: a direction may move
     * while it is asked.
     */
    public int available() throws IOException {
        if (life.state() != ConnectionLifecycle.OPEN || life.isInputShut()) {
            return 0;
        }
        if (life.inputRaw()) {
            long n = kernel.available();
            if (life.isUpgradable()) {
                n = Math.max(0, Math.min(n, life.upgrade().room()));
            }
            return (int) n;
        }
        Connection c = (Connection) life.connection();
        return c == null ? 0 : c.available();
    }

    /** The channel closed (under its read lock, no reader inside): what a read's wait held goes. */
    public void closed() {
        upgrading.release();
    }

    /** The kernel path of a raw direction's route: the upgrading one while the connection may move. */
    private DataPath kernelPath(int route) {
        return route == ConnectionLifecycle.ROUTE_MOVING ? upgrading : kernel;
    }

    /**
     * The ready operations of {@code interestOps} that need no poll of the socket: a connect
     * whose handshake ended, everything once the connection broke (a read or write would fail
     * now), a read of the bytes the detection took first or of a shut input, and what UCX says
     * for a direction on UCX.
     */
    public int readyOps(int interestOps) {
        int ready = 0;
        int s = life.state();
        if ((interestOps & SelectionKey.OP_CONNECT) != 0 && life.handshakeEnded()) {
            ready |= SelectionKey.OP_CONNECT;
        }
        if (s != ConnectionLifecycle.OPEN) {
            return ready;
        }
        boolean inputShut = life.isInputShut();
        int rw = interestOps & (SelectionKey.OP_READ | SelectionKey.OP_WRITE);
        if (life.isReset()) {
            // a read or write would fail now (on a raw direction too: the kernel socket may say nothing)
            if (!life.inputOutlivesReset()) {
                return ready | rw;
            }
            // only our output broke: the input is ready as it would be
            ready |= rw & SelectionKey.OP_WRITE;
            rw &= ~SelectionKey.OP_WRITE;
        }
        // a raw direction's readiness is its fd's (readyOpsAfterPoll), a switched one's is UCX's
        if (life.inputRaw()) {
            if ((rw & SelectionKey.OP_READ) != 0 && (inputShut || kernel.hasPrefix())) {
                ready |= SelectionKey.OP_READ;
            }
            rw &= ~SelectionKey.OP_READ;
        }
        if (life.outputRaw()) {
            rw &= ~SelectionKey.OP_WRITE;
        }
        Connection c = (Connection) life.connection();
        if (c != null && rw != 0) {
            if (inputShut) {
                ready |= rw & SelectionKey.OP_READ;
                rw &= ~SelectionKey.OP_READ;
            }
            if (rw != 0) {
                ready |= c.readyOps(rw);
            }
        }
        return ready;
    }

    /** The fd a selector polls while a direction is on the kernel socket; -1 once both are on UCX. */
    public int pollFd() {
        return life.inputRaw() || life.outputRaw() ? kernel.fd() : -1;
    }

    /** What the poll of {@link #pollFd} says ({@code ops}), for the directions still on the kernel socket. */
    public int readyOpsAfterPoll(int ops) {
        if (!life.inputRaw()) {
            ops &= ~SelectionKey.OP_READ;
        }
        if (!life.outputRaw()) {
            ops &= ~SelectionKey.OP_WRITE;
        }
        return ops;
    }

    // ---- what the channel does to a direction beyond its bytes -------------------------------------

    /**
     * True while the kernel socket is the whole connection, in the channel's blocking mode: plain,
     * and not converted for a move to UCX (then the socket is non-blocking and blocking emulated).
     */
    private boolean kernelIsChannel() {
        return life.isPlain() && !life.isUpgradable();
    }

    /**
     * The channel's blocking mode changed: the kernel socket follows while it is the channel;
     * otherwise blocking is a property of our own waits, and the socket stays non-blocking.
     */
    public void configureBlocking(boolean block) throws IOException {
        if (kernelIsChannel()) {
            kernel.configureBlocking(block);
        }
    }

    /** Goes plain: from now on the kernel socket is the channel, in the channel's blocking mode {@code block}. */
    public void goPlain(boolean block) throws IOException {
        life.choosePlain();
        kernel.goPlain(block);
    }

    /** Shuts the input down: the kernel socket's while it is the channel; a reader in our own wait wakes. */
    public void shutdownInput() throws IOException {
        if (kernelIsChannel()) {
            kernel.shutdownInput();
        }
        // a reader blocked in await() wakes and returns -1 (as the JDK's shutdownInput
        // signals its reader thread)
        life.shutdownInput();
    }

    /** Shuts the output down (under the write lock): on the kernel socket while raw, after the posted sends on UCX. */
    public void shutdownOutput() throws IOException {
        if (life.outputRaw()) {
            kernel.shutdownOutput();
            life.upgrade().outputEndedRaw();
        }
        // accelerated: FIN goes out once the sends posted so far completed
        life.shutdownOutput();
    }

    /** TCP urgent data, on a plain connection; on an accelerated one it is dropped (a peer without OOBINLINE drops it too). */
    public void sendUrgentData(int data) throws IOException {
        if (life.isPlain()) {
            kernel.sendUrgentData(data);
        }
    }

    /**
     * The TCP socket, for the adaptor's options that only a TCP connection has: while the
     * channel is unconnected (an option set now applies to the TCP connect that may follow) and
     * while a connection is plain TCP; null otherwise.
     */
    public Socket plainSocket() {
        return life.state() == ConnectionLifecycle.NEW || life.isPlain() ? kernel.plainSocket() : null;
    }

    /**
     * Sets an option the channel checked (one of {@link KernelStream#supportedOptions()}, a value
     * of its type, the channel open): the kernel socket's, or {@link TransportOption#TRANSPORT},
     * which is read-only.
     */
    public <T> void setOption(SocketOption<T> name, T value) throws IOException {
        if (name == TransportOption.TRANSPORT) {
            throw new UnsupportedOperationException("'" + name + "' is read-only");
        }
        kernel.setOption(name, value, life.state() == ConnectionLifecycle.NEW);
    }

    /** An option the channel checked: the kernel socket's, or {@link TransportOption#TRANSPORT}. */
    @SuppressWarnings("unchecked")
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return name == TransportOption.TRANSPORT ? (T) transport() : kernel.getOption(name);
    }

    // ---- what the channel reports ----------------------------------------------------------------

    /** The kernel's path of this connection: a local Unix stream, or TCP. */
    private PathKind kernelKind() {
        return kernel.isLocalStream() ? PathKind.KERNEL_UNIX : PathKind.KERNEL_TCP;
    }

    /** The path the input takes now (for a read's JFR event and the listing). */
    public PathKind inputPath() {
        return life.inputRaw() ? kernelKind() : PathKind.UCX;
    }

    /** The path the output takes now (for a write's JFR event). */
    public PathKind outputPath() {
        return life.outputRaw() ? kernelKind() : PathKind.UCX;
    }

    /** The connection's path: UCX once both directions are on it, else the kernel's. */
    public PathKind path() {
        return life.onUcx() ? PathKind.UCX : kernelKind();
    }

    /** Bytes the application read over {@code path} so far (racy: the reader's plain count). */
    public long bytesIn(PathKind path) {
        return path == PathKind.UCX ? in.ucx() : path == kernelKind() ? in.raw() : 0;
    }

    /** Bytes the application wrote over {@code path} so far (racy: the writer's plain count). */
    public long bytesOut(PathKind path) {
        return path == PathKind.UCX ? out.ucx() : path == kernelKind() ? out.raw() : 0;
    }

    /**
     * The path the bytes take, as {@link TransportOption#TRANSPORT} reports it:
     * {@code "ucx:cma,sysv"} (the UCX transports in use), {@code "tcp"}, {@code "unix"} (a local
     * stream not moved yet), or {@code ""} while not connected.
     */
    public String transport() {
        String t = life.transport();
        return kernel.isLocalStream() && "tcp".equals(t) ? "unix" : t;
    }

    /**
     * The transports UCX uses for this connection, e.g. [cma, sysv] ([] on plain TCP, and on
     * an upgraded one until both directions moved, as {@link #transport()} says).
     */
    public String transports() {
        Connection c = (Connection) life.connection();
        return c == null || !life.onUcx() ? "[]" : c.transports();
    }

    /** An open channel's state, path, addresses and connection facts, for its {@code toString}. */
    public String describe() {
        int s = life.state();
        StringBuilder sb = new StringBuilder(switch (s) {
            case ConnectionLifecycle.NEW -> "unconnected";
            case ConnectionLifecycle.CONNECTING -> "connection-pending";
            case ConnectionLifecycle.OPEN -> "connected";
            default -> "closing";
        });
        if (s == ConnectionLifecycle.OPEN) {
            sb.append(' ').append(transport());
        }
        sb.append(kernel.describe(s == ConnectionLifecycle.OPEN));
        // the connection's facts (which directions moved, what each side announced): what a
        // hung application's dump needs
        return sb.append(' ').append(life).toString();
    }
}
