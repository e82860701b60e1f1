package io.hadronio.app.evaluate;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * CPU time of a running process from Linux's {@code /proc}, per thread: the first field of
 * {@code /proc/PID/task/TID/schedstat} (nanoseconds on a CPU). Nanoseconds matter here: a
 * hadroNIO run's measured window can be a few milliseconds, below the 10 ms tick of
 * {@code /proc/PID/stat}. A window's CPU time is the growth of every thread alive at its end
 * ({@link #window}); summing all threads at both ends instead goes negative when the JVM
 * ends a JIT compiler thread in between. The CPU a thread used in the window before it
 * ended is not counted; the benchmarks end none of theirs there.
 */
public final class ProcessCpu {
    private ProcessCpu() {
    }

    // clock ticks per second of /proc/PID/stat (USER_HZ), 100 on Linux x86_64 and aarch64
    private static final long TICKS_PER_SECOND = 100;

    /**
     * CPU time of process {@code pid} from {@code /proc/PID/stat} (user + system, all threads,
     * ended ones too), in nanoseconds at a 10 ms tick; -1 if it is gone. One file: cheap enough
     * to read every few milliseconds, which {@link #threads} over many threads is not.
     */
    static long tickNanos(long pid) {
        try {
            String stat = Files.readString(Path.of("/proc", Long.toString(pid), "stat"));
            // fields after the command (which may hold spaces) start after its closing parenthesis
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
            // utime and stime are fields 14 and 15 of the line, 12 and 13 after the command
            return (Long.parseLong(f[11]) + Long.parseLong(f[12])) * (1_000_000_000L / TICKS_PER_SECOND);
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /** Nanoseconds on a CPU of each thread of process {@code pid}, by thread id; null if it is gone. */
    static Map<Long, Long> threads(long pid) {
        Map<Long, Long> cpu = new HashMap<>();
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(Path.of("/proc", Long.toString(pid), "task"))) {
            for (Path t : threads) {
                try {
                    String stat = Files.readString(t.resolve("schedstat")).trim();
                    int space = stat.indexOf(' ');
                    cpu.put(Long.parseLong(t.getFileName().toString()),
                            Long.parseLong(space < 0 ? stat : stat.substring(0, space)));
                } catch (IOException | NumberFormatException e) {
                    // the thread ended between listing and reading: not counted
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return cpu;
    }

    /**
     * This process's {@link #threads}, as {@code TID:NANOS,TID:NANOS,...} for a line of output
     * ({@link #parse} reads it back); empty if {@code /proc} cannot be read.
     */
    public static String ownThreads() {
        Map<Long, Long> cpu = threads(ProcessHandle.current().pid());
        if (cpu == null) {
            return "";
        }
        StringBuilder b = new StringBuilder();
        for (Map.Entry<Long, Long> e : cpu.entrySet()) {
            if (!b.isEmpty()) {
                b.append(',');
            }
            b.append(e.getKey()).append(':').append(e.getValue());
        }
        return b.toString();
    }

    /** What {@link #ownThreads} wrote; null if it is empty or not of that form. */
    static Map<Long, Long> parse(String threads) {
        if (threads == null || threads.isEmpty()) {
            return null;
        }
        Map<Long, Long> cpu = new HashMap<>();
        try {
            for (String t : threads.split(",")) {
                int colon = t.indexOf(':');
                cpu.put(Long.parseLong(t.substring(0, colon)), Long.parseLong(t.substring(colon + 1)));
            }
        } catch (RuntimeException e) {
            return null;
        }
        return cpu;
    }

    /** CPU nanoseconds from {@code open} to {@code end} (snapshots of {@link #threads}); -1 if either is missing. */
    static long window(Map<Long, Long> open, Map<Long, Long> end) {
        if (open == null || end == null) {
            return -1;
        }
        long sum = 0;
        for (Map.Entry<Long, Long> e : end.entrySet()) {
            sum += e.getValue() - open.getOrDefault(e.getKey(), 0L);
        }
        return sum;
    }
}
