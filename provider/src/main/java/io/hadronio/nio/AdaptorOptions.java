package io.hadronio.nio;

import java.io.IOException;
import java.net.SocketException;
import java.net.SocketOption;
import java.nio.channels.NetworkChannel;

/**
 * What both socket adaptors do for the classic {@code java.net} option setters and getters:
 * delegate to the channel's socket options and report its failures as {@link SocketException},
 * as {@code Socket} and {@code ServerSocket} declare, translated as the JDK's adaptors do
 * ({@link AdaptorExceptions#toSocketException}: a closed channel is "Socket is closed").
 */
final class AdaptorOptions {
    private AdaptorOptions() {
    }

    static <T> void set(NetworkChannel channel, SocketOption<T> name, T value) throws SocketException {
        try {
            channel.setOption(name, value);
        } catch (IOException e) {
            throw AdaptorExceptions.toSocketException(e);
        }
    }

    static <T> T get(NetworkChannel channel, SocketOption<T> name) throws SocketException {
        try {
            return channel.getOption(name);
        } catch (IOException e) {
            throw AdaptorExceptions.toSocketException(e);
        }
    }
}
