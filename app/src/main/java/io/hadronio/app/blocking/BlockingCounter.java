package io.hadronio.app.blocking;

import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Callable;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hadronio blocking counter}: the client sends a counter, the server adds one and
 * sends it back, and both print what they see - the smallest check that bytes flow.
 */
@Command(name = "counter", mixinStandardHelpOptions = true,
        description = "Client and server pass a counter back and forth, each adding one.")
final class BlockingCounter implements Callable<Integer> {

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-c", "--count"}, defaultValue = "10", description = "Round trips (default: ${DEFAULT-VALUE}).")
    int count;

    @Override
    public Integer call() throws Exception {
        io.hadronio.app.ProviderSelection.apply();
        try (SocketChannel channel = role.server ? Endpoints.acceptOne(address) : Endpoints.connect(role.remote)) {
            System.out.println("connected " + channel.getLocalAddress() + " <-> " + channel.getRemoteAddress()
                    + " over " + Endpoints.transport(channel));
            ByteBuffer buffer = ByteBuffer.allocateDirect(Long.BYTES);
            long value = 0;
            if (!role.server) {
                buffer.putLong(0, value);
                Endpoints.writeFully(channel, buffer);
            }
            for (int i = 0; i < count; i++) {
                buffer.clear();
                Endpoints.readFully(channel, buffer);
                value = buffer.getLong(0) + 1;
                System.out.println("counter: " + value);
                if (role.server || i + 1 < count) {
                    buffer.clear();
                    buffer.putLong(0, value);
                    Endpoints.writeFully(channel, buffer);
                }
            }
        }
        return 0;
    }
}
