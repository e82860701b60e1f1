package io.hadronio.app.jetty;

import io.hadronio.app.SocketAddressConverter;
import java.net.InetSocketAddress;
import picocli.CommandLine;
import picocli.CommandLine.Option;

/** The options every HTTP benchmark has ({@code jetty benchmark}, {@code tomcat benchmark}): where the server listens, the body's size, the client's requests in flight. */
public final class HttpBenchmarkOptions {
    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "127.0.0.1:0", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-l", "--size"}, defaultValue = "64",
            description = "Bytes of every response body (the client checks each answer's length) (default: ${DEFAULT-VALUE}).")
    int size;

    @Option(names = {"-i", "--in-flight"}, defaultValue = "16",
            description = "Client: requests outstanding in the concurrent loop (default: ${DEFAULT-VALUE}).")
    int inFlight;

    /** Where the server listens. */
    public InetSocketAddress address() {
        return address;
    }

    /** Bytes of every response body. */
    public int size() {
        return size;
    }

    /** The client's requests outstanding in its concurrent loop. */
    public int inFlight() {
        return inFlight;
    }

    /** Fails the command line when the size is negative or nothing is in flight. */
    public void validate(CommandLine commandLine) {
        if (size < 0 || inFlight < 1) {
            throw new CommandLine.ParameterException(commandLine, "--in-flight must be >= 1, --size >= 0");
        }
    }
}
