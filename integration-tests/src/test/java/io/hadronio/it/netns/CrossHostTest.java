package io.hadronio.it.netns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Two "hosts" - network namespaces joined by a veth pair, our own test hosts - with
 * hadroNIO on both and UCX restricted to tcp over the veth device: the same contract
 * as on one host (bytes written before close arrive, then end-of-stream; a killed peer
 * is noticed; many connects at once all succeed) across a real network path. Needs root
 * and iproute2 (CI runs as root).
 */
@Tag("slow")
@Timeout(120)
class CrossHostTest {
    private static final String NS_A = "hnio-a-" + ProcessHandle.current().pid();
    private static final String NS_B = "hnio-b-" + ProcessHandle.current().pid();
    private static final String VETH_A = "hva" + (ProcessHandle.current().pid() % 100000);
    private static final String VETH_B = "hvb" + (ProcessHandle.current().pid() % 100000);
    // addresses of our own namespaces, reachable only between them
    private static final String ADDR_A = "10.231.77.1";
    private static final String ADDR_B = "10.231.77.2";
    private static boolean created;

    @BeforeAll
    static void createHosts() throws Exception {
        boolean root = "0".equals(run(List.of("id", "-u")).trim());
        Assumptions.assumeTrue(root, "network namespaces need root (CI runs as root)");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip")),
                "iproute2 (ip) missing: apt-get install iproute2");
        sh("ip netns add " + NS_A);
        sh("ip netns add " + NS_B);
        created = true;
        sh("ip link add " + VETH_A + " type veth peer name " + VETH_B);
        sh("ip link set " + VETH_A + " netns " + NS_A);
        sh("ip link set " + VETH_B + " netns " + NS_B);
        sh("ip -n " + NS_A + " addr add " + ADDR_A + "/24 dev " + VETH_A);
        sh("ip -n " + NS_B + " addr add " + ADDR_B + "/24 dev " + VETH_B);
        for (String[] nsDev : new String[][] {{NS_A, VETH_A}, {NS_B, VETH_B}}) {
            sh("ip -n " + nsDev[0] + " link set lo up");
            sh("ip -n " + nsDev[0] + " link set " + nsDev[1] + " up");
        }
    }

    @AfterAll
    static void removeHosts() throws Exception {
        if (created) {
            run(List.of("ip", "netns", "del", NS_A));
            run(List.of("ip", "netns", "del", NS_B));
        }
    }

    private static void sh(String command) throws Exception {
        run(List.of(command.split(" ")));
    }

    private static String run(List<String> command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(command + " failed: " + out);
        }
        return out;
    }

    /** A JVM running {@link NetnsPeer} inside a namespace, with UCX on tcp over its veth. */
    private static final class NsJvm implements AutoCloseable {
        final Process process;
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final StringBuffer output = new StringBuffer();

        NsJvm(String ns, String device, String... args) throws IOException {
            this(ns, device, false, args);
        }

        /** {@code kernelTcp}: the default, where a connection UCX would carry over tcp only takes the kernel's TCP. */
        NsJvm(String ns, String device, boolean kernelTcp, String... args) throws IOException {
            this(ns, device, kernelTcp, List.of(), args);
        }

        /** {@code properties}: more {@code -D} flags for the JVM. */
        NsJvm(String ns, String device, boolean kernelTcp, List<String> properties, String... args)
                throws IOException {
            String java = ProcessHandle.current().info().command().orElseThrow();
            List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns, java,
                    "--enable-native-access=ALL-UNNAMED", "-ea", "-Xmx256m", "-XX:TieredStopAtLevel=1",
                    "-XX:+UseSerialGC",
                    "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider",
                    "-Dhadronio.ucx.TLS=tcp", "-Dhadronio.ucx.NET_DEVICES=" + device,
                    // the other namespace is another host: accelerated by configuration only
                    "-Dhadronio.remote.networks=10.231.77.0/24",
                    "-Dhadronio.kernel.tcp=" + kernelTcp));
            command.addAll(properties);
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), NetnsPeer.class.getName()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            Map<String, String> env = pb.environment();
            env.put("UCX_TLS", "tcp");
            env.put("UCX_NET_DEVICES", device);
            process = pb.start();
            Thread pump = new Thread(() -> {
                try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                        StandardCharsets.UTF_8))) {
                    String line;
                    while ((line = in.readLine()) != null) {
                        output.append(line).append('\n');
                        lines.add(line);
                    }
                } catch (IOException e) {
                    // process gone
                }
            });
            pump.setDaemon(true);
            pump.start();
        }

        String expect(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
                if (line != null && line.startsWith("ERROR")) {
                    throw new AssertionError("peer failed:\n" + output);
                }
            }
            throw new AssertionError("no '" + prefix + "' line; output:\n" + output);
        }

        @Override
        public void close() {
            process.destroyForcibly();
        }
    }

    @Test
    void shouldDeliverEverythingWrittenBeforeCloseAcrossTheVethPath() throws Exception {
        try (NsJvm server = new NsJvm(NS_A, VETH_A, "server", ADDR_A)) {
            int port = Integer.parseInt(server.expect("PORT "));
            try (NsJvm client = new NsJvm(NS_B, VETH_B, "client", ADDR_A, String.valueOf(port),
                    String.valueOf(20L * 1024 * 1024 + 11))) {
                String transports = client.expect("TRANSPORTS ");
                assertEquals("[tcp]", transports, "UCX must run on tcp over the veth pair");
                String sent = client.expect("SENT ");
                String received = server.expect("RECEIVED ");
                assertEquals(sent, received, "bytes and checksum written before close() must all arrive");
            }
        }
    }

    /**
     * By default a connection that UCX would carry over tcp only takes the kernel's TCP
     * connection: both sides go plain after the authenticated handshake, and every byte
     * written before close arrives.
     */
    @Test
    void shouldCarryTheBytesOverKernelTcpWhenUcxWouldOnlyUseTcp() throws Exception {
        try (NsJvm server = new NsJvm(NS_A, VETH_A, true, "server", ADDR_A)) {
            int port = Integer.parseInt(server.expect("PORT "));
            try (NsJvm client = new NsJvm(NS_B, VETH_B, true, "client", ADDR_A, String.valueOf(port),
                    String.valueOf(20L * 1024 * 1024 + 11))) {
                assertEquals("[]", client.expect("TRANSPORTS "), "no UCX lanes: the kernel's TCP carries the bytes");
                assertEquals("tcp", client.expect("TRANSPORT "));
                String sent = client.expect("SENT ");
                String received = server.expect("RECEIVED ");
                assertEquals(sent, received, "bytes and checksum written before close() must all arrive");
            }
        }
    }

    /**
     * A client host that opens more connections to one server at once than the server lets
     * hellos from one host wait for their proof (eight), as many as Jetty's HttpClient opens
     * per destination (64): every connect succeeds and every connection works; those over
     * the bound are plain TCP (the server answers their hello PLAIN), the others
     * accelerated. How many are over it depends on timing, so it is printed, not asserted
     * (20 to 48 of 64 in seven runs on 2 cores; when the server closed them instead, 48
     * connects failed). The server waits 5 s for a hello, not the default 200 ms
     * ({@code hadronio.remote.detect.timeout}): the client's control thread makes each
     * connection's UCX half before it sends that connection's hello, and 64 of them on a
     * loaded machine can take longer than 200 ms, after which the server rightly serves the
     * connection as plain TCP with the hello as data, which fails that client's connect.
     */
    @Test
    void shouldConnectEveryOneOfManyConnectsAtOnceFromOneHost() throws Exception {
        int n = 64;
        try (NsJvm server = new NsJvm(NS_A, VETH_A, false, List.of("-Dhadronio.remote.detect.timeout=5000"),
                "echo-server", ADDR_A, String.valueOf(n))) {
            int port = Integer.parseInt(server.expect("PORT "));
            try (NsJvm client = new NsJvm(NS_B, VETH_B, "many-clients", ADDR_A, String.valueOf(port),
                    String.valueOf(n))) {
                String[] counts = client.expect("CLIENTS ").split(" ");
                System.out.println("CrossHostTest: " + n + " connects at once from one host: " + counts[1]
                        + " plain TCP, " + counts[2] + " on UCX");
                assertEquals(String.valueOf(n), counts[0], "every connect succeeds and its connection echoes");
                assertEquals(n, Integer.parseInt(counts[1]) + Integer.parseInt(counts[2]));
                assertEquals(String.valueOf(n), server.expect("ECHOED "));
            }
        }
    }

    @Test
    void shouldEndABlockedReadWhenThePeerOnTheOtherHostIsKilled() throws Exception {
        try (NsJvm server = new NsJvm(NS_A, VETH_A, "server", ADDR_A)) {
            int port = Integer.parseInt(server.expect("PORT "));
            NsJvm client = new NsJvm(NS_B, VETH_B, "idle-client", ADDR_A, String.valueOf(port));
            try {
                client.expect("CONNECTED ");
                server.expect("ACCEPTED ");
                client.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
                String failure = server.expect("READ-FAILED ");
                assertTrue(failure.contains("reset") || failure.contains("Reset"), failure);
            } finally {
                client.close();
            }
        }
    }
}
