package io.hadronio.it.selector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What a process costs, as Linux counts it: resident memory and open file descriptors. */
public record ProcStats(long rssKiB, int fds) {
    /** This JVM, now. */
    static ProcStats self() throws IOException {
        return of(Path.of("/proc/self"));
    }

    /** Another process on this host, now. */
    public static ProcStats of(long pid) throws IOException {
        return of(Path.of("/proc", String.valueOf(pid)));
    }

    private static ProcStats of(Path proc) throws IOException {
        long rss = status(proc, "VmRSS:");
        int fds;
        try (Stream<Path> s = Files.list(proc.resolve("fd"))) {
            fds = (int) s.count();
        }
        return new ProcStats(rss, fds);
    }

    /** The threads a process runs, now. */
    public static int threads(long pid) throws IOException {
        return (int) status(Path.of("/proc", String.valueOf(pid)), "Threads:");
    }

    /** A number field of /proc/PID/status (the first word after the field's name), -1 if absent. */
    private static long status(Path proc, String field) throws IOException {
        for (String line : Files.readAllLines(proc.resolve("status"))) {
            if (line.startsWith(field)) {
                return Long.parseLong(line.substring(field.length()).trim().split("\\s+")[0]);
            }
        }
        return -1;
    }

    /** "rssKiB fds", as the peers print it. */
    @Override
    public String toString() {
        return rssKiB + " " + fds;
    }

    /** Parses the last two fields of a peer's line. */
    static ProcStats parse(String line) {
        String[] f = line.trim().split(" ");
        return new ProcStats(Long.parseLong(f[f.length - 2]), Integer.parseInt(f[f.length - 1]));
    }
}
