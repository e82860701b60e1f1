package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * A peer killed with SIGKILL at a random moment — while it streams 64 KiB or 1 MiB
 * messages to us (rendezvous over {@code cma} in flight), while we stream to it, or while
 * it is idle — must not take this process down: UCX reports the death as an error (the
 * endpoint's error handler, or outstanding requests that complete with an error status),
 * nothing received is corrupt, nothing stays stuck, and the worker goes on working for
 * other peers. A peer killed right after the connection was made, before any of our
 * rendezvous sends completed, is not always reported by UCX (its keepalive stays silent
 * and the sends stay in progress); there the survivor force-closes the endpoint when the
 * peer's TCP connection ends, which is what a provider must do. A peer killed in the middle
 * of UCX's write into our shared-memory receive FIFO (about one early kill in 150; every
 * time in the {@code tear} cases) leaves an element taken and never written, behind which
 * all later messages wait; the worker must complete it once the death is reported (see
 * {@link UcxWorker#reportDeadPeer}), so that the next peer's hello gets through. Both sides
 * use {@link UcxContext.Builder#peerFailureDetection} and {@link ErrorMode#PEER}, and the
 * transports stay shared memory.
 *
 * <p>The survivor is a child JVM too ({@link UcxCrashSurvivor}, which starts and kills
 * the peers, {@link UcxCrashPeer}): should UCX abort it, this test reports that with the
 * output instead of losing the test JVM. In error mode NONE the survivor aborts
 * ({@code process_vm_readv ... No such process} inside {@code ucp_worker_progress}),
 * see {@code docs/crash-isolation.md}. Behaviour only: nothing here asserts how fast the
 * death is noticed (the survivor gives UCX 30 s per kill).
 *
 * <p>Kills per case: {@value #DEFAULT_ROUNDS}, or {@code -Dhadronio.crash.rounds=N}.
 */
@Tag("slow")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class UcxPeerCrashTest {
    static final int DEFAULT_ROUNDS = 5;
    private static final Set<String> SHARED_MEMORY = Set.of("sysv", "posix", "cma", "xpmem", "knem");
    // anywhere in a line: UCX writes its log lines to the same stdout in pieces, and a piece
    // (its warning when the worker completes a torn FIFO element) may stand before ours
    private static final Pattern ROUND = Pattern.compile("(?m)ROUND (role=.*)$");
    private static final Pattern HEALTHY_REPAIRED = Pattern.compile("(?m)HEALTHY lanes=.* repaired=(\\d+)$");
    private static final Pattern FIELD = Pattern.compile("(\\w+)=(\\[[^]]*]|\\{[^}]*}|\\S+)");
    // a status and how many requests ended with it, in the statuses field: {-16=2, -3=2}
    private static final Pattern STATUS = Pattern.compile("(-?\\d+)=\\d+");

    @ParameterizedTest(name = "{0} {1} B, early kill: {2}, close on TCP EOF: {3}")
    @CsvSource({
        // mid-stream (after the first message completed) or idle: UCX reports it by itself
        "receive, 65536,   false, false",
        "receive, 1048576, false, false",
        "send,    65536,   false, false",
        "send,    1048576, false, false",
        "idle,    8,       false, false",
        // the same, with the survivor force-closing the endpoint when the TCP connection ends
        "receive, 1048576, false, true",
        "send,    1048576, false, true",
        // killed before any message completed: UCX alone may never report a peer that dies while
        // our first rendezvous sends wait for it; the forced close on TCP EOF always ends them
        "send,    1048576, true,  true",
        "receive, 1048576, true,  true",
        // killed inside UCX's write into our FIFO (what an early kill hits now and then): every round
        // leaves an element unwritten that the worker must complete, found by the TCP EOF or by UCX
        "tear,    4096,    false, true",
        "tear,    4096,    false, false"})
    void shouldSeeAnErrorAndLiveOnWhenAPeerIsKilled(String role, int size, boolean earlyKill, boolean closeOnEof)
            throws Exception {
        int rounds = Integer.getInteger("hadronio.crash.rounds", DEFAULT_ROUNDS);
        try (ChildJvm survivor = ChildJvm.start(UcxCrashSurvivor.class, Map.of(), "rounds=" + rounds, "roles=" + role,
                "sizes=" + size, "peerFailure=100ms", "closeOnEof=" + closeOnEof, "timeoutMs=30000",
                "earlyKill=" + earlyKill, earlyKill ? "killMinMs=0" : "killMinMs=20",
                earlyKill ? "killMaxMs=2" : "killMaxMs=300")) {
            int exit = survivor.awaitExit(Duration.ofMinutes(8));
            String output = survivor.output();
            assertEquals(0, exit, () -> "the survivor died: " + survivor.report());
            assertTrue(output.contains(UcxCrashSurvivor.SURVIVED), survivor::report);
            assertTrue(output.contains("HEALTHY"), () -> "the worker did not work on after the kills: "
                    + survivor.report());
            if (role.equals("tear")) {
                // each torn element was completed (else the next peer's hello had stalled), and only those
                Matcher healthy = HEALTHY_REPAIRED.matcher(output);
                assertTrue(healthy.find(), survivor::report);
                assertEquals(rounds, Integer.parseInt(healthy.group(1)), survivor::report);
            }

            List<Map<String, String>> lines = new ArrayList<>();
            Matcher m = ROUND.matcher(output);
            while (m.find()) {
                Map<String, String> fields = new LinkedHashMap<>();
                Matcher f = FIELD.matcher(m.group(1));
                while (f.find()) {
                    fields.put(f.group(1), f.group(2));
                }
                lines.add(fields);
            }
            assertEquals(rounds, lines.size(), survivor::report);
            for (Map<String, String> round : lines) {
                String line = round.toString();
                String lanes = round.get("lanes");
                assertFalse(lanes.contains("tcp"), () -> "not shared memory: " + line);
                assertTrue(SHARED_MEMORY.stream().anyMatch(lanes::contains), () -> "not shared memory: " + line);
                String detect = round.get("detect");
                // UCX's error handler, a request that completed with an error, or (closeOnEof) the TCP
                // EOF that made the survivor force-close the endpoint
                assertTrue(detect.matches("(handler|request|exception):.*\\(-\\d+\\)")
                        || (closeOnEof && detect.equals("tcp-eof")), () -> "the death was not seen: " + line);
                assertEquals("0", round.get("corrupt"), () -> "a received message was corrupt: " + line);
                assertEquals("0", round.get("stuck"), () -> "requests stayed in progress: " + line);
                Matcher status = STATUS.matcher(round.get("statuses"));
                while (status.find()) {
                    int value = Integer.parseInt(status.group(1));
                    assertTrue(value <= UcsStatus.OK, () -> "a request ended neither OK nor with an error: " + line);
                }
            }
        }
    }
}
