package io.hadronio.app.nio2;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio nio2 ...}: programs on NIO.2's asynchronous channels and
 * {@link java.nio.channels.CompletionHandler}s, on whatever provider the JVM uses (hadroNIO's
 * {@code AsynchronousChannelProvider} by default, the JDK's with {@code DISABLE_HADRONIO=true}).
 */
@Command(name = "nio2",
        mixinStandardHelpOptions = true,
        description = "NIO.2 (AsynchronousSocketChannel, CompletionHandler) benchmarks (DISABLE_HADRONIO=true: same code "
                + "on the JDK's provider).",
        subcommands = {Nio2Benchmark.class})
public final class Nio2Command implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
