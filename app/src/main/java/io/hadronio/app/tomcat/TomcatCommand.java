package io.hadronio.app.tomcat;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio tomcat ...}: an unmodified embedded Tomcat 11 (its NIO.2 or NIO connector) and
 * Jetty's {@code HttpClient}, HTTP/1.1. They run on hadroNIO by default and on the JDK's
 * providers with {@code DISABLE_HADRONIO=true} (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "tomcat",
        mixinStandardHelpOptions = true,
        description = "Tomcat 11 (NIO.2 or NIO connector) with Jetty's HttpClient, HTTP/1.1 benchmark "
                + "(DISABLE_HADRONIO=true: same code on the JDK's providers).",
        subcommands = TomcatBenchmark.class)
public final class TomcatCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
