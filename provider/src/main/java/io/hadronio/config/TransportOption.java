package io.hadronio.config;

import java.net.SocketOption;

/**
 * The socket option that reports a connection's path: the object behind the public
 * {@code io.hadronio.HadronioSocketOptions.TRANSPORT}, defined here, in the leaf package, so
 * that the channels and data paths that answer it need not name the provider's top package.
 * Its meaning is documented there.
 */
public final class TransportOption {
    public static final SocketOption<String> TRANSPORT = new SocketOption<>() {
        @Override
        public String name() {
            return "HADRONIO_TRANSPORT";
        }

        @Override
        public Class<String> type() {
            return String.class;
        }

        @Override
        public String toString() {
            return name();
        }
    };

    private TransportOption() {
    }
}
