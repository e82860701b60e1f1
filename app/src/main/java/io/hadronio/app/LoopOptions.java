package io.hadronio.app;

import java.time.Duration;
import java.util.List;
import picocli.CommandLine.Option;

/**
 * The client options the application benchmarks share ({@code grpc|jetty benchmark -r},
 * {@code jgroups benchmark}): warm-up and measured seconds of each loop, and which loops run
 * ({@link CallLoop#concurrent} first, then {@link CallLoop#sequential}, in one JVM and on the
 * same connections).
 */
public final class LoopOptions {
    /** The loops a client can run. */
    public enum Mode {
        /** several calls in flight through the library's asynchronous API */
        concurrent,
        /** one call at a time through the library's blocking API */
        sequential
    }

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "3",
            description = "Unmeasured seconds before each measured loop (default: ${DEFAULT-VALUE}).")
    double warmupSeconds;

    @Option(names = {"-d", "--duration"}, paramLabel = "SECONDS", defaultValue = "5",
            description = "Measured seconds of each loop (default: ${DEFAULT-VALUE}).")
    double durationSeconds;

    @Option(names = "--modes", split = ",", defaultValue = "concurrent,sequential",
            description = "Loops to run, in this order: concurrent (--in-flight calls outstanding), sequential "
                    + "(one at a time, blocking API) (default: ${DEFAULT-VALUE}).")
    List<Mode> modes;

    public Duration warmup() {
        return seconds(warmupSeconds);
    }

    public Duration duration() {
        return seconds(durationSeconds);
    }

    public List<Mode> modes() {
        return modes;
    }

    /** Throws when a value makes no sense (negative warm-up, no measured time, no loop). */
    public void validate(picocli.CommandLine commandLine) {
        if (warmupSeconds < 0 || durationSeconds <= 0 || modes.isEmpty()) {
            throw new picocli.CommandLine.ParameterException(commandLine,
                    "--warmup must be >= 0, --duration > 0, --modes not empty");
        }
    }

    private static Duration seconds(double s) {
        return Duration.ofNanos((long) (s * 1e9));
    }
}
