package io.hadronio.app.jetty;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio jetty ...}: an unmodified Jetty 12 server (its NIO {@code ServerConnector})
 * and Jetty's {@code HttpClient}, HTTP/1.1. They run on hadroNIO by default and on the JDK's
 * provider with {@code DISABLE_HADRONIO=true} (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "jetty",
        mixinStandardHelpOptions = true,
        description = "Jetty 12 (server and HttpClient, HTTP/1.1) benchmark (DISABLE_HADRONIO=true: same code on the "
                + "JDK's provider).",
        subcommands = JettyBenchmark.class)
public final class JettyCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
