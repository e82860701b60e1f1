package io.hadronio.ucx;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A second JVM running a {@code main} class of the test class path: the same java
 * binary and class path as this JVM, with native access enabled. Its stdout and stderr
 * go to a temporary file, shown in failure messages. {@link #close()} kills it if it is
 * still running, so a test that fails or times out leaves no process behind.
 */
final class ChildJvm implements AutoCloseable {
    // a child that has not finished by then is killed and reported
    static final Duration DEFAULT_EXIT_TIMEOUT = Duration.ofSeconds(60);

    private final Process process;
    private final Path log;
    private final String description;

    private ChildJvm(Process process, Path log, String description) {
        this.process = process;
        this.log = log;
        this.description = description;
    }

    /** Starts {@code main} with these arguments; {@code environment} is added to this JVM's environment. */
    static ChildJvm start(Class<?> main, Map<String, String> environment, String... args) throws IOException {
        String java = ProcessHandle.current().info().command()
                .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        List<String> command = new ArrayList<>();
        command.add(java);
        command.add("--enable-native-access=ALL-UNNAMED");
        command.add("-ea");
        command.add("-Xmx256m");
        // as the other modules' child JVMs: a short-lived JVM's C2 compilations are most of its CPU,
        // and on two cores they slow its partner and the test JVM; nothing here is about speed
        command.add("-XX:TieredStopAtLevel=1");
        command.add("-XX:+UseSerialGC");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(main.getName());
        command.addAll(List.of(args));
        Path log = Files.createTempFile("hadronio-child-" + main.getSimpleName(), ".log");
        ProcessBuilder builder = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile());
        builder.environment().putAll(environment);
        String description = main.getSimpleName() + " " + String.join(" ", args)
                + (environment.isEmpty() ? "" : " with " + environment);
        return new ChildJvm(builder.start(), log, description);
    }

    Process process() {
        return process;
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** Everything the child printed so far. */
    String output() {
        try {
            // not readString: UCX may log raw bytes (e.g. the name field of a corrupted address)
            return new String(Files.readAllBytes(log), StandardCharsets.UTF_8);
        } catch (IOException e) {
            return "(output unavailable: " + e + ")";
        }
    }

    /** Waits for the child to exit and returns its exit code; kills it and fails after {@code timeout}. */
    int awaitExit(Duration timeout) throws InterruptedException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            throw new AssertionError("child JVM (" + description + ") still running after " + timeout
                    + "; killed. Output:\n" + output());
        }
        return process.exitValue();
    }

    /** Describes the child and its output, for assertion messages. */
    String report() {
        return "child JVM (" + description + ")" + (process.isAlive() ? "" : " exited with " + process.exitValue())
                + ", output:\n" + output();
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(log);
        } catch (IOException ignored) {
            // a temp file left behind is harmless
        }
    }
}
