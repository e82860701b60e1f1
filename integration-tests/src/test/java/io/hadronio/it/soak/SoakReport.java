package io.hadronio.it.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.soak.SoakTest.End;
import io.hadronio.it.soak.SoakTest.Figures;
import io.hadronio.it.soak.SoakTest.Ledger;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** What a soak run did, printed as its figures, and what it must have done, asserted. */
final class SoakReport {
    private final Ledger ledger;
    private final Map<Integer, Long> killed;
    private final int held;
    private final Figures before;
    private final Figures after;
    private final double runSeconds;
    private final double drainSeconds;
    private final long seed;
    private final int maxMessages;
    private final long start;
    private final List<String> samples;

    SoakReport(Ledger ledger, Map<Integer, Long> killed, int held, Figures before, Figures after, long start,
               double runSeconds, double drainSeconds, long seed, int maxMessages, List<String> samples) {
        this.start = start;
        this.samples = List.copyOf(samples);
        this.ledger = ledger;
        this.killed = killed;
        this.held = held;
        this.before = before;
        this.after = after;
        this.runSeconds = runSeconds;
        this.drainSeconds = drainSeconds;
        this.seed = seed;
        this.maxMessages = maxMessages;
    }

    /**
     * A connection its client finished (everything read, close() returned) shortly before
     * it was killed, whose last bytes were still on their way: they died with the process
     * (with the kernel's TCP, the kernel would still deliver them), and the server sees a
     * fault as on any other connection of a killed client.
     */
    private boolean closedBeforeItsKill(End c) {
        End s = ledger.server.get(c.id());
        return killed.containsKey(c.incarnation()) && s != null && s.outcome().equals("FAULT");
    }

    /** Milliseconds from the kill of its client to the server's first failure on the connection. */
    private List<Double> detections(Integer incarnation) {
        List<Double> ms = new ArrayList<>();
        for (End e : ledger.server.values()) {
            if (e.outcome().equals("FAULT") && (incarnation == null ? killed.containsKey(e.incarnation())
                    : e.incarnation() == incarnation)) {
                ms.add((e.failureNanos() - killed.get(e.incarnation())) / 1e6);
            }
        }
        ms.sort(null);
        return ms;
    }

    private static String spread(List<Double> ms) {
        return ms.isEmpty() ? "none" : String.format("min %.1f ms, median %.1f ms, max %.1f ms (%d connections)",
                ms.get(0), ms.get(ms.size() / 2), ms.get(ms.size() - 1), ms.size());
    }

    List<String> lines() {
        List<String> out = new ArrayList<>();
        long complete = 0;
        long messagesUp = 0;
        long messagesDown = 0;
        long bytesUp = 0;
        long bytesDown = 0;
        long oneByte = 0;
        long largest = 0;
        Map<String, Long> pairings = new TreeMap<>();
        Map<String, Long> endings = new TreeMap<>();
        for (End c : ledger.client.values()) {
            End s = ledger.server.get(c.id());
            if (!c.ok() || s == null || !s.ok()) {
                continue;
            }
            complete++;
            messagesUp += c.messages();
            messagesDown += s.messages();
            bytesUp += s.received();
            bytesDown += c.received();
            pairings.merge("client " + (c.blocking() ? "blocking" : "selector") + " / server "
                    + (s.blocking() ? "blocking" : "selector"), 1L, Long::sum);
            SoakPlan plan = SoakPlan.of(seed, c.id(), maxMessages);
            endings.merge(plan.ending() + (plan.ending() == SoakPlan.Ending.BOTH_HALF_CLOSE ? ""
                    : plan.fullClose() ? ", then close()" : ", then shutdownOutput() + close()"), 1L, Long::sum);
            for (long[] m : new long[][] {plan.client(), plan.server()}) {
                for (long size : m) {
                    oneByte += size == 1 ? 1 : 0;
                    largest += size == SoakPlan.MAX_MESSAGE ? 1 : 0;
                }
            }
        }
        long closedBeforeKill = ledger.client.values().stream().filter(this::closedBeforeItsKill).count();
        long cut = 0;
        long prefix = 0;
        long cutByEof = 0;
        Map<String, Long> how = new TreeMap<>();
        for (End s : ledger.server.values()) {
            if (s.outcome().equals("FAULT") && killed.containsKey(s.incarnation())) {
                cut++;
                prefix += s.received();
                cutByEof += s.detail().startsWith("end of stream") ? 1 : 0;
                how.merge(s.detail().replaceAll("[0-9]+", "#"), 1L, Long::sum);
            }
        }
        out.add(String.format("soak: seed %d, %.0f s of traffic (+%.1f s to finish after STOP), up to %d messages a"
                + " side before its half-close", seed, runSeconds, drainSeconds, maxMessages));
        out.add("  connections: " + ledger.server.size() + " at the server (" + held + " held open at once), "
                + complete + " complete both ways, " + cut + " cut by kills, " + ledger.headerless.size()
                + " cut before their id arrived");
        pairings.forEach((k, v) -> out.add("    " + k + ": " + v));
        endings.forEach((k, v) -> out.add("    " + k + ": " + v));
        out.add(String.format("  messages (exchanges): client->server %,d, server->client %,d; of them 1 B: %,d,"
                + " 4 MiB: %,d", messagesUp, messagesDown, oneByte, largest));
        out.add(String.format("  bytes verified: client->server %,d (+%,d before the cuts), server->client %,d;"
                + " lost, duplicated, reordered or foreign: 0", bytesUp, prefix, bytesDown));
        out.add("  clients killed: " + killed.size() + "; the server saw their connections end with end-of-stream "
                + cutByEof + ", IOException " + (cut - cutByEof) + " (" + closedBeforeKill + " of them closed by"
                + " the client before the kill, their last bytes still in flight)");
        how.forEach((k, v) -> out.add("    " + v + " x " + k));
        out.add("  detection (kill -> the server's read or write ends): " + spread(detections(null)));
        killed.forEach((inc, nanos) -> out.add(String.format("    client %d, killed at %.1f s: %s", inc,
                (nanos - start) / 1e9, spread(detections(inc)))));
        ledger.server.values().stream()
                .filter(e -> e.outcome().equals("FAULT") && killed.containsKey(e.incarnation()))
                .sorted(java.util.Comparator.comparingLong(
                        (End e) -> e.failureNanos() - killed.get(e.incarnation())).reversed())
                .limit(3)
                .forEach(e -> out.add(String.format("    slow: %.1f ms (%.1f ms after its last byte read),"
                        + " connection %d (%s server, %d messages): %s",
                        (e.failureNanos() - killed.get(e.incarnation())) / 1e6,
                        (e.failureNanos() - Math.max(killed.get(e.incarnation()), e.lastReadNanos())) / 1e6, e.id(),
                        e.blocking() ? "blocking" : "selector", e.messages(), e.detail())));
        out.add("  server before (after warm-up): " + before);
        samples.forEach(x -> out.add("  server during the run, at " + x));
        out.add("  server after (all closed):     " + after);
        out.add(String.format("  deltas: fds %+d, threads %+d, RSS %+d KiB", after.fds() - before.fds(),
                after.threads() - before.threads(), after.rssKiB() - before.rssKiB()));
        return out;
    }

