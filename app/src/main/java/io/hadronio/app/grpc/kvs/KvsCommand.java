package io.hadronio.app.grpc.kvs;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.StatusRuntimeException;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.grpc.GrpcTransport;
import io.hadronio.app.grpc.ycsb.KvsBenchmark;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio grpc kvs}: a key-value store served over gRPC ({@code -s}), and a client
 * ({@code -r HOST:PORT}) that runs the commands of stdin, one a line:
 * {@code insert KEY VALUE}, {@code update KEY VALUE}, {@code get KEY}, {@code delete KEY},
 * {@code scan KEY COUNT}. {@code kvs benchmark} drives the store with YCSB's workloads.
 */
@Command(name = "kvs", mixinStandardHelpOptions = true,
        description = {"gRPC key-value store: the server (-s), or a client (-r) running the commands of stdin:",
            "  insert KEY VALUE | update KEY VALUE | get KEY | delete KEY | scan KEY COUNT",
            "'kvs benchmark' runs YCSB workloads A-F against a server."},
        subcommands = KvsBenchmark.class)
public final class KvsCommand implements Callable<Integer> {
    // optional here so that 'kvs benchmark' needs neither; required when kvs itself runs
    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Role role;

    @Spec
    CommandSpec spec;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2996", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = {"-t", "--threads"}, defaultValue = "2",
            description = "Server: Netty event-loop threads (default: ${DEFAULT-VALUE}).")
    int threads;

    @Option(names = {"-q", "--quiet"}, description = "Server: do not print each call.")
    boolean quiet;

    @Override
    public Integer call() throws Exception {
        if (role == null) {
            throw new ParameterException(spec.commandLine(), "Missing required argument: -s or -r=HOST:PORT");
        }
        ProviderSelection.apply();
        try (GrpcTransport transport = new GrpcTransport(threads)) {
            return role.server ? serve(transport) : client(transport);
        }
    }

    private int serve(GrpcTransport transport) throws Exception {
        KvsStore store = new KvsStore();
        Server server = transport.serve(address, store.definition(quiet ? null : (method, request) -> {
            System.out.println(method.toLowerCase(java.util.Locale.ROOT) + ": " + request.key());
            System.out.flush();
        }));
        InetSocketAddress bound = (InetSocketAddress) server.getListenSockets().getFirst();
        System.out.println("listening on " + bound + " (provider " + GrpcTransport.providerClass() + ")");
        System.out.flush();
        server.awaitTermination();
        return 0;
    }

    private int client(GrpcTransport transport) throws Exception {
        ManagedChannel channel = transport.channel(role.remote);
        try {
            KvsClient kvs = new KvsClient(channel);
            System.out.println("connected to " + role.remote + " (" + GrpcTransport.provider()
                    + "); commands: insert KEY VALUE, update KEY VALUE, get KEY, delete KEY, scan KEY COUNT");
            System.out.flush();
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while ((line = stdin.readLine()) != null) {
                if (!line.isBlank()) {
                    try {
                        System.out.println(run(kvs, line.strip().split("\\s+", 3)));
                    } catch (StatusRuntimeException e) {
                        System.out.println("error: " + e.getStatus());
                        return 1;
                    }
                    System.out.flush();
                }
            }
            return 0;
        } finally {
            channel.shutdown().awaitTermination(5, TimeUnit.SECONDS);
        }
    }

    /** One command of stdin, and the line that answers it. */
    static String run(KvsClient kvs, String[] w) {
        String usage = "usage: insert KEY VALUE | update KEY VALUE | get KEY | delete KEY | scan KEY COUNT";
        if (w.length < 2) {
            return usage;
        }
        String key = w[1];
        return switch (w[0]) {
            case "insert" -> w.length < 3 ? usage : kvs.insert(key, bytes(w[2])) ? "inserted " + key : "replaced " + key;
            case "update" -> w.length < 3 ? usage : kvs.update(key, -1, bytes(w[2])) ? "updated " + key : "not found: " + key;
            case "get" -> {
                byte[] v = kvs.read(key);
                yield v == null ? "not found: " + key : "value: " + new String(v, StandardCharsets.UTF_8);
            }
            case "delete" -> kvs.delete(key) ? "deleted " + key : "not found: " + key;
            case "scan" -> {
                List<byte[]> values = kvs.scan(key, w.length < 3 ? 10 : Integer.parseInt(w[2]));
                yield "scan: " + values.stream().map(v -> new String(v, StandardCharsets.UTF_8)).toList();
            }
            default -> usage;
        };
    }

    private static byte[] bytes(String s) {
        return s.getBytes(StandardCharsets.UTF_8);
    }
}
