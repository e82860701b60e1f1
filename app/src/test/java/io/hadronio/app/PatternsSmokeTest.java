package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.hadronio.ucx.Ucx;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code hadronio patterns} briefly, in real JVMs on the JDK's provider and on hadroNIO: every
 * pattern completes, checks every answer and byte it got back (none wrong) and names the
 * provider asked for. Behaviour only; no figure is checked.
 */
@Tag("slow")
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class PatternsSmokeTest {
    private static final Pattern LISTENING = Pattern.compile("listening on [^ ]*:(\\d+)");

    private final List<ChildJvm> jvms = new ArrayList<>();

    @TempDir
    Path dir;

    @AfterEach
    void stopJvms() {
        jvms.forEach(ChildJvm::kill);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void handoffShouldGetEveryAnswerBackFromBothServers(String provider) throws Exception {
        for (String server : List.of("echo", "dispatch")) {
            String port = server(provider, server);
            String line = client(provider, "-r", "127.0.0.1:" + port, "--pattern", "handoff", "--warmup", "0.2", "-d", "0.5");
            assertTrue(Long.parseLong(field(line, "per_s")) > 0, line);
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void bulkShouldGetEveryByteBackUnchanged(String provider) throws Exception {
        String port = server(provider, "echo");
        String line = client(provider, "-r", "127.0.0.1:" + port, "--pattern", "bulk", "--sessions", "3",
                "--bytes", String.valueOf(4 << 20), "--warmup", "0", "--passes", "2");
        assertTrue(Double.parseDouble(field(line, "mb_per_s")) > 0, line);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void connectionsShouldEachGetEveryAnswerBack(String provider) throws Exception {
        String port = server(provider, "echo");
        String line = client(provider, "-r", "127.0.0.1:" + port, "--pattern", "connections", "--requests", "20",
                "--warmup", "0.2", "-d", "0.5");
        assertTrue(Double.parseDouble(field(line, "conn_per_s")) > 0, line);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void fetchAndUploadShouldMoveTheWholeFile(String provider) throws Exception {
        String bytes = String.valueOf((8 << 20) + 12345);
        Path file = dir.resolve("served.dat");
        String port = server(provider, "file", "--file", file.toString(), "--bytes", bytes);
        for (String pattern : List.of("fetch", "upload")) {
            String line = client(provider, "-r", "127.0.0.1:" + port, "--pattern", pattern, "--bytes", bytes,
                    "--warmup-passes", "1", "--passes", "2");
            assertEquals(bytes, field(line, "bytes"), line);
        }
        assertEquals(Long.parseLong(bytes), Files.size(file));
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"jdk", "hadronio"})
    void wakeupShouldMeasureEveryCase(String provider) throws Exception {
        assumeProvider(provider);
        ChildJvm jvm = start(provider, "patterns", "--pattern", "wakeup", "--warmup", "0.1", "-d", "0.3",
                "--delays", "10,300");
        assertEquals(0, jvm.waitFor(60), jvm::output);
        List<String> lines = jvm.results();
        assertEquals(3, lines.size(), jvm::output);
        for (String line : lines) {
            assertEquals(provider, field(line, "provider"), jvm::output);
            assertTrue(Long.parseLong(field(line, "hops")) > 0, line);
        }
    }

    /** A server of {@code pattern} (and {@code more} options); returns its port. */
    private String server(String provider, String pattern, String... more) throws Exception {
        assumeProvider(provider);
        List<String> args = new ArrayList<>(List.of("patterns", "-s", "--pattern", pattern, "-a", "127.0.0.1:0"));
        args.addAll(List.of(more));
        return start(provider, args.toArray(String[]::new)).await(LISTENING, 60);
    }

    /** A client run: exits 0 with one RESULT line for the provider asked for, nothing wrong; returns the line. */
    private String client(String provider, String... args) throws Exception {
        List<String> all = new ArrayList<>(List.of("patterns"));
        all.addAll(List.of(args));
        ChildJvm client = start(provider, all.toArray(String[]::new));
        assertEquals(0, client.waitFor(90), () -> client.output() + "\n--- server:\n" + jvms.getFirst().output());
        List<String> lines = client.results();
        assertEquals(1, lines.size(), client::output);
        String line = lines.getFirst();
        assertEquals(provider, field(line, "provider"), client::output);
        assertEquals("0", field(line, "failures"), client::output);
        return line;
    }

    private ChildJvm start(String provider, String... args) throws Exception {
        ChildJvm jvm = ChildJvm.start(provider, args);
        jvms.add(jvm);
        return jvm;
    }

    private static void assumeProvider(String provider) {
        if (provider.equals("hadronio")) {
            assumeTrue(Ucx.isAvailable(), () -> "UCX not available: " + Ucx.unavailableReason());
        }
    }

    private static String field(String line, String key) {
        return Arrays.stream(line.split(" ")).filter(f -> f.startsWith(key + "=")).map(f -> f.substring(key.length() + 1))
                .findFirst().orElseThrow(() -> new AssertionError("no " + key + " in " + line));
    }
}
