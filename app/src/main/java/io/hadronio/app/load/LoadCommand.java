package io.hadronio.app.load;

import io.hadronio.app.MeasurementWindow;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.netty.NettyEchoServer;
import java.net.InetSocketAddress;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio load}: many connections at a fixed offered rate against an echo server of
 * one of three models (blocking thread per connection, one Selector, Netty); the client
 * ({@link LoadClient}, one Selector) reports the response-time distribution and the rate it
 * achieved. DISABLE_HADRONIO=true runs both on the JDK's provider.
 */
@Command(name = "load", mixinStandardHelpOptions = true,
        description = {"Load: N connections each sending requests at a fixed rate to an echo server; response times.",
            "Server: -s --mode blocking|nonblocking|netty|nio2. Client: -r HOST:PORT -c N --rate R -l BYTES."})
public final class LoadCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2998", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = "--mode", defaultValue = "nonblocking",
            description = "Server model: blocking (thread per connection), nonblocking (one Selector), netty, "
                    + "nio2 (asynchronous channels of one group thread) (default: ${DEFAULT-VALUE}); the client "
                    + "names it in its RESULT line.")
    String mode;

    @Option(names = {"-c", "--connections"}, defaultValue = "10", description = "Connections (default: ${DEFAULT-VALUE}).")
    int connections;

    @Option(names = "--rate", split = ",", defaultValue = "10000", paramLabel = "PER_SECOND",
            description = "Requests per second, all connections together; several (comma-separated, increasing) are run "
                    + "one after another on the same connections, each with its warm-up, window and RESULT line "
                    + "(default: ${DEFAULT-VALUE}).")
    List<Double> rates;

    @Option(names = "--stop-below", defaultValue = "0", paramLabel = "SHARE",
            description = "Skip the remaining --rate values once a rate's answered requests fall below this share of "
                    + "the offered ones: the server is saturated (default: ${DEFAULT-VALUE}, run every rate).")
    double stopBelow;

    @Option(names = {"-l", "--length"}, defaultValue = "64", description = "Request (and response) bytes (default: ${DEFAULT-VALUE}).")
    int length;

    @Option(names = "--duration", defaultValue = "2", description = "Measured seconds (default: ${DEFAULT-VALUE}).")
    double duration;

    @Option(names = "--warmup", defaultValue = "1", description = "Seconds before measuring (default: ${DEFAULT-VALUE}).")
    double warmup;

    @Override
    public Integer call() throws Exception {
        if (role.server && "nio2".equals(mode)) {
            ProviderSelection.applyAsynchronous();
        } else {
            ProviderSelection.apply();
        }
        if (role.server) {
            switch (mode) {
                case "blocking" -> new BlockingEchoServer().serve(address);
                case "nonblocking" -> new SelectorEchoServer().serve(address);
                case "netty" -> NettyEchoServer.serve(address);
                case "nio2" -> new AsynchronousEchoServer().serve(address);
                default -> throw new CommandLine.ParameterException(spec.commandLine(), "unknown --mode " + mode);
            }
            return 0;
        }
        if (connections < 1 || rates.isEmpty() || rates.stream().anyMatch(r -> r <= 0) || length < 1 || duration <= 0) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--connections, --rate, --length and "
                    + "--duration must be > 0");
        }
        try (LoadClient client = LoadClient.connect(role.remote, connections, length)) {
            for (double rate : rates) {
                MeasurementWindow.next();
                LoadClient.Outcome o = client.run(rate, warmup, duration);
                double achieved = report(o, rate);
                if (achieved < stopBelow * rate) {
                    System.out.printf(Locale.ROOT, "saturated at %.0f/s: higher rates skipped%n", rate);
                    break;
                }
            }
        }
        return 0;
    }

    /** Prints one rate's lines; returns the answered rate. */
    private double report(LoadClient.Outcome o, double rate) {
        String provider = Boolean.parseBoolean(System.getenv("DISABLE_HADRONIO")) ? "jdk" : "hadronio";
        double achieved = o.completed() / o.seconds();
        // nothing answered in the window: the latency fields are NaN, which the evaluation reads as "none"
        String latency = o.latency() == null ? "avg_us=NaN p50_us=NaN p90_us=NaN p99_us=NaN p999_us=NaN"
                : o.latency().resultFields();
        System.out.printf(Locale.ROOT, "load %s, %d connections, %.0f/s offered, %.0f/s answered: %s over %s (%s)%n",
                mode, connections, rate, achieved, o.latency() == null ? "no answer" : o.latency().describe(),
                o.transport(), provider);
        System.out.printf(Locale.ROOT, "RESULT kind=load-%s provider=%s connections=%d length=%d offered_per_s=%.0f "
                + "achieved_per_s=%.0f messages=%d %s transports=%s paths=%s%n", mode, provider, connections, length, rate,
                achieved, o.completed(), latency, o.transport(), o.paths());
        System.out.flush();
        return achieved;
    }
}
