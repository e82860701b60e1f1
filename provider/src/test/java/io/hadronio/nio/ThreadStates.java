package io.hadronio.nio;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/** Waiting, in tests, until a thread is inside a method (not just about to call it). */
final class ThreadStates {
    private ThreadStates() {
    }

    /** Returns once {@code t}'s stack shows {@code method}; fails after 20 s or if {@code t} ended. */
    static void awaitIn(Thread t, String method) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (Arrays.stream(t.getStackTrace()).noneMatch(e -> e.getMethodName().equals(method))) {
            assertTrue(t.isAlive() && System.nanoTime() < deadline, t + " is not in " + method);
            Thread.sleep(5);
        }
    }
}
