package io.hadronio.app.grpc;

import io.grpc.CallOptions;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.grpc.stub.StreamObserver;
import io.hadronio.app.CallLoop;
import io.hadronio.app.LoopOptions;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.Transports;
import io.hadronio.app.netty.NettySupport;
import io.netty.channel.Channel;
import java.net.InetSocketAddress;
import java.nio.channels.NetworkChannel;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio grpc benchmark}: unary calls of {@code --size} bytes answered with the same
 * bytes, over one gRPC channel (one HTTP/2 connection). The client first keeps
 * {@code --in-flight} calls outstanding through gRPC's asynchronous stub API
 * ({@link ClientCalls#asyncUnaryCall}, a new call whenever one is answered), then makes one
 * call at a time through the blocking stub API ({@link ClientCalls#blockingUnaryCall}), as
 * gRPC users do; it prints a {@code RESULT} line per loop with the path its connection took.
 * The server answers until it is stopped.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"gRPC unary calls/s with calls in flight (async stub) and one at a time (blocking stub), "
                + "with latency; the server (-s) answers each call with its request.",
            "DISABLE_HADRONIO=true: on the JDK's provider."})
public final class GrpcBenchmark implements Callable<Integer> {
    static final MethodDescriptor<byte[], byte[]> CALL = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName("hadronio.Bench", "Call"))
            .setRequestMarshaller(Marshallers.BYTES)
            .setResponseMarshaller(Marshallers.BYTES)
            .build();

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Spec
    CommandSpec spec;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "127.0.0.1:0", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-t", "--threads"}, defaultValue = "1",
            description = "Netty event-loop threads of either side (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = {"-l", "--size"}, defaultValue = "64", description = "Client: bytes per request and answer "
            + "(default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"-i", "--in-flight"}, defaultValue = "32",
            description = "Client: calls outstanding in the concurrent loop (default: ${DEFAULT-VALUE}).")
    int inFlight;

    @Mixin
    LoopOptions loops;

    @Override
    public Integer call() throws Exception {
        if (threads < 1 || size < 0 || inFlight < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--threads and --in-flight must be >= 1, --size >= 0");
        }
        loops.validate(spec.commandLine());
        ProviderSelection.apply();
        try (GrpcTransport transport = new GrpcTransport(threads)) {
            return role.server ? serve(transport) : client(transport);
        }
    }

    /** The service: every call answered with its request. */
    static ServerServiceDefinition service() {
        return ServerServiceDefinition.builder("hadronio.Bench")
                .addMethod(CALL, ServerCalls.asyncUnaryCall((request, reply) -> {
                    reply.onNext(request);
                    reply.onCompleted();
                }))
                .build();
    }

    private int serve(GrpcTransport transport) throws Exception {
        Server server = transport.serve(address, service());
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().getFirst();
        System.out.println("listening on " + bound + " (provider " + GrpcTransport.providerClass() + ")");
        System.out.flush();
        server.awaitTermination();
        return 0;
    }

    private int client(GrpcTransport transport) throws Exception {
        List<Channel> connections = new CopyOnWriteArrayList<>();
        ManagedChannel channel = transport.channel(role.remote, connections);
        byte[] request = new byte[size];
        Arrays.fill(request, (byte) 'g');
        long failures = 0;
        try {
            System.out.println("gRPC unary calls of " + size + " B to " + role.remote + " (" + Transports.provider() + ")");
            for (LoopOptions.Mode mode : loops.modes()) {
                CallLoop.Outcome outcome = switch (mode) {
                    case concurrent -> CallLoop.concurrent(done -> ClientCalls.asyncUnaryCall(
                            channel.newCall(CALL, CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS)), request,
                            new StreamObserver<>() {
                                private boolean ok;

                                @Override
                                public void onNext(byte[] answer) {
                                    ok = answer.length == size;
                                }

                                @Override
                                public void onError(Throwable t) {
                                    done.complete(false);
                                }

                                @Override
                                public void onCompleted() {
                                    done.complete(ok);
                                }
                            }), inFlight, loops.warmup(), loops.duration());
                    case sequential -> CallLoop.sequential(() -> ClientCalls.blockingUnaryCall(channel, CALL,
                            CallOptions.DEFAULT.withDeadlineAfter(30, TimeUnit.SECONDS), request).length == size,
                            loops.warmup(), loops.duration());
                };
                failures += outcome.failures();
                System.out.println(mode + ": " + outcome.describe());
                System.out.println("RESULT app=grpc mode=" + mode + " provider=" + Transports.provider() + " size=" + size
                        + " " + outcome.resultFields() + " transport=" + paths(connections));
                System.out.flush();
            }
        } finally {
            channel.shutdown().awaitTermination(5, TimeUnit.SECONDS);
        }
        return failures == 0 ? 0 : 1;
    }

    /** The paths of the client's open connections. */
    private static String paths(List<Channel> connections) {
        return Transports.summary(connections.stream().filter(Channel::isOpen)
                .map(c -> NettySupport.javaChannel(c) instanceof NetworkChannel n ? Transports.path(n) : "unknown")
                .toList());
    }
}
