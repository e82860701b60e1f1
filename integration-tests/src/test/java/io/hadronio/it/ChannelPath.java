package io.hadronio.it;

import io.hadronio.HadronioSocketOptions;
import java.io.IOException;
import java.nio.channels.SocketChannel;

/** The path a connected channel reports, for the tests' peers in every package. */
public final class ChannelPath {
    private ChannelPath() {
    }

    /** {@link HadronioSocketOptions#TRANSPORT} of a hadroNIO channel ({@code tcp}, {@code ucx:...}), {@code jdk} for any other. */
    public static String of(SocketChannel ch) throws IOException {
        return ch.supportedOptions().contains(HadronioSocketOptions.TRANSPORT)
                ? ch.getOption(HadronioSocketOptions.TRANSPORT) : "jdk";
    }
}
