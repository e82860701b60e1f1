package io.hadronio.nio;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketAddress;
import java.net.SocketException;
import java.net.SocketOption;
import java.net.StandardSocketOptions;
import java.nio.channels.IllegalBlockingModeException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.Set;

/**
 * The {@link ServerSocket} view of a {@link HadronioServerSocketChannel}. What it throws is
 * the JDK's adaptor's, by {@link AdaptorExceptions}.
 */
final class ServerSocketAdaptor extends ServerSocket {
    private final HadronioServerSocketChannel channel;

    ServerSocketAdaptor(HadronioServerSocketChannel channel) {
        super(DummySocketImpl.INSTANCE);
        this.channel = channel;
    }

    @Override
    public ServerSocketChannel getChannel() {
        return channel;
    }

    @Override
    public void bind(SocketAddress local) throws IOException {
        bind(local, 50);
    }

    @Override
    public void bind(SocketAddress local, int backlog) throws IOException {
        try {
            channel.bind(local == null ? new InetSocketAddress(0) : local, backlog);
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
    }

    @Override
    public InetAddress getInetAddress() {
        InetSocketAddress local = local();
        return local == null ? null : local.getAddress();
    }

    @Override
    public int getLocalPort() {
        InetSocketAddress local = local();
        return local == null ? -1 : local.getPort();
    }

    @Override
    public SocketAddress getLocalSocketAddress() {
        return local();
    }

    private InetSocketAddress local() {
        try {
            return channel.isOpen() && channel.isBound() ? (InetSocketAddress) channel.getLocalAddress() : null;
        } catch (IOException e) {
            return null;
        }
    }

    @Override
    public Socket accept() throws IOException {
        // the JDK's adaptor's checks, in its order (AdaptorExceptions has the table)
        int timeout = channel.acceptTimeoutMillis;
        SocketChannel accepted;
        try {
            if (timeout > 0) {
                if (!channel.isBlocking()) {
                    throw new IllegalBlockingModeException();
                }
                if (!channel.isOpen()) {
                    throw AdaptorExceptions.closedInBlockingCall();
                }
                accepted = channel.accept(timeout);
            } else {
                // a non-blocking channel hands over a waiting connection: the JDK's adaptor
                // keeps that long-standing behaviour of ServerSocket over a channel
                accepted = channel.accept();
            }
        } catch (IOException | RuntimeException e) {
            throw AdaptorExceptions.translate(e);
        }
        if (accepted == null) {
            // non-blocking (also if made so while we checked) and nothing waiting
            throw new IllegalBlockingModeException();
        }
        return accepted.socket();
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }

    @Override
    public boolean isBound() {
        return channel.isBound();
    }

    @Override
    public boolean isClosed() {
        return !channel.isOpen();
    }

    @Override
    public void setSoTimeout(int timeout) throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        if (timeout < 0) {
            throw new IllegalArgumentException("timeout < 0");
        }
        channel.acceptTimeoutMillis = timeout;
    }

    @Override
    public int getSoTimeout() throws SocketException {
        AdaptorExceptions.ensureOpen(channel);
        return channel.acceptTimeoutMillis;
    }

    @Override
    public void setReuseAddress(boolean on) throws SocketException {
        AdaptorOptions.set(channel, StandardSocketOptions.SO_REUSEADDR, on);
    }

    @Override
    public boolean getReuseAddress() throws SocketException {
        return AdaptorOptions.get(channel, StandardSocketOptions.SO_REUSEADDR);
    }

    @Override
    public void setReceiveBufferSize(int size) throws SocketException {
        if (size <= 0) {
            throw new IllegalArgumentException("size cannot be 0 or negative");
        }
        AdaptorOptions.set(channel, StandardSocketOptions.SO_RCVBUF, size);
    }

    @Override
    public int getReceiveBufferSize() throws SocketException {
        return AdaptorOptions.get(channel, StandardSocketOptions.SO_RCVBUF);
    }

    @Override
    public <T> ServerSocket setOption(SocketOption<T> name, T value) throws IOException {
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
    public String toString() {
        return channel.isBound() ? "ServerSocket[addr=" + getInetAddress() + ",localport=" + getLocalPort() + "]"
                : "ServerSocket[unbound]";
    }
}
