package io.hadronio.nio;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketOption;
import java.nio.channels.NetworkChannel;

/**
 * What both socket adaptors do for the classic {@code java.net} option setters: check the
 * channel is open, delegate to its socket options, and report failures as
 * {@link SocketException}, as {@code Socket} and {@code ServerSocket} declare.
 */
final class AdaptorOptions {
    private AdaptorOptions() {
    }

    static void ensureOpen(NetworkChannel channel) throws SocketException {
        if (!channel.isOpen()) {
            throw new SocketException("Socket is closed");
        }
    }

    static <T> void set(NetworkChannel channel, SocketOption<T> name, T value) throws SocketException {
        ensureOpen(channel);
        try {
            channel.setOption(name, value);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }

    static <T> T get(NetworkChannel channel, SocketOption<T> name) throws SocketException {
        ensureOpen(channel);
        try {
            return channel.getOption(name);
        } catch (SocketException e) {
            throw e;
        } catch (IOException e) {
            throw new SocketException(e.getMessage());
        }
    }
}
