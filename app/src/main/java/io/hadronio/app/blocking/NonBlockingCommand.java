package io.hadronio.app.blocking;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio nonblocking ...}: NIO programs on non-blocking channels and a
 * {@link java.nio.channels.Selector}, on whatever provider the JVM uses (hadroNIO by default,
 * the JDK's with {@code DISABLE_HADRONIO=true}). It shares its connection set-up with the
 * {@code blocking} commands, hence its package.
 */
@Command(name = "nonblocking",
        mixinStandardHelpOptions = true,
        description = "Non-blocking NIO (Selector) benchmarks (DISABLE_HADRONIO=true: same code on the JDK's provider).",
        subcommands = {SelectorBenchmark.class})
public final class NonBlockingCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
