package io.hadronio.it.netns;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Hostile input against the TCP handshake of a live accelerated server (issue 9, "Bad
 * input"): 100,000 connections by default ({@code -Dit.fuzz.handshake.inputs=N} for
 * fewer), each with handshake bytes that are garbage, truncated, oversized,
 * bit-flipped, of an unknown version or kind, with lying lengths, a hello followed by
 * garbage or a FINISH without the key, a real client's captured handshake replayed, the
 * server's own hello reflected, delivered one byte at a time, or nothing at all
 * ({@link HandshakeFuzzer} has the list and the oracle).
 *
 * <p>The server's handshake runs only for clients that registered at the local
 * rendezvous (which needs the key) or that come from {@code hadronio.remote.networks}:
 * on one host a stranger is plain TCP without any handshake, whatever
 * {@code remote.networks} says (a local address always goes to the rendezvous). So the
 * attacker sits on another "host": four network namespaces joined by a bridge,
 * <pre>
 *   server (A, 10.231.78.1)   the live hadroNIO echo server, remote.networks = 10.231.78.0/24
 *   attacker (F, .2)          {@link HandshakeFuzzer} on the JDK's provider, no key
 *   real client (B, .3)       hadroNIO, the same key: accelerated (UCX on tcp over the bridge)
 * </pre>
 * and every attacking connection reaches the server's handshake parser ({@code DETECT}).
 * A second attacker runs next to the server in A with the key: it registers each
 * connection at the rendezvous, so the server expects its handshake ({@code EXPECT}),
 * and sends the same inputs ({@code -Dit.fuzz.handshake.keyed.inputs}, a fifth as many
 * by default), plus FINISHes with the right MAC for a hello of another UCX profile.
 * Checked:
 * <ul>
 * <li>every input is refused or served as plain TCP exactly as the protocol says, and
 *     a plain one with every byte intact (the echo is compared, for every input);</li>
 * <li>a hello from the stranger's host is answered PLAIN at once (and its connection
 *     is then plain TCP, bytes intact) only while enough of its other hellos may wait for
 *     their proof (at most eight may), and such answers happen; the registered client's
 *     hellos never get one;</li>
 * <li>the server logs at most one line per input (a WARNING per refused handshake and
 *     nothing else: a hello over the bound is not refused, and is not logged above DEBUG);</li>
 * <li>a real client before, five times during and after the run is accelerated
 *     ({@code ucx:}) and echoes correctly, and no attacking connection ever is;</li>
 * <li>the server's file descriptors and threads return to where they were after a
 *     warm-up; its resident memory grows by less than {@link #RSS_GROWTH_LIMIT_KIB} KiB, and
 *     its heap after a full GC and its direct buffers by less than a few MiB.</li>
 * </ul>
 * Needs root and iproute2, as {@link CrossHostTest} (CI runs as root); skipped otherwise.
 */
@Tag("slow")
@Timeout(600)
class HandshakeFuzzTest {
    private static final int INPUTS = Integer.getInteger("it.fuzz.handshake.inputs", 100_000);
    // inputs run before the baseline is taken: classes loaded, code compiled, lazy resources made
    private static final int WARM_UP = Math.max(200, Math.min(3_000, INPUTS / 10));
    // and as many again from a local attacker that holds the key, a fifth by default
    private static final int KEYED_INPUTS = Integer.getInteger("it.fuzz.handshake.keyed.inputs", INPUTS / 5);
    private static final int KEYED_WARM_UP = Math.max(200, Math.min(1_000, KEYED_INPUTS / 10));
    private static final long SEED = Long.getLong("it.fuzz.handshake.seed", 20_261_123L);
    // attacking connections in flight at once
    private static final int THREADS = 12;

    /*
     * Tolerances, after every connection has ended and the server's application has closed
     * its channels. File descriptors: none; every socket, pipe and eventfd the handshakes
     * made must be gone. Threads: none either (HotSpot's compiler threads are fixed with
     * -XX:-UseDynamicNumberOfCompilerThreads). Resident memory can only be bounded, not
     * compared: the heap is fixed and touched from the start (-Xms = -Xmx, AlwaysPreTouch),
     * so what grows is native memory (malloc arenas, code, metaspace) that HotSpot and glibc
     * keep once used. Runs here grew it by 0.3-0.9 MiB; 16 MiB is what a leak of 140 bytes per
     * input exceeds at the default 120,000 inputs (the issue's report was 90 -> 329 MiB); the
     * figures are printed. The heap is
     * compared after a full GC: what the server still holds on to. 4 MiB is 35 bytes per input
     * at 120,000; anything kept per connection (a channel, a buffer, a handshake's state) is
     * more than that. Direct buffers: 1 MiB, less than four connections' receive slices.
     */
    private static final int FD_TOLERANCE = 0;
    private static final int THREAD_TOLERANCE = 0;
    static final long RSS_GROWTH_LIMIT_KIB = 16 * 1024;
    private static final long HEAP_GROWTH_LIMIT_KIB = 4 * 1024;
    private static final long DIRECT_GROWTH_LIMIT_KIB = 1024;

    private static final String PID = String.valueOf(ProcessHandle.current().pid());
    private static final String NS_SWITCH = "hfz-s-" + PID;
    private static final String NS_SERVER = "hfz-a-" + PID;
    private static final String NS_CLIENT = "hfz-b-" + PID;
    private static final String NS_FUZZER = "hfz-f-" + PID;
    private static final String NET = "10.231.78";
    private static final String SERVER_ADDRESS = NET + ".1";
    private static final String FUZZER_ADDRESS = NET + ".2";
    private static final String CLIENT_ADDRESS = NET + ".3";
    private static final List<String> CREATED = new ArrayList<>();

    private static String device(String role) {
        return "hz" + role + PID;
    }

    @BeforeAll
    static void createHosts() throws Exception {
        boolean root = "0".equals(run(List.of("id", "-u")).trim());
        Assumptions.assumeTrue(root, "network namespaces need root (CI runs as root)");
        Assumptions.assumeTrue(Files.isExecutable(Path.of("/usr/sbin/ip")) || Files.isExecutable(Path.of("/sbin/ip")),
                "iproute2 (ip) missing: apt-get install iproute2");
        for (String ns : List.of(NS_SWITCH, NS_SERVER, NS_CLIENT, NS_FUZZER)) {
            sh("ip netns add " + ns);
            CREATED.add(ns);
        }
        sh("ip -n " + NS_SWITCH + " link add br0 type bridge");
        sh("ip -n " + NS_SWITCH + " link set br0 up");
        String[][] hosts = {{NS_SERVER, "a", SERVER_ADDRESS}, {NS_FUZZER, "f", FUZZER_ADDRESS},
            {NS_CLIENT, "b", CLIENT_ADDRESS}};
        for (String[] h : hosts) {
            String inner = device(h[1]);
            String outer = device(h[1] + "s");
            sh("ip link add " + inner + " netns " + h[0] + " type veth peer name " + outer + " netns " + NS_SWITCH);
            sh("ip -n " + NS_SWITCH + " link set " + outer + " master br0");
            sh("ip -n " + NS_SWITCH + " link set " + outer + " up");
            sh("ip -n " + h[0] + " addr add " + h[2] + "/24 dev " + inner);
            sh("ip -n " + h[0] + " link set " + inner + " up");
            sh("ip -n " + h[0] + " link set lo up");
        }
        // the attackers close first (each input ends with their end-of-stream), so their side keeps
        // TIME_WAIT for each connection: let them reuse those ports, in these namespaces only (the
        // keyed attacker shares the server's, where this touches only outgoing connections)
        for (String ns : List.of(NS_FUZZER, NS_SERVER)) {
            sh("ip netns exec " + ns + " sysctl -q -w net.ipv4.tcp_tw_reuse=1");
            run(List.of("ip", "netns", "exec", ns, "sysctl", "-q", "-w", "net.ipv4.ip_local_port_range=1024 65000"));
        }
    }

    @AfterAll
    static void removeHosts() throws Exception {
        for (String ns : CREATED) {
            run(List.of("ip", "netns", "del", ns));
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

    /**
     * A JVM in a namespace. Its output is read line by line: java.util.logging records are
     * counted by level (the refusals by the thousand), {@code FAIL} lines collected, and
     * everything else queued for {@link #expect}.
     */
    private static final class NsJvm implements AutoCloseable {
        final String name;
        final Process process;
        final OutputStream stdin;
        final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
        final List<String> tail = new ArrayList<>();
        final List<String> failures = new ArrayList<>();
        final List<String> errors = new ArrayList<>();
        final List<String> samples = new ArrayList<>();
        final Map<String, AtomicLong> records = new HashMap<>();
        final AtomicLong refusals = new AtomicLong();
        final AtomicLong connFailed = new AtomicLong();

        NsJvm(String name, String ns, String device, List<String> jvmOptions, Class<?> main, String... args)
                throws IOException {
            this.name = name;
            String java = ProcessHandle.current().info().command().orElseThrow();
            List<String> command = new ArrayList<>(List.of("ip", "netns", "exec", ns, java,
                    "--enable-native-access=ALL-UNNAMED", "-ea", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
            command.addAll(jvmOptions);
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), main.getName()));
            command.addAll(List.of(args));
            ProcessBuilder pb = new ProcessBuilder(command).redirectErrorStream(true);
            if (device != null) {
                pb.environment().put("UCX_TLS", "tcp");
                pb.environment().put("UCX_NET_DEVICES", device);
            }
            process = pb.start();
            stdin = process.getOutputStream();
            Thread pump = new Thread(this::pump, "pump-" + name);
            pump.setDaemon(true);
            pump.start();
        }

        private void pump() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    take(line);
                }
            } catch (IOException e) {
                take("(output closed: " + e + ")");
            }
        }

        private synchronized void take(String line) {
            tail.add(line);
            if (tail.size() > 200) {
                tail.remove(0);
            }
            int colon = line.indexOf(": ");
            String level = colon > 0 ? line.substring(0, colon) : "";
            if (level.matches("SEVERE|WARNING|INFO|CONFIG|FINE|FINER|FINEST")) {
                records.computeIfAbsent(level, k -> new AtomicLong()).incrementAndGet();
                if (line.startsWith("WARNING: hadroNIO: refused connection from ")) {
                    refusals.incrementAndGet();
                    if (samples.size() < 8) {
                        samples.add(line);
                    }
                } else if (!level.equals("INFO")) {
                    errors.add(line);
                }
                return;
            }
            if (line.matches("[A-Z][a-z]{2} \\d{1,2}, \\d{4} .*")) {
                return; // the first line of a java.util.logging record: its source
            }
            if (line.startsWith("CONN_FAILED ")) {
                connFailed.incrementAndGet();
                if (samples.size() < 16) {
                    samples.add(line);
                }
                return;
            }
            if (line.startsWith("FAIL ")) {
                failures.add(line);
                return;
            }
            if (line.startsWith("FATAL") || line.startsWith("\tat ") || line.startsWith("Caused by")
                    || line.contains("Exception") || line.startsWith("#") || line.matches("[A-Z]+-FAIL .*")) {
                errors.add(line);
            }
            lines.add(line);
        }

        void send(String line) throws IOException {
            stdin.write((line + "\n").getBytes(StandardCharsets.UTF_8));
            stdin.flush();
        }

        /** The rest of the next line starting with {@code prefix}; a hang guard of 120 s, not a measurement. */
        String expect(String prefix) throws InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (System.nanoTime() < deadline) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line != null && line.startsWith(prefix)) {
                    return line.substring(prefix.length()).trim();
                }
                if (line != null && (line.startsWith("FATAL") || line.matches("[A-Z]+-FAIL .*"))) {
                    throw new AssertionError("the " + name + " failed instead of printing '" + prefix + "': " + line
                            + "; " + report());
                }
                if (line == null && !process.isAlive()) {
                    break;
                }
            }
            throw new AssertionError("no '" + prefix + "' line from the " + name + ": " + report());
        }

        synchronized String report() {
            return (process.isAlive() ? "running" : "exited with " + process.exitValue()) + ", errors " + errors
                    + ", last lines:\n" + String.join("\n", tail);
        }

        @Override
        public void close() {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** The server's resources, as Linux and its JVM count them. */
    private record Figures(int fds, int threads, long rssKiB, long heapKiB, long directKiB, long directBuffers,
                           long open, long accepted, long ucx, long tcp, List<String> threadNames, long refusals) {
        @Override
        public String toString() {
            return "fds " + fds + ", threads " + threads + ", RSS " + rssKiB + " KiB, heap after GC " + heapKiB
                    + " KiB, direct " + directKiB + " KiB in " + directBuffers + " buffers; connections open " + open
                    + ", accepted " + accepted + " (ucx " + ucx + ", tcp " + tcp + ")";
        }
    }

    private static Figures figures(NsJvm server, long pid) throws Exception {
        server.send("STATS");
        String[] s = server.expect("STATS ").split(" ");
        long rss = 0;
        int threads = 0;
        for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
            } else if (line.startsWith("Threads:")) {
                threads = Integer.parseInt(line.substring(8).trim());
            }
        }
        int fds;
        try (Stream<Path> list = Files.list(Path.of("/proc/" + pid + "/fd"))) {
            fds = (int) list.count();
        }
        List<String> names = new ArrayList<>();
        try (Stream<Path> tasks = Files.list(Path.of("/proc/" + pid + "/task"))) {
            for (Path t : tasks.toList()) {
                try {
                    names.add(Files.readString(t.resolve("comm")).trim());
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        names.sort(null);
        return new Figures(fds, threads, rss, Long.parseLong(s[4]), Long.parseLong(s[5]), Long.parseLong(s[6]),
                Long.parseLong(s[0]), Long.parseLong(s[1]), Long.parseLong(s[2]), Long.parseLong(s[3]), names,
                server.refusals.get());
    }

    /**
     * The server once every connection has ended: its application closed them all and the
     * fds it had stopped changing (or, after the run, came back to {@code target}). Waits
     * at most 30 s: a hang guard; the caller asserts on what it sees.
     */
    private static Figures settled(NsJvm server, long pid, Figures target) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        Figures last = figures(server, pid);
        while (System.nanoTime() < deadline) {
            Thread.sleep(250);
            Figures now = figures(server, pid);
            boolean done = target == null ? now.open == 0 && now.fds == last.fds && now.threads == last.threads
                    : now.open == 0 && now.fds <= target.fds + FD_TOLERANCE
                    && now.threads <= target.threads + THREAD_TOLERANCE;
            last = now;
            if (done) {
                break;
            }
        }
        return last;
    }

    /**
     * The server's highest fd count and resident memory while an attacker's inputs run,
     * sampled every 20 ms from /proc: what a burst of hostile handshakes holds while it
     * lasts (the settled figures only show what is left afterwards). Printed, not asserted.
     */
    private static final class Peak {
        final long pid;
        final Thread sampler;
        volatile boolean running = true;
        volatile int fds;
        volatile long rssKiB;
        // the server's own PEAKS answer: handshakes in progress, UCX connection halves, their KiB
        String held = "? ? ?";

        Peak(long pid) {
            this.pid = pid;
            this.sampler = Thread.ofPlatform().daemon().name("peak-" + pid).start(this::sample);
        }

        private void sample() {
            while (running) {
                try (Stream<Path> list = Files.list(Path.of("/proc/" + pid + "/fd"))) {
                    fds = Math.max(fds, (int) list.count());
                    for (String line : Files.readAllLines(Path.of("/proc/" + pid + "/status"))) {
                        if (line.startsWith("VmRSS:")) {
                            rssKiB = Math.max(rssKiB, Long.parseLong(line.substring(6).trim().split("\\s+")[0]));
                        }
                    }
                    Thread.sleep(20);
                } catch (IOException | RuntimeException e) {
                    // an fd closed while listed: the next sample counts again
                } catch (InterruptedException e) {
                    return;
                }
            }
        }

        void stop() throws InterruptedException {
            running = false;
            sampler.join(1000);
        }

        @Override
        public String toString() {
            String[] h = held.split(" ");
            return "peak fds " + fds + ", peak RSS " + rssKiB + " KiB, at most " + h[0] + " handshakes in progress, "
                    + h[1] + " UCX connection halves holding " + h[2] + " KiB";
        }
    }

    private static int realEchoes;

    /** A real hadroNIO client: accelerated, and its bytes come back. */
    private static void realClient(NsJvm client, String host, int port, String when) throws Exception {
        client.send("ECHO " + host + " " + port + " 100000");
        String line = client.lines.poll(120, TimeUnit.SECONDS);
        while (line != null && !line.startsWith("ECHO-")) {
            line = client.lines.poll(120, TimeUnit.SECONDS);
        }
        assertTrue(line != null && line.startsWith("ECHO-OK ucx:"), "a real client " + when
                + " must be accelerated and echo correctly, got " + line + "; client: " + client.report());
        realEchoes++;
    }

    /** The fuzzer's DONE line: {@code inputs=N failures=N ms=N | name=N | ...}. */
    private static Map<String, Long> done(String line) {
        Map<String, Long> m = new TreeMap<>();
        String[] parts = line.split(" \\| ");
        List<String> fields = new ArrayList<>(List.of(parts[0].split(" ")));
        fields.addAll(List.of(parts).subList(1, parts.length));
        for (String f : fields) {
            int eq = f.lastIndexOf('=');
            m.put(f.substring(0, eq), Long.parseLong(f.substring(eq + 1)));
        }
        return m;
    }

    @Test
    void shouldRefuseOrServePlainEveryHostileHandshakeAndKeepServing() throws Exception {
        realEchoes = 0;
        List<String> ucx = List.of("-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider",
                "-Dhadronio.ucx.TLS=tcp", "-Dhadronio.remote.networks=" + NET + ".0/24",
                // UCX's tcp transport rather than the kernel's TCP, so that a real client ends accelerated
                "-Dhadronio.kernel.tcp=false",
                // longer than the defaults (200 ms, 10 s), so that on a loaded machine no input sent at
                // once can outlast them: each input's outcome depends on its bytes, not on scheduling.
                // The deadlines themselves are hit on purpose by the slow inputs.
                "-Dhadronio.remote.detect.timeout=2000", "-Dhadronio.handshake.timeout=2000");
        List<String> serverOptions = new ArrayList<>(ucx);
        serverOptions.addAll(List.of("-Dhadronio.ucx.NET_DEVICES=" + device("a"), "-Xms64m", "-Xmx64m",
                "-XX:+AlwaysPreTouch", "-XX:-UseDynamicNumberOfCompilerThreads"));
        // -Dit.fuzz.server.logging=FILE: the server's java.util.logging configuration, say the rendezvous
        // (io.hadronio.connection.LocalRendezvous) at FINE, which says why it ended a session; such lines are
        // not refusals, so they fail the test and are shown with the attackers' failures
        String logging = System.getProperty("it.fuzz.server.logging");
        if (logging != null) {
            serverOptions.add("-Djava.util.logging.config.file=" + logging);
        }
        List<String> clientOptions = new ArrayList<>(ucx);
        clientOptions.addAll(List.of("-Dhadronio.ucx.NET_DEVICES=" + device("b"), "-Xmx128m"));
        try (NsJvm server = new NsJvm("server", NS_SERVER, device("a"), serverOptions, HandshakeFuzzPeer.class,
                "server", SERVER_ADDRESS);
             NsJvm client = new NsJvm("real client", NS_CLIENT, device("b"), clientOptions, HandshakeFuzzPeer.class,
                     "client")) {
            long pid = Long.parseLong(server.expect("PID "));
            int port = Integer.parseInt(server.expect("PORT "));
            client.expect("READY");
            try (NsJvm stranger = new NsJvm("attacker from another host", NS_FUZZER, null, List.of("-Xmx512m"),
                    HandshakeFuzzer.class, "stranger", SERVER_ADDRESS, String.valueOf(port), FUZZER_ADDRESS,
                    String.valueOf(THREADS), String.valueOf(SEED));
                 NsJvm keyed = new NsJvm("local attacker with the key", NS_SERVER, null, List.of("-Xmx256m"),
                         HandshakeFuzzer.class, "keyed", SERVER_ADDRESS, String.valueOf(port), SERVER_ADDRESS,
                         String.valueOf(THREADS), String.valueOf(SEED + 1))) {
                stranger.expect("READY");
                keyed.expect("READY");
                realClient(client, SERVER_ADDRESS, port, "before the attack");

                // a real client's handshake, through the attacker's relay: its frames are replayed later
                stranger.send("CAPTURE");
                int proxy = Integer.parseInt(stranger.expect("PROXY "));
                realClient(client, FUZZER_ADDRESS, proxy, "through the capturing relay");
                System.out.println("handshake fuzz: captured a real handshake: " + stranger.expect("CAPTURED"));
                keyed.send("PRIME");
                System.out.println("handshake fuzz: keyed attacker " + keyed.expect("PRIMED"));

                // before any hostile input: what the warm-up's bursts add (pools filled once, say) shows
                // only against this, not against the settled baseline taken after the warm-up
                Figures start = figures(server, pid);
                server.send("PEAKS");
                server.expect("PEAKS ");
                Peak warmUpPeak = new Peak(pid);
                stranger.send("RUN 0 " + WARM_UP);
                assertEquals(0L, done(stranger.expect("DONE ")).get("failures"), "warm-up: " + stranger.failures);
                keyed.send("RUN 0 " + KEYED_WARM_UP);
                assertEquals(0L, done(keyed.expect("DONE ")).get("failures"), "warm-up: " + keyed.failures);
                warmUpPeak.stop();
                server.send("PEAKS");
                warmUpPeak.held = server.expect("PEAKS ");
                realClient(client, SERVER_ADDRESS, port, "after the warm-up");
                Figures before = settled(server, pid, null);

                Map<String, Map<String, Long>> runs = new TreeMap<>();
                Map<String, Peak> peaks = new TreeMap<>();
                for (NsJvm attacker : List.of(stranger, keyed)) {
                    int from = attacker == stranger ? WARM_UP : KEYED_WARM_UP;
                    int count = attacker == stranger ? INPUTS : KEYED_INPUTS;
                    Peak peak = new Peak(pid);
                    peaks.put(attacker.name, peak);
                    attacker.send("RUN " + from + " " + count);
                    for (int tenth = 1; tenth <= 10 && count >= 10; tenth++) {
                        attacker.expect("PROGRESS ");
                        if (tenth % (attacker == stranger ? 2 : 5) == 0 && tenth < 10) {
                            realClient(client, SERVER_ADDRESS, port, "during the " + attacker.name + "'s inputs ("
                                    + tenth * 10 + " %)");
                        }
                    }
                    runs.put(attacker.name, done(attacker.expect("DONE ")));
                    peak.stop();
                    server.send("PEAKS");
                    peak.held = server.expect("PEAKS ");
                }
                realClient(client, SERVER_ADDRESS, port, "after the attack");
                Figures after = settled(server, pid, before);

                System.out.println("handshake fuzz: seed " + SEED + ", " + THREADS + " connections at a time per attacker");
                runs.forEach((who, run) -> {
                    System.out.println("  " + who + ": " + run.get("inputs") + " inputs in " + run.get("ms") + " ms");
                    run.forEach((k, v) -> System.out.println("    " + k + " = " + v));
                });
                long logged = after.refusals - before.refusals;
                System.out.println("  server log: " + server.records + " (with warm-up), refusal lines during the run "
                        + logged + ", application I/O errors " + server.connFailed.get());
                server.samples.forEach(l -> System.out.println("  sample: " + l));
                System.out.println("  server before: " + before);
                System.out.println("  server after:  " + after);
                System.out.println("  server at start (no hostile input yet): " + start);
                System.out.println("  server during the warm-up: " + warmUpPeak + " (" + (warmUpPeak.fds - start.fds)
                        + " fds, " + (warmUpPeak.rssKiB - start.rssKiB) + " KiB RSS above the start)");
                peaks.forEach((who, peak) -> System.out.println("  server during the " + who + "'s inputs: " + peak
                        + " (" + (peak.fds - before.fds) + " fds, " + (peak.rssKiB - before.rssKiB)
                        + " KiB RSS above the settled baseline; " + (peak.rssKiB - start.rssKiB)
                        + " KiB above the start)"));
                System.out.printf("  deltas: fds %+d, threads %+d, RSS %+d KiB (limit %d), heap %+d KiB, direct %+d KiB%n",
                        after.fds - before.fds, after.threads - before.threads, after.rssKiB - before.rssKiB,
                        RSS_GROWTH_LIMIT_KIB, after.heapKiB - before.heapKiB, after.directKiB - before.directKiB);
                if (!after.threadNames.equals(before.threadNames)) {
                    List<String> gone = new ArrayList<>(before.threadNames);
                    after.threadNames.forEach(gone::remove);
                    List<String> added = new ArrayList<>(after.threadNames);
                    before.threadNames.forEach(added::remove);
                    System.out.println("  threads gone " + gone + ", new " + added);
                }

                long refused = 0;
                long mayRefuse = 0;
                for (NsJvm attacker : List.of(stranger, keyed)) {
                    Map<String, Long> run = runs.get(attacker.name);
                    assertEquals(0L, run.get("failures"), "inputs of the " + attacker.name
                            + " the server got wrong (first 50):\n" + String.join("\n", attacker.failures)
                            + "\nthe server's other log lines: " + server.errors);
                    assertEquals(List.of(), attacker.errors, "the " + attacker.name + " itself failed: "
                            + attacker.report());
                    if (run.get("inputs") >= 1000) {
                        for (String outcome : List.of("echoed", "refused", "hello, PLAIN, plain TCP",
                                "hello, our PLAIN, plain TCP")) {
                            assertTrue(run.getOrDefault(outcome, 0L) > 0, "no input of the " + attacker.name
                                    + " ended as '" + outcome + "': " + run);
                        }
                        // the bound on hellos waiting for their proof holds a stranger's host, and only it
                        if (attacker == stranger) {
                            assertTrue(run.getOrDefault(HandshakeFuzzer.OVER_THE_BOUND, 0L) > 0,
                                    "no hello of the stranger was answered PLAIN for the bound per host: " + run);
                        }
                    }
                    if (attacker == keyed) {
                        assertEquals(0L, run.getOrDefault(HandshakeFuzzer.OVER_THE_BOUND, 0L),
                                "a registered client's hello was answered PLAIN for the bound per host: " + run);
                    }
                    // a hello over the bound is not refused: plain TCP, and no WARNING
                    refused += run.getOrDefault("refused", 0L)
                            + run.getOrDefault("refused (hello cut short by the reset)", 0L);
                    mayRefuse += run.getOrDefault("unobserved, may be refused", 0L);
                }
                assertEquals(List.of(), server.errors, "the server logged more than refusals: " + server.report());
                assertTrue(server.process.isAlive(), "the server died: " + server.report());
                assertTrue(logged >= refused && logged <= refused + mayRefuse, "one WARNING per refused handshake"
                        + " and no other line: " + logged + " lines for " + refused + " refused (+ up to " + mayRefuse
                        + " the attackers did not watch)");
                assertEquals(realEchoes, after.ucx, "only the real client's connections are accelerated");
                assertEquals(0, after.open, "the server's application still has connections open");
                assertTrue(after.fds <= before.fds + FD_TOLERANCE, "server fds " + before.fds + " -> " + after.fds);
                assertTrue(after.threads <= before.threads + THREAD_TOLERANCE,
                        "server threads " + before.threads + " -> " + after.threads + ": " + after.threadNames);
                assertTrue(after.rssKiB - before.rssKiB < RSS_GROWTH_LIMIT_KIB, "server RSS " + before.rssKiB
                        + " -> " + after.rssKiB + " KiB");
                assertTrue(after.heapKiB - before.heapKiB < HEAP_GROWTH_LIMIT_KIB, "server heap after GC "
                        + before.heapKiB + " -> " + after.heapKiB + " KiB");
                assertTrue(after.directKiB - before.directKiB < DIRECT_GROWTH_LIMIT_KIB, "server direct memory "
                        + before.directKiB + " -> " + after.directKiB + " KiB");
            }
        }
    }
}
