package io.hadronio.nio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.SocketChannel;
import java.nio.channels.UnsupportedAddressTypeException;
import java.util.Objects;
import java.util.Set;

/**
 * The {@link Socket} view of a {@link HadronioSocketChannel} ({@code channel.socket()}):
 * streams over the channel (blocking mode only, as with the JDK), {@code setSoTimeout}
 * on reads, and the classic option setters mapped to socket options. What it throws is the
 * JDK's adaptor's, by {@link AdaptorExceptions}.
 */
final class SocketAdaptor extends Socket {
    private final HadronioSocketChannel channel;

    private SocketAdaptor(HadronioSocketChannel channel) throws SocketException {
        super(DummySocketImpl.INSTANCE);
        this.channel = channel;
    }

    static SocketAdaptor create(HadronioSocketChannel channel) {
        try {
            return new SocketAdaptor(channel);
        } catch (SocketException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    @Override
    public SocketChannel getChannel() {
        return channel;
    }

    @Override
    public void connect(SocketAddress remote) throws IOException {
        connect(remote, 0);
    }

    @Override
    public void connect(SocketAddress remote, int timeout) throws IOException {
        // the JDK's adaptor's checks, in its order (AdaptorExceptions has the table)
        if (remote == null) {
            throw new IllegalArgumentException("connect: The address can't be null");
        }
        if (remote instanceof InetSocketAddress isa && isa.isUnresolved()) {
            AdaptorExceptions.ensureOpen(channel);
            if (channel.isConnected()) {
                throw AdaptorExceptions.alreadyConnected();
            }
            // Socket.connect: an address that cannot be resolved closes the socket
            channel.close();
            throw AdaptorExceptions.unknownHost(isa);
        }
        if (timeout < 0) {
            throw new IllegalArgumentException("connect: timeout can't be negative");
        }
        if (!(remote instanceof InetSocketAddress)) {
            // the channel would find it too, but only after the checks below; the JDK's
            // adaptor reports the address first
            throw AdaptorExceptions.translate(new UnsupportedAddressTypeException());
        }
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
        if (!channel.isOpen()) {
            throw AdaptorExceptions.closedInBlockingCall();
        }
        try {
            channel.connect(remote, timeout);
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        try {
            channel.bind(local);
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress remote = remote();
        return remote == null ? null : remote.getAddress();
    }

    @Override
    public InetAddress getLocalAddress() {
        InetSocketAddress local = local();
        // java.net.Socket: the wildcard address if the socket is closed or not bound yet
        return local == null ? new InetSocketAddress(0).getAddress() : local.getAddress();
    }

    @Override
    public int getPort() {
        InetSocketAddress remote = remote();
        return remote == null ? 0 : remote.getPort();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = local();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getRemoteSocketAddress() {
        return remote();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local();
    }

    private InetSocketAddress remote() {
        try {
            return channel.isConnected() ? (InetSocketAddress) channel.getRemoteAddress() : null;
        } catch (IOException e) {
            return null;
        }
    }

    private InetSocketAddress local() {
        try {
            return channel.isOpen() ? (InetSocketAddress) channel.getLocalAddress() : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public InputStream getInputStream() throws IOException {
        ensureConnected();
        if (isInputShutdown()) {
            throw AdaptorExceptions.inputShutdown();
        }
        return new InputStream() {
            private final ByteBuffer one = ByteBuffer.allocate(1);

            @Override
            public int read() throws IOException {
                one.clear();
                int n = read(one.array(), 0, 1);
                return n <= 0 ? -1 : one.array()[0] & 0xff;
            }

            @Override
            public int read(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                if (len == 0) {
                    return 0;
                }
                // the JDK's stream: a closed channel before the blocking mode; the channel's
                // exceptions untranslated
                ensureStreamOpen();
                ByteBuffer bb = ByteBuffer.wrap(b, off, len);
                int timeout = channel.readTimeoutMillis;
                int n = timeout > 0 ? channel.timedRead(bb, timeout) : channel.read(bb);
                return n;
            }

            @Override
            public int available() throws IOException {
                // what a read takes without waiting for the network, as the JDK's stream answers
                // (an application that polls available() before it reads must see its bytes); a
                // closed channel fails as the JDK's stream does
                if (!channel.isOpen()) {
                    throw new ClosedChannelException();
                }
                return channel.available();
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    @Override
    public OutputStream getOutputStream() throws IOException {
        ensureConnected();
        if (isOutputShutdown()) {
            throw AdaptorExceptions.outputShutdown();
        }
        return new OutputStream() {
            @Override
            public void write(int b) throws IOException {
                write(new byte[] {(byte) b}, 0, 1);
            }

            @Override
            public void write(byte[] b, int off, int len) throws IOException {
                Objects.checkFromIndexSize(off, len, b.length);
                if (len == 0) {
                    return;
                }
                ensureStreamOpen();
                if (channel.isOutputShutdown()) {
                    throw AdaptorExceptions.writeAfterShutdown();
                }
                ByteBuffer bb = ByteBuffer.wrap(b, off, len);
                while (bb.hasRemaining()) {
                    channel.write(bb);
                }
            }

            @Override
            public void close() throws IOException {
                channel.close();
            }
        };
    }

    private void ensureConnected() throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        if (!channel.isConnected()) {
            throw AdaptorExceptions.notConnected();
        }
    }

    /** What the JDK's streams check before a read or write: open, then blocking. */
    private void ensureStreamOpen() throws ClosedChannelException {
        if (!channel.isOpen()) {
            throw new ClosedChannelException();
        }
        if (!channel.isBlocking()) {
            throw new IllegalBlockingModeException();
        }
    }

    private <T> void set(SocketOption<T> name, T value) throws SocketException {
        AdaptorOptions.set(channel, name, value);
    }

    private <T> T get(SocketOption<T> name) throws SocketException {
        return AdaptorOptions.get(channel, name);
    }

    @Override
    public void setTcpNoDelay(boolean on) throws SocketException {
        set(StandardSocketOptions.TCP_NODELAY, on);
    }

    @Override
    public boolean getTcpNoDelay() throws SocketException {
        return get(StandardSocketOptions.TCP_NODELAY);
    }

    @Override
    public void setSoLinger(boolean on, int linger) throws SocketException {
        set(StandardSocketOptions.SO_LINGER, on ? linger : -1);
    }

    @Override
    public int getSoLinger() throws SocketException {
        return get(StandardSocketOptions.SO_LINGER);
    }

    @Override
    public void sendUrgentData(int data) throws IOException {
        // untranslated, as the JDK's adaptor: ClosedChannelException, NotYetConnectedException
        channel.sendUrgentData(data);
    }

    @Override
    public void setOOBInline(boolean on) throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        oobInline = on;
        Socket plain = channel.plainSocket();
        if (plain != null) {
            plain.setOOBInline(on);
        }
    }

    @Override
    public boolean getOOBInline() throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        Socket plain = channel.plainSocket();
        return plain != null ? plain.getOOBInline() : oobInline;
    }

    // SO_OOBINLINE as the application set it, for a connection whose bytes take no TCP socket (a
    // local stream, UCX: no urgent data arrives there), where it changes nothing but must read back
    private volatile boolean oobInline;

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        channel.readTimeoutMillis = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        return channel.readTimeoutMillis;
    }

    @Override
    public void setSendBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid send size");
        }
        set(StandardSocketOptions.SO_SNDBUF, size);
    }

    @Override
    public int getSendBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_SNDBUF);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("Invalid receive size");
        }
        set(StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return get(StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public void setKeepAlive(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_KEEPALIVE, on);
    }

    @Override
    public boolean getKeepAlive() throws SocketException {
        return get(StandardSocketOptions.SO_KEEPALIVE);
    }

    @Override
    public void setTrafficClass(int tc) throws SocketException {
        set(StandardSocketOptions.IP_TOS, tc);
    }

    @Override
    public int getTrafficClass() throws SocketException {
        return get(StandardSocketOptions.IP_TOS);
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        set(StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return get(StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public <T> Socket setOption(SocketOption<T> name, T value) throws IOException {
        channel.setOption(name, value);
        return this;
    }

    @Override
    public <T> T getOption(SocketOption<T> name) throws IOException {
        return channel.getOption(name);
    }

    @Override
    public Set<SocketOption<?>> supportedOptions() {
        return channel.supportedOptions();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public void shutdownInput() throws IOException {
        try {
            channel.shutdownInput();
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
    }

    @Override
    public void shutdownOutput() throws IOException {
        try {
            channel.shutdownOutput();
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
    }

    @Override
    public boolean isConnected() {
        return channel.isConnected();
    }

    @Override
    public boolean isBound() {
        return local() != null;
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public boolean isInputShutdown() {
        return channel.isInputShutdown();
    }

    @Override
    public boolean isOutputShutdown() {
        return channel.isOutputShutdown();
    }

    @Override
    public String toString() {
        if (channel.isConnected()) {
            return "Socket[addr=" + getInetAddress() + ",port=" + getPort() + ",localport=" + getLocalPort() + "]";
        }
        return "Socket[unconnected]";
    }
}
