package io.hadronio.nio;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.SocketAddress;
import java.net.SocketImpl;

/**
 * The {@link SocketImpl} handed to the {@code Socket}/{@code ServerSocket} constructors by
 * the adaptors, which override every public method and never reach it.
 */
final class DummySocketImpl extends SocketImpl {
    static final DummySocketImpl INSTANCE = new DummySocketImpl();

    private static UnsupportedOperationException unused() {
        return new UnsupportedOperationException("hadroNIO socket adaptor: not reached");
    }

    @Override
    protected void create(boolean stream) {
        throw unused();
    }

    @Override
    protected void connect(String host, int port) {
        throw unused();
    }

    @Override
    protected void connect(InetAddress address, int port) {
        throw unused();
    }

    @Override
    protected void connect(SocketAddress address, int timeout) {
        throw unused();
    }

    @Override
    protected void bind(InetAddress host, int port) {
        throw unused();
    }

    @Override
    protected void listen(int backlog) {
        throw unused();
    }

    @Override
    protected void accept(SocketImpl s) {
        throw unused();
    }

    @Override
    protected InputStream getInputStream() {
        throw unused();
    }

    @Override
    protected OutputStream getOutputStream() {
        throw unused();
    }

    @Override
    protected int available() {
        throw unused();
    }

    @Override
    protected void close() throws IOException {
        // nothing was opened
    }

    @Override
    protected void sendUrgentData(int data) {
        throw unused();
    }

    @Override
    public void setOption(int optID, Object value) {
        throw unused();
    }

    @Override
    public Object getOption(int optID) {
        throw unused();
    }
}
