package io.hadronio.app;

import io.hadronio.app.blocking.BlockingCommand;
import io.hadronio.app.blocking.NonBlockingCommand;
import io.hadronio.app.doctor.DoctorCommand;
import io.hadronio.app.evaluate.EvaluateCommand;
import io.hadronio.app.grpc.GrpcCommand;
import io.hadronio.app.jetty.JettyCommand;
import io.hadronio.app.jgroups.JGroupsCommand;
import io.hadronio.app.kafka.KafkaCommand;
import io.hadronio.app.load.LoadCommand;
import io.hadronio.app.machine.MachineCommand;
import io.hadronio.app.netty.NettyCommand;
import io.hadronio.app.nio2.Nio2Command;
import io.hadronio.app.patterns.PatternsCommand;
import io.hadronio.app.probe.ProbeCommand;
import io.hadronio.app.ss.SsCommand;
import io.hadronio.app.tomcat.TomcatCommand;
import io.hadronio.app.ucx.UcxCommand;
import io.hadronio.ucx.Ucx;
import java.util.Arrays;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code hadronio} command. Each area is a subcommand ({@code ucx}, {@code blocking},
 * {@code netty}, ..., listed in {@link #SUBCOMMANDS}), so this class only wires them together.
 */
@Command(name = "hadronio",
        mixinStandardHelpOptions = true,
        versionProvider = HadronioCommand.Version.class,
        description = "Demos and benchmarks for hadroNIO, a java.nio SelectorProvider over UCX.")
public final class HadronioCommand implements Runnable {
    /** Every subcommand, in the order the help lists them. */
    private static final List<Class<?>> SUBCOMMANDS = List.of(UcxCommand.class, BlockingCommand.class,
            NonBlockingCommand.class, NettyCommand.class, Nio2Command.class, GrpcCommand.class, JettyCommand.class,
            TomcatCommand.class, JGroupsCommand.class, KafkaCommand.class, LoadCommand.class, PatternsCommand.class,
            EvaluateCommand.class, MachineCommand.class, ProbeCommand.class, DoctorCommand.class, SsCommand.class,
            CommandLine.HelpCommand.class);

    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand");
    }

    /** The command line with every subcommand, for the help and for tests. */
    public static CommandLine commandLine() {
        CommandLine commandLine = new CommandLine(new HadronioCommand());
        for (Class<?> subcommand : SUBCOMMANDS) {
            commandLine.addSubcommand(subcommand);
        }
        return commandLine;
    }

    /**
     * The command line for {@code args}: with only the subcommand they start with, when they
     * start with one. Every benchmark JVM is a {@code hadronio} command, and building the model of
     * every subcommand cost each ~0.6 s of one core at its start against ~0.2 s for one (picocli
     * reflects on every option and interpolates ~3,400 strings; so many calls also had C2 compile
     * picocli's interpolator for ~1 s, on the benchmark's core, in its first seconds). The help,
     * an option or an unknown name get every subcommand, so that the help lists them all and a
     * typo gets its suggestions.
     */
    static CommandLine commandLine(String[] args) {
        Class<?> only = args.length == 0 ? null : named(args[0]);
        if (only == null || only == CommandLine.HelpCommand.class) {
            return commandLine();
        }
        CommandLine commandLine = new CommandLine(new HadronioCommand());
        commandLine.addSubcommand(only);
        return commandLine;
    }

    /** The subcommand called {@code name} (or by that alias), or null. */
    private static Class<?> named(String name) {
        for (Class<?> subcommand : SUBCOMMANDS) {
            Command command = subcommand.getAnnotation(Command.class);
            if (command.name().equals(name) || Arrays.asList(command.aliases()).contains(name)) {
                return subcommand;
            }
        }
        return null;
    }

    public static void main(String[] args) {
        ProcessResources.reportAtExitIfAsked();
        System.exit(commandLine(args).execute(args));
    }

    /** Version of the application, the JDK, and the UCX library it would use. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String own = HadronioCommand.class.getPackage().getImplementationVersion();
            String ucx = Ucx.isAvailable() ? "UCX " + Ucx.version() : "UCX unavailable: " + Ucx.unavailableReason().getMessage();
            return new String[] {
                "hadronio " + (own == null ? "(development build)" : own),
                "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")",
                ucx,
            };
        }
    }
}
