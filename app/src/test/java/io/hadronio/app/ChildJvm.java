package io.hadronio.app;

import static org.junit.jupiter.api.Assertions.fail;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code hadronio} command in a child JVM of the test's class path, on the JDK's provider or
 * hadroNIO (a JVM's provider is fixed at its first use of NIO), whose output is collected as it
 * comes. The JVMs stop at C1, as the evaluation's smoke profile does.
 */
final class ChildJvm {
    /** {@code hadronio args} on {@code provider} ("jdk" or "hadronio"). */
    static ChildJvm start(String provider, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "--enable-native-access=ALL-UNNAMED",
                "-cp", System.getProperty("java.class.path"), HadronioCommand.class.getName()));
        cmd.addAll(List.of(args));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().put("DISABLE_HADRONIO", Boolean.toString(provider.equals("jdk")));
        return new ChildJvm(String.join(" ", args), pb.start());
    }

    private final String name;
    private final Process process;
    private final StringBuilder output = new StringBuilder();
    private final Thread reader;

    private ChildJvm(String name, Process process) {
        this.name = name;
        this.process = process;
        this.reader = Thread.ofPlatform().daemon().start(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    synchronized (output) {
                        output.append(line).append('\n');
                        output.notifyAll();
                    }
                }
            } catch (IOException e) {
                // the process was killed
            }
        });
    }

    /** The first group of the first line matching {@code pattern}, waiting up to {@code seconds}. */
    String await(Pattern pattern, long seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        synchronized (output) {
            while (true) {
                Matcher m = pattern.matcher(output);
                if (m.find()) {
                    return m.group(1);
                }
                long left = deadline - System.nanoTime();
                if (left <= 0 || !process.isAlive()) {
                    fail("no '" + pattern + "' from " + name + ":\n" + output);
                }
                output.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(Math.min(left, TimeUnit.SECONDS.toNanos(1)))));
            }
        }
    }

    int waitFor(long seconds) throws InterruptedException {
        if (!process.waitFor(seconds, TimeUnit.SECONDS)) {
            fail(name + " still running after " + seconds + " s:\n" + output());
        }
        reader.join(5000);
        return process.exitValue();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    List<String> results() {
        return output().lines().filter(l -> l.startsWith("RESULT ")).toList();
    }

    String output() {
        synchronized (output) {
            return "--- " + name + ":\n" + output;
        }
    }

    /** Stops the JVM as the bench script does (TERM), forcibly if it does not exit. */
    void kill() {
        process.destroy();
        try {
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
        }
    }
}
