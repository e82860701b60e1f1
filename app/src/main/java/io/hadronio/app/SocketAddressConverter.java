package io.hadronio.app;

import java.net.InetSocketAddress;
import picocli.CommandLine;

/**
 * Parses {@code HOST:PORT}, {@code [IPv6]:PORT} or {@code :PORT} (all interfaces)
 * into an unresolved-free {@link InetSocketAddress}; shared by every subcommand that
 * listens or connects.
 */
public final class SocketAddressConverter implements CommandLine.ITypeConverter<InetSocketAddress> {
    @Override
    public InetSocketAddress convert(String value) {
        return parse(value);
    }

    public static InetSocketAddress parse(String value) {
        int colon = value.lastIndexOf(':');
        if (colon < 0) {
            throw new CommandLine.TypeConversionException("'" + value + "' is not HOST:PORT");
        }
        String host = value.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        int port;
        try {
            port = Integer.parseInt(value.substring(colon + 1));
        } catch (NumberFormatException e) {
            throw new CommandLine.TypeConversionException("'" + value + "': port is not a number");
        }
        if (port < 0 || port > 65535) {
            throw new CommandLine.TypeConversionException("'" + value + "': port out of range");
        }
        return host.isEmpty() ? new InetSocketAddress(port) : new InetSocketAddress(host, port);
    }
}
