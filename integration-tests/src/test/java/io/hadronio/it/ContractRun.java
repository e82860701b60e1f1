package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One connection with a {@link Contract} role on each side: one in this JVM, the other
 * in a {@code Peer contract} child. Fails with whichever side failed first (the other
 * may then never finish), with the child's output.
 */
final class ContractRun {
    private static final AtomicInteger IDS = new AtomicInteger();

    /** This JVM's side: it may wait for the child's result line; returns its transport. */
    interface LocalSide {
        String run(CompletableFuture<String> childResult) throws Exception;
    }

    /** The transports each side saw right after connect/accept. */
    record Transports(String here, String child) {
    }

    private ContractRun() {
    }

    static int nextId() {
        return IDS.incrementAndGet();
    }

    /**
     * Starts {@code local} (this JVM's side: it returns its transport) on its own thread,
     * sends the child {@code command} (an {@code accept} or {@code connect} with this id)
     * and waits for both.
     */
    static Transports run(ChildJvm child, int id, String command, Callable<String> local, String what)
            throws Exception {
        return run(child, id, command, childResult -> local.call(), what);
    }

    /** As {@link #run(ChildJvm, int, String, Callable, String)}, with a local side that may wait for the child. */
    static Transports run(ChildJvm child, int id, String command, LocalSide local, String what)
            throws Exception {
        CompletableFuture<String> remote = CompletableFuture.supplyAsync(() -> {
            try {
                return child.expect("RESULT " + id + " ");
            } catch (InterruptedException e) {
                throw new IllegalStateException(e);
            }
        }, ItSupport.THREADS);
        ItSupport.Task<String> here = ItSupport.start("local-" + id, () -> local.run(remote));
        child.send(command);
        CompletableFuture<Void> settled = new CompletableFuture<>();
        here.result().whenComplete((v, e) -> {
            if (e != null) {
                settled.complete(null);
            }
        });
        remote.whenComplete((v, e) -> {
            if (e != null || !v.endsWith(" OK")) {
                settled.complete(null);
            }
        });
        CompletableFuture.allOf(here.result(), remote).whenComplete((v, e) -> settled.complete(null));
        try {
            settled.get(ChildJvm.LINE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            throw new AssertionError("no outcome of " + what + ": this JVM's side "
                    + (here.result().isDone() ? "done" : "still running") + ", " + child.report());
        }
        Throwable localFailure = failure(here.result());
        String childFailure = remote.isCompletedExceptionally() ? String.valueOf(failure(remote))
                : remote.isDone() && !remote.get().endsWith(" OK") ? remote.get() : null;
        if (childFailure != null) {
            AssertionError e = new AssertionError("the child's side of " + what + ": " + childFailure
                    + "\n" + child.report());
            if (localFailure != null) {
                e.addSuppressed(localFailure);
            }
            throw e;
        }
        if (localFailure != null) {
            throw new AssertionError("this JVM's side of " + what
                    + (remote.isDone() ? "" : " (the child's side still running)"), localFailure);
        }
        return new Transports(here.result().get(), remote.get().split(" ")[0]);
    }

    private static Throwable failure(CompletableFuture<?> f) throws InterruptedException {
        if (!f.isCompletedExceptionally()) {
            return null;
        }
        try {
            f.get();
            return null;
        } catch (ExecutionException e) {
            return e.getCause();
        }
    }

    /**
     * {@code "ucx:"}: any UCX path (in eager mode; in upgrade mode "unix", the local stream, or
     * "tcp" without local streams); {@code "tcp"}: plain TCP on a hadroNIO channel; {@code "jdk"}:
     * not hadroNIO's channel.
     */
    static void assertTransport(String expected, String actual, String side) {
        if (expected.equals("ucx:") && ChildJvm.UPGRADE_MODE) {
            // checked right after connect/accept: in upgrade mode every connection starts on its
            // local stream or kernel TCP (it moves to UCX once used a while; UpgradeTest and the
            // soak check that)
            expected = ChildJvm.LOCAL_STREAM ? "unix" : "tcp";
        }
        if (expected.equals("ucx:")) {
            assertTrue(actual.startsWith("ucx:"), side + " must be on UCX, is on " + actual);
        } else {
            assertEquals(expected, actual, side + "'s transport");
        }
    }
}
