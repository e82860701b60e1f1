package io.hadronio.it.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.selector.ProcStats;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Soak and integrity (issue "Faults and resources"): a hadroNIO server JVM and several
 * hadroNIO client JVMs ({@link SoakPeer}) hold {@code clients x slots} connections at once
 * (100 by default), blocking and non-blocking on both sides in every pairing. Each slot
 * runs connection after connection; each connection sends random messages both ways at
 * once (1 B to 4 MiB, {@link SoakPlan}), written with random gathering writes and read with
 * random scattering reads over heap and direct buffers ({@link Streams}), every byte
 * checked against its connection's own stream and summed in a CRC32 each way; it ends
 * with one side's half-close while the other keeps sending, then a full close, or with
 * both half-closing. Meanwhile client JVMs are killed with SIGKILL at seeded random
 * times and replaced by new ones. Checked:
 * <ul>
 * <li>every connection of a JVM that was not killed: all bytes both ways, in order, then
 *     end-of-stream, on both sides; the sender's count and CRC32 equal the receiver's
 *     (no byte lost, duplicated, reordered or from elsewhere; the first wrong offset is
 *     reported);</li>
 * <li>every connection of a killed JVM ends at the server with end-of-stream or an
 *     IOException, after the kill and within {@link #DETECTION_BOUND} (a hang guard; the
 *     times are reported), with every byte that arrived right;</li>
 * <li>the server never dies, answers throughout, ends every connection, and its file
 *     descriptors and threads are back at their baseline (taken after a warm-up) once all
 *     connections are closed; its resident memory is reported.</li>
 * </ul>
 * Profiles: by default a short run for CI ({@code it.soak.seconds}, 20 s of traffic);
 * {@code -Dit.soak.minutes=10} runs ten minutes with a kill a minute on average
 * (docs/RELIABILITY.md has the commands). Figures go to stdout and to
 * {@code target/soak.txt}.
 */
@Tag("slow")
// every wait below has its own hang guard, scaled to the run; JUnit's default (90 s) would cut the long profile
@Timeout(value = 24, unit = TimeUnit.HOURS)
class SoakTest {
    private static final int MINUTES = Integer.getInteger("it.soak.minutes", 0);
    private static final long RUN_SECONDS = MINUTES > 0 ? MINUTES * 60L : Long.getLong("it.soak.seconds", 20);
    private static final long SEED = Long.getLong("it.soak.seed", 20_261_201L);
    private static final int CLIENTS = Integer.getInteger("it.soak.clients", 5);
    private static final int SLOTS = Integer.getInteger("it.soak.slots", 20);
    private static final int KILLS = Integer.getInteger("it.soak.kills", MINUTES > 0 ? Math.max(2, MINUTES) : 2);
    private static final int MAX_MESSAGES = Integer.getInteger("it.soak.messages", 8);
    // the server must have seen a killed client's connection end by then, counted from the kill or from
    // the last byte it read, whichever came later: a hang guard, not a measurement. (A dead client's
    // megabytes still in the kernel are read at the selector server's pace: 4 reads of random, often
    // tiny, arrays per pass, a pass every 0.4-1.1 s on 2 busy cores, so 2.7 MB took 24-36 s after the
    // kill while every read took bytes; the JDK's path is the same.)
    static final Duration DETECTION_BOUND = Duration.ofSeconds(30);
    // how long a survivor may take to finish its last connections after STOP, and the server to settle
    private static final Duration HANG_GUARD = Duration.ofSeconds(180);
    private static final int WARM_UP_SLOTS = 4;
    private static final List<String> EAGER_ONLY = List.of("-Dhadronio.ucx.RNDV_THRESH=inf");

    // more options for every peer JVM, e.g. "-Dhadronio.slice.count=4"
    private static final String PEER_OPTIONS = System.getProperty("it.soak.peerOptions", "");

