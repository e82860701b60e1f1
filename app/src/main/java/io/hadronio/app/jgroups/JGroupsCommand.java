package io.hadronio.app.jgroups;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio jgroups ...}: members of an unmodified JGroups cluster on TCP_NIO2 (its NIO
 * transport). They run on hadroNIO by default and on the JDK's provider with
 * {@code DISABLE_HADRONIO=true} (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "jgroups",
        mixinStandardHelpOptions = true,
        description = "JGroups (TCP_NIO2) benchmark, one member per JVM (DISABLE_HADRONIO=true: same code on the "
                + "JDK's provider).",
        subcommands = JGroupsBenchmark.class)
public final class JGroupsCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