    void print() throws IOException {
        List<String> lines = lines();
        lines.forEach(System.out::println);
        Path out = Path.of("target", "soak.txt");
        Files.createDirectories(out.getParent());
        Files.write(out, lines);
    }

    void check(int kills) {
        for (End c : ledger.client.values()) {
            assertTrue(c.ok(), "a client's connection failed: " + c);
            End s = ledger.server.get(c.id());
            if (closedBeforeItsKill(c)) {
                // checked below with the other connections of killed clients
                continue;
            }
            assertTrue(s != null && s.ok(), "the server's side of a complete connection: " + s + ", client's: " + c);
            assertEquals(c.sent(), s.received(), "client->server bytes, connection " + c.id());
            assertEquals(c.sentCrc(), s.receivedCrc(), "client->server CRC32, connection " + c.id());
            assertEquals(s.sent(), c.received(), "server->client bytes, connection " + c.id());
            assertEquals(s.sentCrc(), c.receivedCrc(), "server->client CRC32, connection " + c.id());
        }
        for (End s : ledger.server.values()) {
            Long kill = killed.get(s.incarnation());
            if (kill == null) {
                assertTrue(s.ok() && ledger.client.containsKey(s.id()), "a connection of a client that was not"
                        + " killed: " + s + ", client's: " + ledger.client.get(s.id()));
                continue;
            }
            assertTrue(s.ok() || s.outcome().equals("FAULT"), "a killed client's connection: " + s);
            assertEquals(-1, s.firstMismatch(), "every byte before the kill right: " + s);
            if (!s.ok()) {
                assertTrue(s.failureNanos() >= kill, "a connection failed before its client was killed: " + s);
                long since = Math.max(kill, s.lastReadNanos());
                assertTrue(s.failureNanos() - since <= SoakTest.DETECTION_BOUND.toNanos(), "detected "
                        + (s.failureNanos() - kill) / 1_000_000 + " ms after the kill and "
                        + (s.failureNanos() - since) / 1_000_000 + " ms after the later of the kill and its last"
                        + " byte read: " + s);
            }
        }
        assertEquals(kills, killed.size(), "clients killed");
        for (int inc : killed.keySet()) {
            assertTrue(!detections(inc).isEmpty(), "killing client " + inc + " cut none of its connections");
        }
        long firstKill = killed.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE);
        for (long nanos : ledger.headerless) {
            assertTrue(nanos >= firstKill, "a connection ended before its id arrived, and no client was killed yet");
        }
        // a leak keeps fds; the baseline, taken right after the warm-up, may still count one that
        // goes later (in upgrade mode the warm-up's upgrade session or the port's held rendezvous socket)
        assertTrue(after.fds() <= before.fds(), "the server's fds after all connections closed (before: " + before
                + ", after: " + after + ")");
        assertEquals(before.threads(), after.threads(), "the server's threads after all connections closed (before: "
                + before + ", after: " + after + ")");
    }
}
