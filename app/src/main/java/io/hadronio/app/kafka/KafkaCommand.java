package io.hadronio.app.kafka;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio kafka ...}: an unmodified Kafka 4 node (KRaft, broker and controller in one
 * JVM) and Kafka's own producer and consumer. They run on hadroNIO by default and on the JDK's
 * provider with {@code DISABLE_HADRONIO=true} (see {@link io.hadronio.app.ProviderSelection}).
 */
@Command(name = "kafka",
        mixinStandardHelpOptions = true,
        description = "Kafka 4 (KRaft node) with Kafka's producer and consumer: produce and fetch benchmark "
                + "(DISABLE_HADRONIO=true: same code on the JDK's provider).",
        subcommands = KafkaBenchmark.class)
public final class KafkaCommand implements Runnable {
    @Spec
    private CommandSpec spec;

    @Override
    public void run() {
        throw new CommandLine.ParameterException(spec.commandLine(), "Missing subcommand: benchmark");
    }
}
