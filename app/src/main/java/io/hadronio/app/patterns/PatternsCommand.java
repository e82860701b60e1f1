package io.hadronio.app.patterns;

import io.hadronio.app.LatencySummary;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.SocketAddressConverter;
import io.hadronio.app.Transports;
import io.hadronio.app.load.SelectorEchoServer;
import java.net.InetSocketAddress;
import java.nio.file.Path;
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
 * {@code hadronio patterns}: the shapes NIO frameworks and brokers give their I/O, as plain
 * NIO programs (issue 39): a request handed to an I/O thread and its answer handed back
 * ({@link HandoffBenchmark}), bulk writes queued by an application thread
 * ({@link BulkBenchmark}), one selector wakeup ({@link WakeupBenchmark}), a file sent with
 * {@code transferTo} or stored with {@code transferFrom} ({@link FileTransferServer}), and
 * short-lived connections one after another ({@link ConnectionsBenchmark}).
 * DISABLE_HADRONIO=true runs it on the JDK's provider. Each client prints one {@code RESULT}
 * line per measurement.
 */
@Command(name = "patterns", mixinStandardHelpOptions = true,
        description = {"Framework and broker I/O shapes as plain NIO programs, one RESULT line per measurement.",
            "handoff|bulk|connections: server -s --pattern echo (or dispatch: through an application thread), "
                + "client -r HOST:PORT --pattern handoff|bulk|connections.",
            "fetch|upload: server -s --pattern file --file PATH --bytes N, client -r HOST:PORT --pattern fetch|upload.",
            "wakeup: one JVM, no server: --pattern wakeup."})
public final class PatternsCommand implements Callable<Integer> {
    /** What a JVM of this command does. */
    enum Pattern {
        /** server: echo on one selector thread (for handoff and bulk) */
        echo,
        /** server: echo through an application thread that the I/O thread hands each request to (for handoff) */
        dispatch,
        /** server: the file-transfer server (for fetch and upload) */
        file,
        /** client: 8-byte requests from an application thread through the I/O thread */
        handoff,
        /** client: bulk writes queued by an application thread, echoed */
        bulk,
        /** client: connections opened, used for --requests round trips and closed, one after another */
        connections,
        /** client: FileChannel.transferTo on the server into the connection, counted here */
        fetch,
        /** client: sends bytes that the server stores with FileChannel.transferFrom */
        upload,
        /** alone: wakeup() to select() returning */
        wakeup
    }

    @Spec
    CommandSpec spec;

    @ArgGroup(exclusive = true, multiplicity = "0..1")
    Role role;

    @Option(names = "--pattern", required = true,
            description = "echo|dispatch|file (server), handoff|bulk|fetch|upload (client), wakeup (alone).")
    Pattern pattern;

    @Option(names = {"-a", "--address"}, paramLabel = "HOST:PORT", converter = SocketAddressConverter.class,
            defaultValue = "0.0.0.0:2997", description = "Server: where to listen (default: ${DEFAULT-VALUE}).")
    InetSocketAddress address;

    @Option(names = "--warmup", paramLabel = "SECONDS", defaultValue = "5",
            description = "handoff, bulk, connections, wakeup: unmeasured seconds first (default: ${DEFAULT-VALUE}).")
    double warmup;

    @Option(names = {"-d", "--duration"}, paramLabel = "SECONDS", defaultValue = "5",
            description = "handoff, connections: measured seconds; wakeup: measured seconds of each case (default: ${DEFAULT-VALUE}).")
    double duration;

    @Option(names = "--requests", defaultValue = "100",
            description = "connections: blocking 64-byte round trips per connection (default: ${DEFAULT-VALUE}).")
    int requests;

    @Option(names = "--sessions", defaultValue = "4", description = "bulk: connections (default: ${DEFAULT-VALUE}).")
    int sessions;

    @Option(names = "--bytes", defaultValue = "134217728",
            description = "bulk: bytes per session and pass; file server: the file's size; upload: bytes per upload "
                    + "(default: ${DEFAULT-VALUE}).")
    long bytes;

    @Option(names = "--chunk", defaultValue = "65536", description = "bulk: bytes per write (default: ${DEFAULT-VALUE}).")
    int chunk;

    @Option(names = "--passes", defaultValue = "3",
            description = "bulk: measured passes; fetch, upload: measured transfers (default: ${DEFAULT-VALUE}).")
    int passes;

    @Option(names = "--warmup-passes", defaultValue = "2",
            description = "fetch, upload: unmeasured transfers first (default: ${DEFAULT-VALUE}).")
    int warmupPasses;

    @Option(names = "--file", defaultValue = "/dev/shm/hadronio-patterns.dat",
            description = "file server: the file served (written with --bytes bytes unless it has that size; uploads go "
                    + "to PATH.upload) (default: ${DEFAULT-VALUE}).")
    Path file;

    @Option(names = "--connections", defaultValue = "0", paramLabel = "N",
            description = "file server: exit after serving N connections, one at a time (default: ${DEFAULT-VALUE}, "
                    + "serve until stopped, each connection in a thread of its own).")
    int connections;

