package io.hadronio.app;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * At exit, one line with what this process used: {@code RESOURCES peak_rss_kb=N cpu_ns=N}.
 * Peak resident memory ({@code VmHWM}) is known exactly only by the process itself at its
 * end, so {@code hadronio evaluate} asks the benchmark JVMs it starts for this line with
 * {@code -Dhadronio.app.resources=true}.
 */
public final class ProcessResources {
    /** The environment variable that turns the line on. */
    public static final String VARIABLE = "HADRONIO_APP_RESOURCES";
    /** The start of the line. */
    public static final String PREFIX = "RESOURCES ";

    private ProcessResources() {
    }

    /** Registers the shutdown hook that prints the line, if {@link #VARIABLE} is {@code true}. */
    public static void reportAtExitIfAsked() {
        if (Boolean.parseBoolean(System.getenv(VARIABLE))) {
            Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                System.out.println(line());
                System.out.flush();
            }, "resources-at-exit"));
        }
    }

    static String line() {
        long cpu = ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
                ? os.getProcessCpuTime() : -1;
        return PREFIX + "peak_rss_kb=" + peakRssKb() + " cpu_ns=" + cpu;
    }

    /** {@code VmHWM} of {@code /proc/self/status} in KiB, or -1 where there is no such file. */
    static long peakRssKb() {
        try {
            for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (l.startsWith("VmHWM:")) {
                    return Long.parseLong(l.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // not Linux, or an unexpected format: unknown
        }
        return -1;
    }
}