    private static List<String> options(List<String> ucxOptions, String... more) {
        List<String> o = new ArrayList<>(List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER));
        o.addAll(ucxOptions);
        o.addAll(List.of(more));
        if (!PEER_OPTIONS.isBlank()) {
            o.addAll(List.of(PEER_OPTIONS.trim().split("\\s+")));
        }
        return o;
    }

    /** The soak with UCX's rendezvous protocol off ({@code RNDV_THRESH=inf}: every message eager). */
    @Test
    void shouldKeepEveryByteThroughKillsAndHalfClosesAndLeakNothingWithEagerUcxMessages() throws Exception {
        soak(EAGER_ONLY);
    }

    /**
     * The same with UCX's default settings (large messages by rendezvous). This found the
     * crossed endpoint pairs: connections set up concurrently between two JVMs each had
     * their own endpoint, UCX paired the two sides' endpoints by creation order, and closing
     * one connection cancelled another's rendezvous receive ("UCX receive failed: Request
     * canceled"). Connections to one peer worker now share one endpoint.
     */
    @Test
    void shouldKeepEveryByteThroughKillsAndHalfClosesAndLeakNothingWithDefaultUcxSettings() throws Exception {
        soak(List.of());
    }

    private static void soak(List<String> ucxOptions) throws Exception {
        Ledger ledger = new Ledger();
        Map<Integer, ChildJvm> clients = new TreeMap<>();
        Map<Integer, Long> killed = new TreeMap<>();
        SplittableRandom schedule = new SplittableRandom(SEED);
        // 100 connections' buffers (1 MiB each) and its own; fixed compiler threads, so threads compare
        try (ChildJvm server = ChildJvm.start(SoakPeer.class, options(ucxOptions, "-Xmx512m",
                "-XX:-UseDynamicNumberOfCompilerThreads"), "server", String.valueOf(SEED), String.valueOf(MAX_MESSAGES))) {
            long pid = server.process().pid();
            String[] ports = server.expect("@PORTS ").split(" ");
            ledger.pump(server, -1);
            Runner runner = new Runner(ledger, clients, options(ucxOptions, "-Xmx384m"), Integer.parseInt(ports[0]),
                    Integer.parseInt(ports[1]));
            try {
                // warm-up: every pairing once, so that what is made lazily is there before the baseline
                ChildJvm warm = runner.start(0, WARM_UP_SLOTS);
                warm.send("GO");
                warm.send("STOP");
                runner.finish(0);
                ledger.serverOpen(server, 0, HANG_GUARD);
                Figures before = Figures.settle(pid, null);

                for (int inc = 1; inc <= CLIENTS; inc++) {
                    runner.start(inc, SLOTS);
                }
                // every connection open at once before any byte flows
                int held = ledger.serverOpen(server, CLIENTS * SLOTS, HANG_GUARD);
                clients.values().forEach(c -> send(c, "GO"));
                long start = System.nanoTime();
                // the server's cost during the run, ten times: growth that goes on is a leak
                List<String> samples = Collections.synchronizedList(new ArrayList<>());
                Thread sampler = new Thread(() -> {
                    try {
                        for (int k = 1; k <= 10; k++) {
                            Thread.sleep(RUN_SECONDS * 100);
                            samples.add(String.format("%.0f s: %s", (System.nanoTime() - start) / 1e9, Figures.of(pid)));
                        }
                    } catch (InterruptedException | IOException e) {
                        // the run ended
                    }
                }, "soak-sampler");
                sampler.setDaemon(true);
                sampler.start();
                List<Double> killAt = new ArrayList<>();
                for (int k = 0; k < KILLS; k++) {
                    killAt.add(0.1 + 0.8 * schedule.nextDouble());
                }
                Collections.sort(killAt);
                int next = CLIENTS + 1;
                for (double at : killAt) {
                    ledger.runUntil(start + (long) (at * RUN_SECONDS * 1e9));
                    // a victim in the middle of its traffic: a client whose JVM is still starting (a
                    // replacement can take seconds on a busy host) has no connection to cut yet
                    List<Integer> live = ledger.withTraffic(clients.keySet());
                    int victim = live.get(schedule.nextInt(live.size()));
                    ChildJvm v = clients.remove(victim);
                    long killNanos = ledger.killing(victim);
                    killed.put(victim, killNanos);
                    v.kill();
                    v.close();
                    System.out.printf("soak: killed client %d at %.1f s%n", victim, (System.nanoTime() - start) / 1e9);
                    // a new JVM takes its place
                    runner.start(next, SLOTS).send("GO");
                    next++;
                }
                ledger.runUntil(start + RUN_SECONDS * 1_000_000_000L);
                long stopped = System.nanoTime();
                clients.values().forEach(c -> send(c, "STOP"));
                for (int inc : new ArrayList<>(clients.keySet())) {
                    runner.finish(inc);
                }
                long drained = System.nanoTime();
                ledger.allEnded(server, HANG_GUARD);
                Figures after = Figures.settle(pid, before);

                sampler.interrupt();
                SoakReport r = new SoakReport(ledger, killed, held, before, after, start, (stopped - start) / 1e9,
                        (drained - stopped) / 1e9, SEED, MAX_MESSAGES, samples);
                r.print();
                assertTrue(server.process().isAlive(), "the server died: " + server.report());
                r.check(KILLS);
            } catch (AssertionError | RuntimeException e) {
                throw new AssertionError(e.getMessage() + "\n" + evidence(server, clients), e);
            } finally {
                clients.values().forEach(ChildJvm::close);
            }
        }
    }

    private static void send(ChildJvm child, String line) {
        try {
            child.send(line);
        } catch (IOException e) {
            throw new AssertionError("cannot write to " + child.report(), e);
        }
    }

    /** Starts and finishes client JVMs. */
    private record Runner(Ledger ledger, Map<Integer, ChildJvm> clients, List<String> options, int blockingPort,
                          int selectorPort) {
        ChildJvm start(int incarnation, int slots) throws Exception {
            ChildJvm c = ChildJvm.start(SoakPeer.class, options, "client", String.valueOf(blockingPort),
                    String.valueOf(selectorPort), String.valueOf(incarnation), String.valueOf(slots),
                    String.valueOf(SEED), String.valueOf(MAX_MESSAGES));
            clients.put(incarnation, c);
            ledger.pump(c, incarnation);
            long started = System.nanoTime();
            c.process().onExit().thenAccept(p -> ledger.exited(incarnation, p.exitValue(), started));
            ledger.await(() -> ledger.connected.contains(incarnation), ChildJvm.LINE_TIMEOUT.multipliedBy(2),
                    () -> "client " + incarnation + " did not connect its " + slots + " slots: " + c.report());
            return c;
        }

        /** After STOP: the client finishes the connections it runs, says DONE and exits. */
        void finish(int incarnation) throws Exception {
            ChildJvm c = clients.get(incarnation);
            ledger.await(() -> ledger.done.contains(incarnation), HANG_GUARD,
                    () -> "client " + incarnation + " did not finish its connections after STOP");
            assertEquals(0, c.awaitExit(), c::report);
            clients.remove(incarnation);
            c.close();
        }
    }

    /** The server's cost, as Linux counts it. */
    record Figures(int fds, int threads, long rssKiB) {
        static Figures of(long pid) throws IOException {
            ProcStats p = ProcStats.of(pid);
            return new Figures(p.fds(), ProcStats.threads(pid), p.rssKiB());
        }

        /**
         * Once the server has no connection: fds and threads unchanged for a second (a
         * baseline), or back at {@code target}'s. At most 30 s; the caller asserts on it.
         */
        static Figures settle(long pid, Figures target) throws Exception {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            Figures last = of(pid);
            int stable = 0;
            while (System.nanoTime() < deadline) {
                Thread.sleep(250);
                Figures now = of(pid);
                stable = now.fds == last.fds && now.threads == last.threads ? stable + 1 : 0;
                last = now;
                if (target == null ? stable >= 4 : now.fds <= target.fds && now.threads <= target.threads) {
                    break;
                }
            }
            return last;
        }

        @Override
        public String toString() {
            return "fds " + fds + ", threads " + threads + ", RSS " + rssKiB + " KiB";
        }
    }

    /**
     * For a failure's message: {@code jcmd Thread.print} of the server and of every client
     * still running, and everything each printed, in {@code target/soak-evidence/}.
     */
    private static String evidence(ChildJvm server, Map<Integer, ChildJvm> clients) {
        StringBuilder sb = new StringBuilder();
        try {
            Path dir = Path.of("target", "soak-evidence");
            Files.createDirectories(dir);
            Map<String, ChildJvm> all = new TreeMap<>();
            all.put("server", server);
            clients.forEach((inc, c) -> all.put("client-" + inc, c));
            for (Map.Entry<String, ChildJvm> e : all.entrySet()) {
                ChildJvm child = e.getValue();
                if (child.process().isAlive()) {
                    Path stacks = dir.resolve(e.getKey() + "-stacks.txt");
                    Process jcmd = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "jcmd").toString(),
                            String.valueOf(child.process().pid()), "Thread.print").redirectErrorStream(true)
                            .redirectOutput(stacks.toFile()).start();
                    jcmd.waitFor(30, TimeUnit.SECONDS);
                }
                Files.writeString(dir.resolve(e.getKey() + "-output.txt"), child.output());
            }
            sb.append("stacks and output of the server and the running clients in ").append(dir.toAbsolutePath());
        } catch (Exception e) {
            sb.append("(no stacks: ").append(e).append(")");
        }
        return sb.toString();
    }

    /** One {@code @END} line: one side of one connection. */
    record End(long id, boolean client, boolean blocking, String outcome, long sent, long sentCrc, long received,
               long receivedCrc, long firstMismatch, int messages, long failureNanos, long lastReadNanos,
               String detail) {
        static End parse(String line) {
            String[] f = line.split(" ", 14);
            return new End(Long.parseLong(f[1]), f[2].equals("c"), f[3].equals("b"), f[4], Long.parseLong(f[5]),
                    Long.parseLong(f[6]), Long.parseLong(f[7]), Long.parseLong(f[8]), Long.parseLong(f[9]),
                    Integer.parseInt(f[10]), Long.parseLong(f[11]), Long.parseLong(f[12]), f[13]);
        }

        int incarnation() {
            return SoakPlan.incarnation(id);
        }

        boolean ok() {
            return outcome.equals("OK");
        }
    }

    /** What every JVM printed that the test needs, as it comes; a problem fails the waits at once. */
    static final class Ledger {
        final Map<Long, End> server = new HashMap<>();
        final Map<Long, End> client = new HashMap<>();
        final Set<Long> accepted = new HashSet<>();
        final List<Long> headerless = new ArrayList<>();
        final Set<Integer> connected = new HashSet<>();
        final Set<Integer> done = new HashSet<>();
        final Map<Integer, Long> killed = new HashMap<>();
        final List<String> problems = new ArrayList<>();
        private String stats;
        private int statsSeen;

        /** A thread that takes the child's lines until it is gone. {@code incarnation} -1: the server. */
        void pump(ChildJvm child, int incarnation) {
            Thread t = new Thread(() -> {
                try {
                    while (true) {
                        String line = child.poll(Duration.ofSeconds(1));
                        if (line == null) {
                            if (!child.process().isAlive() && child.poll(Duration.ofMillis(500)) == null) {
                                return;
                            }
                            continue;
                        }
                        if (line.startsWith("@")) {
                            line(incarnation, line);
                        }
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }, "soak-pump-" + incarnation);
            t.setDaemon(true);
            t.start();
        }

        synchronized void line(int incarnation, String line) {
            String who = incarnation < 0 ? "server" : "client " + incarnation;
            String[] f = line.split(" ");
            switch (f[0]) {
                case "@END" -> {
                    End e = End.parse(line);
                    Map<Long, End> side = e.client ? client : server;
                    if (side.put(e.id, e) != null) {
                        problem(who + " ended connection " + e.id + " twice: " + line);
                    }
                    if (e.outcome.equals("BROKEN") || !e.ok() && (e.client || !killed.containsKey(e.incarnation()))) {
                        problem(who + ": " + line);
                    }
                }
                case "@ACCEPT" -> accepted.add(Long.parseLong(f[1]));
                case "@HEADERLESS" -> headerless.add(Long.parseLong(f[1]));
                case "@CONNECTED" -> connected.add(incarnation);
                case "@DONE" -> done.add(incarnation);
                case "@STATS" -> {
                    stats = line.substring(7);
                    statsSeen++;
                }
                default -> problem(who + ": " + line);
            }
            notifyAll();
        }

        private void problem(String p) {
            if (problems.size() < 50) {
                problems.add(p);
            }
        }

        /**
         * A client JVM ended: one the test did not kill that ends with a non-zero status is a
         * problem (a crash, or a signal from outside the test: 137 is SIGKILL), named as such.
         */
        synchronized void exited(int incarnation, int status, long startedNanos) {
            if (status != 0 && !killed.containsKey(incarnation)) {
                problem(String.format("client %d exited by itself %.1f s after its start, status %d%s", incarnation,
                        (System.nanoTime() - startedNanos) / 1e9, status,
                        status == 137 ? " (SIGKILL, not sent by this test)" : ""));
                notifyAll();
            }
        }

        /**
         * The clients of {@code live} (in order) whose connections the server has accepted
         * with their id, once there is one (at most {@link ChildJvm#LINE_TIMEOUT}).
         */
        List<Integer> withTraffic(Collection<Integer> live) throws InterruptedException {
            List<Integer> running = new ArrayList<>();
            await(() -> {
                running.clear();
                synchronized (this) {
                    for (int inc : live) {
                        if (accepted.stream().anyMatch(id -> SoakPlan.incarnation(id) == inc)) {
                            running.add(inc);
                        }
                    }
                }
                return !running.isEmpty();
            }, ChildJvm.LINE_TIMEOUT, () -> "no client with a connection under way among " + live);
            return running;
        }

        /** Marks a client as killed from now on: the server may see its connections fail. */
        synchronized long killing(int incarnation) {
            long now = System.nanoTime();
            killed.put(incarnation, now);
            return now;
        }

        synchronized void await(BooleanSupplier condition, Duration timeout, Supplier<String> what)
                throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!condition.getAsBoolean()) {
                failOnProblems();
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("hang guard (" + timeout.toSeconds() + " s): " + what.get());
                }
                TimeUnit.NANOSECONDS.timedWait(this, Math.min(left, 100_000_000L));
            }
            failOnProblems();
        }

        private void failOnProblems() {
            if (!problems.isEmpty()) {
                throw new AssertionError("soak: " + problems.size() + " problem(s), the first:\n"
                        + String.join("\n", problems));
            }
        }

        /** Lets the run go on until {@code nanoTime}, failing at once on a problem. */
        void runUntil(long nanoTime) throws InterruptedException {
            await(() -> System.nanoTime() >= nanoTime, Duration.ofNanos(Math.max(0, nanoTime - System.nanoTime())
                    + 1_000_000_000L), () -> "the run's clock");
        }

        /** The server's {@code @STATS} line, fresh. */
        String stats(ChildJvm server) throws InterruptedException {
            int seen;
            synchronized (this) {
                seen = statsSeen;
            }
            send(server, "STATS");
            await(() -> statsSeen > seen, ChildJvm.LINE_TIMEOUT, () -> "the server did not answer STATS: "
                    + server.report());
            synchronized (this) {
                return stats;
            }
        }

        /** Waits until the server has {@code open} connections open; returns the count. */
        int serverOpen(ChildJvm server, int open, Duration timeout) throws InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                String[] s = stats(server).split(" ");
                int now = Integer.parseInt(s[0]);
                if (now == open) {
                    return now;
                }
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("hang guard: the server has " + now + " connections open, not " + open
                            + " (" + String.join(" ", s) + ")");
                }
                Thread.sleep(100);
            }
        }

        /** Waits until the server ended every connection it accepted. */
        void allEnded(ChildJvm serverJvm, Duration timeout) throws InterruptedException {
            await(() -> server.keySet().containsAll(accepted), timeout, () -> {
                Set<Long> open = new HashSet<>(accepted);
                open.removeAll(server.keySet());
                return "the server still has connections open: " + open.stream().limit(20).map(
                        id -> id + " (client " + SoakPlan.incarnation(id) + ")").toList();
            });
            serverOpen(serverJvm, 0, timeout);
        }
    }
}
