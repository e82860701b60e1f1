package io.hadronio;

import io.hadronio.config.TransportOption;
import java.net.SocketOption;

/**
 * Socket options that hadroNIO's channels add to the standard ones.
 *
 * <pre>{@code
 * String path = channel.getOption(HadronioSocketOptions.TRANSPORT); // "ucx:cma,sysv", "unix" or "tcp"
 * }</pre>
 */
public final class HadronioSocketOptions {
    /**
     * Read-only: the path a connected channel's bytes take. {@code "tcp"}: plain TCP
     * (the peer does not run hadroNIO, or does not share our key); {@code "unix"}: a local
     * Unix stream between two hadroNIO processes of one user, not yet moved to UCX
     * ({@code hadronio.local.stream}); {@code "ucx:"}
     * followed by the UCX transports the connection uses (e.g. {@code "ucx:cma,sysv"}:
     * shared memory on one host); {@code ""} before the channel is connected. Setting it
     * throws {@link UnsupportedOperationException}.
     */
    public static final SocketOption<String> TRANSPORT = TransportOption.TRANSPORT;

    private HadronioSocketOptions() {
    }
}
