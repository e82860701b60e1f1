package io.hadronio.app.grpc;

import io.hadronio.app.grpc.kvs.KvsCommand;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio grpc ...}: gRPC-java programs on gRPC's Netty transport over Netty's NIO
 * transport, unmodified. They run on hadroNIO by default and on the JDK's provider with
 * {@code DISABLE_HADRONIO=true} (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "grpc",
        mixinStandardHelpOptions = true,
        description = "gRPC-java (Netty transport, NIO) demos: echo, a key-value store with a YCSB benchmark, "
                + "and a unary-call benchmark (DISABLE_HADRONIO=true: same code on the JDK's provider).",
        subcommands = {GrpcEcho.class, KvsCommand.class, GrpcBenchmark.class})
public final class GrpcCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: echo, kvs or benchmark");
    }
}
