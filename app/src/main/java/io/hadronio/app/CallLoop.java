package io.hadronio.app;

import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The closed loops of the application benchmarks ({@code grpc benchmark}, {@code jetty
 * benchmark}, {@code jgroups benchmark}): request/response calls of a real library, either
 * {@code inFlight} outstanding at once through its asynchronous API ({@link #concurrent}) or
 * one after another through its blocking API ({@link #sequential}), each for a warm-up and
 * then a measured duration. Every call's answer is checked by the caller; a wrong or failed
 * one is counted, never retried.
 */
public final class CallLoop {
    // an answer that takes longer than this ends the loop: something is stuck
    private static final long STUCK_SECONDS = 30;

    private CallLoop() {
    }

    /** Reports the outcome of one asynchronous call, exactly once. */
    @FunctionalInterface
    public interface Completion {
        void complete(boolean ok);
    }

    /** Starts one asynchronous call that reports to {@code done}. */
    @FunctionalInterface
    public interface AsyncCall {
        void start(Completion done) throws Exception;
    }

    /** One blocking call; true when its answer is the right one. */
    @FunctionalInterface
    public interface BlockingCall {
        boolean call() throws Exception;
    }

    /**
     * What one loop measured.
     *
     * @param inFlight calls outstanding at once
     * @param calls    calls started in the measured window (and answered)
     * @param failures calls answered wrongly or failed, warm-up included
     * @param seconds  the measured window, up to the last of its answers
     * @param latency  the measured calls' times from start to answer
     */
    public record Outcome(int inFlight, long calls, long failures, double seconds, LatencySummary latency) {
        public double perSecond() {
            return calls / seconds;
        }

        /** {@code in_flight=.. calls=.. failures=.. seconds=.. per_s=.. avg_us=.. p50_us=.. ...}. */
        public String resultFields() {
            return String.format(Locale.ROOT, "in_flight=%d calls=%d failures=%d seconds=%.3f per_s=%.1f %s",
                    inFlight, calls, failures, seconds, perSecond(), latency.resultFields());
        }

        /** For people. */
        public String describe() {
            return String.format(Locale.ROOT, "%d in flight: %.0f calls/s (%d calls in %.2f s, %d failed), %s",
                    inFlight, perSecond(), calls, seconds, failures, latency.describe());
        }
    }

    /**
     * Keeps {@code inFlight} calls outstanding: a new one starts as soon as one is answered,
     * for {@code warmup} and then {@code duration}.
     *
     * @throws IllegalStateException when answers stop coming for {@value #STUCK_SECONDS} s
     */
    public static Outcome concurrent(AsyncCall call, int inFlight, Duration warmup, Duration duration)
            throws InterruptedException {
        Semaphore permits = new Semaphore(inFlight);
        Samples samples = new Samples();
        AtomicLong failures = new AtomicLong();
        long measuredFrom = System.nanoTime() + warmup.toNanos();
        long end = measuredFrom + duration.toNanos();
        boolean anyMeasured = false;
        while (true) {
            if (!permits.tryAcquire(STUCK_SECONDS, TimeUnit.SECONDS)) {
                throw new IllegalStateException("no answer for " + STUCK_SECONDS + " s with " + inFlight + " in flight");
            }
            long started = System.nanoTime();
            // (a window shorter than the warm-up's answers still measures one call)
            if (started - end >= 0 && anyMeasured) {
                permits.release();
                break;
            }
            boolean measured = started - measuredFrom >= 0;
            anyMeasured |= measured;
            Completion done = ok -> {
                if (measured) {
                    samples.add(System.nanoTime() - started);
                }
                if (!ok) {
                    failures.incrementAndGet();
                }
                permits.release();
            };
            try {
                call.start(done);
            } catch (Exception e) {
                done.complete(false);
            }
        }
        if (!permits.tryAcquire(inFlight, STUCK_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("calls still unanswered after " + STUCK_SECONDS + " s");
        }
        double seconds = (System.nanoTime() - measuredFrom) / 1e9;
        return samples.outcome(inFlight, failures.get(), seconds);
    }

    /** Calls {@code call} one after another for {@code warmup} and then {@code duration}. */
    public static Outcome sequential(BlockingCall call, Duration warmup, Duration duration) {
        Samples samples = new Samples();
        long failures = 0;
        long measuredFrom = System.nanoTime() + warmup.toNanos();
        long end = measuredFrom + duration.toNanos();
        long started;
        // (a window shorter than one call still measures one)
        while ((started = System.nanoTime()) - end < 0 || samples.isEmpty()) {
            boolean ok;
            try {
                ok = call.call();
            } catch (Exception e) {
                ok = false;
            }
            if (started - measuredFrom >= 0) {
                samples.add(System.nanoTime() - started);
            }
            if (!ok) {
                failures++;
            }
        }
        double seconds = (System.nanoTime() - measuredFrom) / 1e9;
        return samples.outcome(1, failures, seconds);
    }

    /** Times of the measured calls, added from any thread. */
    private static final class Samples {
        private long[] nanos = new long[1 << 16];
        private int count;

        synchronized void add(long n) {
            if (count == nanos.length) {
                nanos = Arrays.copyOf(nanos, count * 2);
            }
            nanos[count++] = n;
        }

        synchronized boolean isEmpty() {
            return count == 0;
        }

        synchronized Outcome outcome(int inFlight, long failures, double seconds) {
            if (count == 0) {
                throw new IllegalStateException("no call was answered in the measured window");
            }
            return new Outcome(inFlight, count, failures, seconds, LatencySummary.of(Arrays.copyOf(nanos, count)));
        }
    }
}
