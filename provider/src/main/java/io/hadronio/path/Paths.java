package io.hadronio.path;

import io.hadronio.transport.Connection;
import io.hadronio.transport.ConnectionLifecycle;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;

/**
 * Which {@link DataPath} each direction of a connection takes now, as its lifecycle says:
 * the kernel socket as the JDK drives it while the direction is plain, the kernel socket with
 * emulated blocking while the connection moves to UCX, UCX once the direction switched. A
 * direction only ever moves along that line: a path answers {@link DataPath#MOVED} when its
 * direction moved on during the call, and the call goes to the next one. A direction's readiness is its
 * path's: the kernel socket's fd (a selector polls it) while on the kernel, UCX's completions
 * (signalled) once switched.
 */
public final class Paths {
    private final ConnectionLifecycle life;
    private final KernelStream kernel;
    private final UpgradingKernelPath upgrading;
    private final UcxPath ucx;

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
            n = life.inputRaw() ? kernelPath().read(dsts, offset, length, timeoutMillis)
                    : ucx.read(dsts, offset, length, timeoutMillis);
        } while (n == DataPath.MOVED);
        return n;
    }

    /** Writes to the output's path, and to the next one if the output moved on ({@link DataPath#MOVED}). */
    public long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        long n;
        do {
            n = life.outputRaw() ? kernelPath().write(srcs, offset, length) : ucx.write(srcs, offset, length);
        } while (n == DataPath.MOVED);
        return n;
    }

    private DataPath kernelPath() {
        return life.isUpgradable() ? upgrading : kernel;
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
        Connection c = life.connection();
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
}
