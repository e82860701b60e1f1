package io.hadronio.it.selector;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;

/** What a process costs, as Linux counts it: resident memory and open file descriptors. */
record ProcStats(long rssKiB, int fds) {
    /** This JVM, now. */
    static ProcStats self() throws IOException {
        long rss = -1;
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                rss = Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
            }
        }
        int fds;
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            fds = (int) s.count();
        }
        return new ProcStats(rss, fds);
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
