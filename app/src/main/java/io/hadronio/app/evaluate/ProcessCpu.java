package io.hadronio.app.evaluate;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time a running process has used so far, from Linux's {@code /proc}: the sum over its
 * threads of {@code /proc/PID/task/TID/schedstat}'s first field (nanoseconds on a CPU).
 * Nanoseconds matter here: a hadroNIO run's measured window can be a few milliseconds, below
 * the 10 ms tick of {@code /proc/PID/stat}. Threads that ended before the sample are not
 * counted; the benchmarks start none in their measured window.
 */
final class ProcessCpu {
    private ProcessCpu() {
    }

    /** Nanoseconds of CPU time of process {@code pid}, or -1 if it is gone or there is no {@code /proc}. */
    static long nanos(long pid) {
        Path tasks = Path.of("/proc", Long.toString(pid), "task");
        long sum = 0;
        try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
            for (Path t : threads) {
                try {
                    String stat = Files.readString(t.resolve("schedstat")).trim();
                    int space = stat.indexOf(' ');
                    sum += Long.parseLong(space < 0 ? stat : stat.substring(0, space));
                } catch (IOException | NumberFormatException e) {
                    // the thread ended between listing and reading: not counted
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return sum;
    }
}
