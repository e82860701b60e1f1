package io.hadronio.app.ucx;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/** {@code hadronio ucx}: the UCX binding on its own, without the NIO provider. */
@Command(name = "ucx",
        mixinStandardHelpOptions = true,
        description = "Exercise the UCX binding itself (no NIO provider involved).",
        subcommands = {UcxBenchmarkCommand.class})
public final class UcxCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand");
    }
}
