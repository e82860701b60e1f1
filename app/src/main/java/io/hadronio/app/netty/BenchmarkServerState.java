package io.hadronio.app.netty;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What a benchmark server counts: connections finished, of how many the client announced
 * times the sessions (client lengths) the server was started for; every session of one
 * client announces the same count.
 */
final class BenchmarkServerState {
    private final int sessions;
    private final AtomicInteger finished = new AtomicInteger();
    private final AtomicInteger failures = new AtomicInteger();
    private volatile long expected = Long.MAX_VALUE;
    private final CompletableFuture<Void> done = new CompletableFuture<>();

    BenchmarkServerState(int sessions) {
        this.sessions = Math.max(1, sessions);
    }

    /** A connection's header said how many connections the client makes per session. */
    void expect(long connections) {
        expected = connections * sessions;
        if (finished.get() >= expected) {
            done.complete(null);
        }
    }

    void finished(boolean failed) {
        if (failed) {
            failures.incrementAndGet();
        }
        if (finished.incrementAndGet() >= expected) {
            done.complete(null);
        }
    }

    int finished() {
        return finished.get();
    }

    int failures() {
        return failures.get();
    }

    CompletableFuture<Void> done() {
        return done;
    }
}
