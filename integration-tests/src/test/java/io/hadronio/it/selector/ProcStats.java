package io.hadronio.it.selector;

import java.io.IOException;

/** What a process costs, as Linux counts it: resident memory and open file descriptors. */
record ProcStats(long rssKiB, int fds) {
    /** This JVM, now. */
    static ProcStats self() throws IOException {
        return new ProcStats(ResourceFigures.rssKiB(), ResourceFigures.count("fd"));
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
