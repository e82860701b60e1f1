package io.hadronio.app;

import java.net.InetSocketAddress;
import picocli.CommandLine.Option;

/**
 * Which side a two-process command runs: {@code -s/--server} or {@code -r/--remote HOST:PORT}.
 * Used as an exclusive, required {@code @ArgGroup} by every such command.
 */
public final class Role {
    @Option(names = {"-s", "--server"}, required = true, description = "Run the server.")
    public boolean server;

    @Option(names = {"-r", "--remote"}, required = true, paramLabel = "HOST:PORT",
            converter = SocketAddressConverter.class, description = "Run the client against HOST:PORT.")
    public InetSocketAddress remote;
}
