package io.hadronio.app.evaluate;

import io.hadronio.ucx.Ucx;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;

/**
 * Where and how the results were made: written at the top of the result files and of
 * docs/EVALUATION.md.
 *
 * @param cpuModel    {@code model name} of /proc/cpuinfo
 * @param cores       processors the JVM sees
 * @param memoryKb    MemTotal of /proc/meminfo
 * @param kernel      os.name and os.version
 * @param jdk         the benchmark JVMs' Java version and VM
 * @param ucx         UCX version (or why it is unavailable)
 * @param hadronio    the git commit the application was built from, if known
 * @param loadAverage /proc/loadavg at the start (other load on the machine disturbs the figures)
 * @param loadAverageAtEnd /proc/loadavg at the end
 * @param pinning     which cores server and client ran on
 * @param profile     smoke, quick or full
 * @param commandLine the command that made the results
 * @param started     when the runner started
 * @param finished    when it finished
 */
public record Environment(String cpuModel, int cores, long memoryKb, String kernel, String jdk, String ucx,
                          String hadronio, String loadAverage, String loadAverageAtEnd, String pinning, String profile, String commandLine,
                          String started, String finished) {

    static Environment now(String pinning, String profile, String commandLine, String revision) {
        return new Environment(readCpuModel(), Runtime.getRuntime().availableProcessors(), readMemoryKb(),
                System.getProperty("os.name") + " " + System.getProperty("os.version"),
                "Java " + Runtime.version() + " (" + System.getProperty("java.vm.name") + ")", ucxVersion(), revision,
                firstLine(Path.of("/proc/loadavg")), "", pinning, profile, commandLine, Instant.now().toString(), "");
    }

    Environment finishedNow() {
        return new Environment(cpuModel, cores, memoryKb, kernel, jdk, ucx, hadronio, loadAverage,
                firstLine(Path.of("/proc/loadavg")), pinning, profile, commandLine, started, Instant.now().toString());
    }

    private static String ucxVersion() {
        try {
            return Ucx.isAvailable() ? "UCX " + Ucx.version() : "unavailable: " + Ucx.unavailableReason().getMessage();
        } catch (LinkageError | RuntimeException e) {
            return "unavailable: " + e;
        }
    }

    private static String readCpuModel() {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (String l : lines) {
                if (l.startsWith("model name")) {
                    return l.substring(l.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException e) {
            // not Linux
        }
        return System.getProperty("os.arch");
    }

    private static long readMemoryKb() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/meminfo"))) {
                if (l.startsWith("MemTotal:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux
        }
        return -1;
    }

    /** The 1-minute load average in a {@code /proc/loadavg} line, NaN if unknown. */
    static double oneMinuteLoad(String loadavg) {
        try {
            return Double.parseDouble(loadavg.trim().split("\\s+")[0]);
        } catch (RuntimeException e) {
            return Double.NaN;
        }
    }

    private static String firstLine(Path p) {
        try {
            return Files.readAllLines(p).getFirst().trim();
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }
}
