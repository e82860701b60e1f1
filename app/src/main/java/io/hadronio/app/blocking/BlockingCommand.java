package io.hadronio.app.blocking;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio blocking ...}: plain blocking NIO programs ({@code SocketChannel},
 * {@code ServerSocketChannel}) that run on whatever provider the JVM uses - hadroNIO by
 * default, the JDK's with {@code DISABLE_HADRONIO=true}.
 */
@Command(name = "blocking",
        mixinStandardHelpOptions = true,
        description = "Blocking NIO demos and benchmarks (DISABLE_HADRONIO=true: same code on the JDK's provider).",
        subcommands = {BlockingCounter.class, BlockingBenchmark.class})
public final class BlockingCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: counter or benchmark");
    }
}
