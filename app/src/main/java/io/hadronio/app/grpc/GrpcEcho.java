package io.hadronio.app.grpc;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.ClientCalls;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code hadronio grpc echo}: the client sends each line of stdin as a unary gRPC call and
 * prints the answer; the server answers every call with its request until it is stopped.
 */
@Command(name = "echo", mixinStandardHelpOptions = true,
        description = "gRPC line echo: the client sends the lines of stdin as unary calls and prints each answer.")
final class GrpcEcho implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2997", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Override
    public Integer call() throws Exception {
        ProviderSelection.apply();
        try (GrpcTransport transport = new GrpcTransport(1)) {
            return role.server ? serve(transport) : client(transport);
        }
    }

    private int serve(GrpcTransport transport) throws Exception {
        Server server = transport.serve(address, EchoService.definition(line -> {
            System.out.println("echoing: " + line);
            System.out.flush();
        }));
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().getFirst();
        System.out.println("listening on " + bound + " (provider " + GrpcTransport.providerClass() + ")");
        System.out.flush();
        server.awaitTermination();
        return 0;
    }

    private int client(GrpcTransport transport) throws Exception {
        ManagedChannel channel = transport.channel(role.remote);
        try {
            System.out.println("calling " + role.remote + " (" + GrpcTransport.provider()
                    + "); type lines, end with EOF (Ctrl-D)");
            System.out.flush();
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = stdin.readLine()) != null) {
                try {
                    String echo = ClientCalls.blockingUnaryCall(channel, EchoService.SAY,
                            CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), line);
                    System.out.println("echo: " + echo + " (over " + GrpcTransport.transport() + ")");
                } catch (StatusRuntimeException e) {
                    System.out.println("no echo: " + e.getStatus());
                    return 1;
                }
                System.out.flush();
            }
            return 0;
        } finally {
            channel.shutdown().awaitTermination(5, TimeUnit.SECONDS);
        }
    }
}
