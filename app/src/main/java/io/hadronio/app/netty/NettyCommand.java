package io.hadronio.app.netty;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio netty ...}: Netty programs on Netty's NIO transport, unmodified. They
 * run on hadroNIO by default and on the JDK's provider with {@code DISABLE_HADRONIO=true}
 * (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "netty",
        mixinStandardHelpOptions = true,
        description = "Netty (NIO transport) demos and benchmarks (DISABLE_HADRONIO=true: same code on the JDK's provider).",
        subcommands = {NettyHello.class, NettyEcho.class, NettyBenchmark.class})
public final class NettyCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: hello, echo or benchmark");
    }
}
