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
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * The {@code hadronio} command. Each area is a subcommand ({@code ucx} now;
 * {@code blocking}, {@code netty}, ... are added to {@code subcommands} as they come),
 * so this class only wires them together.
 */
@Command(name = "hadronio",
        mixinStandardHelpOptions = true,
        versionProvider = HadronioCommand.Version.class,
        description = "Demos and benchmarks for hadroNIO, a java.nio SelectorProvider over UCX.",
        subcommands = {UcxCommand.class, BlockingCommand.class, NonBlockingCommand.class, NettyCommand.class, Nio2Command.class,
            GrpcCommand.class, JettyCommand.class, TomcatCommand.class, JGroupsCommand.class, KafkaCommand.class, LoadCommand.class, PatternsCommand.class,
            EvaluateCommand.class,
            MachineCommand.class, ProbeCommand.class, DoctorCommand.class, SsCommand.class,
            CommandLine.HelpCommand.class})
public final class HadronioCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand");
    }

    /** The command line with every subcommand, for {@link #main} and for tests. */
    public static CommandLine commandLine() {
        return new CommandLine(new HadronioCommand());
    }

    public static void main(String[] args) {
        ProcessResources.reportAtExitIfAsked();
        System.exit(commandLine().execute(args));
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
