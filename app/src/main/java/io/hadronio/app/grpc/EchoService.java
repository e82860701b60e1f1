package io.hadronio.app.grpc;

import io.grpc.MethodDescriptor;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ServerCalls;

/**
 * The echo service, {@code hadronio.Echo/Say(string) returns (string)}, defined by hand (no
 * protoc): a unary call whose answer is its request.
 */
public final class EchoService {
    public static final String NAME = "hadronio.Echo";
    public static final MethodDescriptor<String, String> SAY = MethodDescriptor.<String, String>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName(MethodDescriptor.generateFullMethodName(NAME, "Say"))
            .setRequestMarshaller(Marshallers.UTF8)
            .setResponseMarshaller(Marshallers.UTF8)
            .build();

    private EchoService() {
    }

    /** The server side; {@code log} sees each line before it is echoed. */
    public static ServerServiceDefinition definition(java.util.function.Consumer<String> log) {
        return ServerServiceDefinition.builder(NAME)
                .addMethod(SAY, ServerCalls.asyncUnaryCall((line, reply) -> {
                    log.accept(line);
                    reply.onNext(line);
                    reply.onCompleted();
                }))
                .build();
    }
}
