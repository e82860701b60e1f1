package io.hadronio.app.ucx;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.ConnectException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;

/**
 * The plain TCP connection beside the UCX endpoints: it carries the handshake (the
 * client's settings and both workers' addresses) and the barriers around the
 * measured loops, and lets a busy-polling loop notice that the peer died (UCX
 * endpoints in error mode NONE never report that).
 *
 * <p>Uses {@link java.net.Socket}, not NIO channels, so it stays on the kernel's TCP
 * even when a JVM is started with another {@code SelectorProvider}.
 */
final class ControlChannel implements AutoCloseable {
    // "HUCX": first word of every handshake message
    static final int MAGIC = 0x48554358;
    // handshake format; bumped on any change
    static final int VERSION = 1;
    // worker addresses are a few hundred bytes; anything far larger is garbage
    static final int MAX_ADDRESS_BYTES = 1 << 16;
    // how long a handshake message may take to arrive
    private static final int HANDSHAKE_TIMEOUT_MILLIS = 30_000;

    private static final int STATUS_OK = 0;
    private static final int STATUS_REFUSED = 1;

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    // barrier bytes that peerGone() read ahead of barrier()
    private int stashedBarriers;

    /** What the client sends first. */
    record Hello(BenchmarkSettings settings, byte[] workerAddress) {
    }

    private ControlChannel(Socket socket) throws IOException {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    /** A listening socket for {@link #accept}; port 0 picks a free port. */
    static ServerSocket listen(InetSocketAddress address) throws IOException {
        ServerSocket server = new ServerSocket();
        server.setReuseAddress(true);
        server.bind(address, 1);
        return server;
    }

    static ControlChannel accept(ServerSocket server) throws IOException {
        return new ControlChannel(server.accept());
    }

    /** Connects, retrying refused connections (server not up yet) until {@code patience} is over. */
    static ControlChannel connect(InetSocketAddress remote, Duration patience) throws IOException {
        long deadline = System.nanoTime() + patience.toNanos();
        while (true) {
            Socket socket = new Socket();
            try {
                socket.connect(remote, HANDSHAKE_TIMEOUT_MILLIS);
                return new ControlChannel(socket);
            } catch (ConnectException e) {
                socket.close();
                if (System.nanoTime() > deadline) {
                    throw new ConnectException("cannot connect to " + remote + " (" + e.getMessage()
                            + "); is the server (-s) running?");
                }
                try {
                    Thread.sleep(100);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    throw new IOException("interrupted while connecting", ie);
                }
            } catch (IOException | RuntimeException e) {
                socket.close();
                throw e;
            }
        }
    }

    InetSocketAddress remoteAddress() {
        return (InetSocketAddress) socket.getRemoteSocketAddress();
    }

    // ---- handshake -------------------------------------------------------------------------

    void sendHello(BenchmarkSettings s, byte[] workerAddress) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        out.writeInt(s.kind().ordinal());
        out.writeInt(s.length());
        out.writeInt(s.messages());
        out.writeInt(s.warmup());
        out.writeInt(s.window());
        out.writeInt(s.runs());
        writeAddress(workerAddress);
        out.flush();
    }

    Hello readHello() throws IOException {
        socket.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
        readPreamble();
        int kind = in.readInt();
        if (kind < 0 || kind >= BenchmarkSettings.Kind.values().length) {
            throw new IOException("handshake: unknown benchmark kind " + kind);
        }
        BenchmarkSettings settings;
        try {
            settings = new BenchmarkSettings(BenchmarkSettings.Kind.values()[kind], in.readInt(), in.readInt(),
                    in.readInt(), in.readInt(), in.readInt());
        } catch (IllegalArgumentException e) {
            throw new IOException("handshake: " + e.getMessage(), e);
        }
        byte[] address = readAddress();
        socket.setSoTimeout(0);
        return new Hello(settings, address);
    }

    /** The server's answer: its worker address, or (with {@code refusal} set) why it will not run. */
    void sendReply(String refusal, byte[] workerAddress) throws IOException {
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        if (refusal != null) {
            out.writeInt(STATUS_REFUSED);
            out.writeUTF(refusal);
        } else {
            out.writeInt(STATUS_OK);
            writeAddress(workerAddress);
        }
        out.flush();
    }

    /** The server's worker address; throws with the server's reason when it refused. */
    byte[] readReply() throws IOException {
        socket.setSoTimeout(HANDSHAKE_TIMEOUT_MILLIS);
        readPreamble();
        int status = in.readInt();
        if (status == STATUS_REFUSED) {
            throw new IOException("server refused: " + in.readUTF());
        }
        if (status != STATUS_OK) {
            throw new IOException("handshake: unknown status " + status);
        }
        byte[] address = readAddress();
        socket.setSoTimeout(0);
        return address;
    }

    private void readPreamble() throws IOException {
        int magic = in.readInt();
        if (magic != MAGIC) {
            throw new IOException("handshake: not a hadronio ucx benchmark peer (magic 0x"
                    + Integer.toHexString(magic) + ")");
        }
        int version = in.readInt();
        if (version != VERSION) {
            throw new IOException("handshake: peer speaks version " + version + ", this is version " + VERSION);
        }
    }

    private void writeAddress(byte[] address) throws IOException {
        out.writeInt(address.length);
        out.write(address);
    }

    private byte[] readAddress() throws IOException {
        int length = in.readInt();
        if (length <= 0 || length > MAX_ADDRESS_BYTES) {
            throw new IOException("handshake: worker address length " + length + " out of range");
        }
        byte[] address = new byte[length];
        in.readFully(address);
        return address;
    }

    // ---- synchronisation -------------------------------------------------------------------

    /** Returns once the peer has reached its matching barrier. */
    void barrier() throws IOException {
        out.write(1);
        out.flush();
        if (stashedBarriers > 0) {
            stashedBarriers--;
            return;
        }
        if (in.read() < 0) {
            throw new EOFException("peer closed the control connection");
        }
    }

    /**
     * True when the peer closed the control connection (it exited or died). Waits up to
     * a millisecond, so call it only after a long stretch without progress.
     */
    boolean peerGone() throws IOException {
        socket.setSoTimeout(1);
        try {
            if (in.read() < 0) {
                return true;
            }
            stashedBarriers++;
            return false;
        } catch (SocketTimeoutException e) {
            return false;
        } finally {
            socket.setSoTimeout(0);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