    @Option(names = "--delays", split = ",", defaultValue = "10,2000", paramLabel = "MICROS",
            description = "wakeup: how long after the selector entered select() another thread wakes it "
                    + "(default: ${DEFAULT-VALUE}).")
    List<Long> delays;

    @Override
    public Integer call() throws Exception {
        ProviderSelection.apply();
        boolean server = pattern == Pattern.echo || pattern == Pattern.dispatch || pattern == Pattern.file;
        boolean alone = pattern == Pattern.wakeup;
        if (alone != (role == null) || !alone && server != role.server) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--pattern " + pattern + " runs "
                    + (alone ? "without -s/-r" : server ? "with -s" : "with -r HOST:PORT"));
        }
        switch (pattern) {
            case echo -> new SelectorEchoServer().serve(address);
            case dispatch -> HandoffServer.serve(address);
            case file -> new FileTransferServer(file, bytes).serve(address, connections);
            case handoff -> handoff();
            case bulk -> bulk();
            case connections -> connections();
            case fetch -> transfer(FileTransferClient.fetch(role.remote, warmupPasses, passes));
            case upload -> transfer(FileTransferClient.upload(role.remote, bytes, warmupPasses, passes));
            case wakeup -> wakeup();
            default -> throw new IllegalStateException();
        }
        return 0;
    }

    private void handoff() throws Exception {
        HandoffBenchmark.Outcome o = HandoffBenchmark.run(role.remote, warmup, duration);
        LatencySummary l = o.latency();
        System.out.printf(Locale.ROOT, "handoff: %d round trips of 8 bytes, %s over %s (%s)%n", l.count(), l.describe(),
                o.transport(), Transports.provider());
        result("handoff", String.format(Locale.ROOT, "per_s=%.0f %s failures=%d transport=%s",
                l.count() / o.seconds(), l.resultFields(), o.failures(), o.transport()));
    }

    private void bulk() throws Exception {
        BulkBenchmark.Outcome o = BulkBenchmark.run(role.remote, sessions, bytes, chunk, warmup, passes);
        System.out.printf(Locale.ROOT, "bulk: %d sessions x %d bytes x %d passes in %d-byte writes, echoed: %.0f MB/s "
                + "over %s (%s)%n", sessions, bytes, passes, chunk, o.megabytesPerSecond(), o.transport(),
                Transports.provider());
        result("bulk", String.format(Locale.ROOT, "sessions=%d chunk=%d mb_per_s=%.1f failures=%d transport=%s",
                sessions, chunk, o.megabytesPerSecond(), o.failures(), o.transport()));
    }

    private void connections() throws Exception {
        if (requests < 1) {
            throw new CommandLine.ParameterException(spec.commandLine(), "--requests must be at least 1, not " + requests);
        }
        ConnectionsBenchmark.Outcome o = ConnectionsBenchmark.run(role.remote, requests, warmup, duration);
        System.out.printf(Locale.ROOT, "connections: %d of %d round trips of 64 bytes each, %.0f/s; round trip %s; "
                + "connection %s; ended on %s (%s)%n", o.connections(), requests, o.connections() / o.seconds(),
                o.roundTrips().describe(), o.lifetimes().describe(), o.transports(), Transports.provider());
        LatencySummary life = o.lifetimes();
        result("connections", String.format(Locale.ROOT,
                "requests=%d conn_per_s=%.1f per_s=%.0f %s life_p50_us=%.1f life_p99_us=%.1f failures=%d transport=%s",
                requests, o.connections() / o.seconds(), o.roundTrips().count() / o.seconds(), o.roundTrips().resultFields(),
                life.p50Us(), life.p99Us(), o.failures(), o.transports()));
    }

    private void transfer(FileTransferClient.Outcome o) {
        String name = pattern.name();
        System.out.printf(Locale.ROOT, "%s: %d transfers of %d bytes: %.0f MB/s over %s (%s)%n", name, o.transfers(),
                o.bytes() / o.transfers(), o.megabytesPerSecond(), o.transport(), Transports.provider());
        result(name, String.format(Locale.ROOT, "bytes=%d mb_per_s=%.1f failures=%d transport=%s",
                o.bytes() / o.transfers(), o.megabytesPerSecond(), o.failures(), o.transport()));
    }

    private void wakeup() throws Exception {
        try (WakeupBenchmark b = new WakeupBenchmark()) {
            b.self(warmup);
            wakeupResult("self", 0, b.self(duration));
            for (long d : delays) {
                b.other(d, warmup / 2);
                wakeupResult("other", d, b.other(d, duration));
            }
        }
    }

    private static void wakeupResult(String from, long delay, LatencySummary l) {
        System.out.printf(Locale.ROOT, "wakeup from %s%s: %d hops, %s (%s)%n", from,
                from.equals("self") ? "" : " " + delay + " us after select", l.count(), l.describe(), Transports.provider());
        result("wakeup", String.format(Locale.ROOT, "from=%s delay_us=%d hops=%d %s failures=0", from, delay, l.count(),
                l.resultFields()));
    }

    private static void result(String pattern, String fields) {
        System.out.printf(Locale.ROOT, "RESULT kind=patterns pattern=%s provider=%s %s%n", pattern, Transports.provider(),
                fields);
        System.out.flush();
    }
}
