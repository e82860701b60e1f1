package io.hadronio.app.evaluate;

/**
 * One run of the load mode, one row of {@code load.csv}: {@code connections} connections
 * offering {@code offeredPerSec} requests per second together to an echo server of
 * {@code mode}; a failed run has {@code error} set and NaN elsewhere.
 *
 * @param repetition           1-based repetition this run belongs to (0: the medians of a {@link LoadSummary})
 * @param provider             JDK or hadroNIO
 * @param mode                 the server's model: blocking (thread per connection), nonblocking (one Selector), netty
 * @param connections          connections
 * @param length               request and response bytes
 * @param offeredPerSec        requests per second offered
 * @param achievedPerSec       responses per second received in the measured window
 * @param latencyMeanUs        response time mean, µs (from when the request was due)
 * @param latencyP50Us         median
 * @param latencyP99Us         99th percentile
 * @param latencyP999Us        99.9th percentile
 * @param clientCpuUsPerRequest client CPU per answered request, µs
 * @param serverCpuUsPerRequest server CPU per answered request, µs
 * @param clientPeakRssKb      client's peak RSS, KiB
 * @param serverPeakRssKb      server's peak RSS, KiB
 * @param transport            the first connection's transport
 * @param elapsedSeconds       wall time from the previous rate's result (the first: from the pair's start)
 * @param error                why the run failed, or null
 */
public record LoadRecord(int repetition, Provider provider, Mode mode, int connections, int length, double offeredPerSec,
                         double achievedPerSec, double latencyMeanUs, double latencyP50Us, double latencyP99Us,
                         double latencyP999Us, double clientCpuUsPerRequest, double serverCpuUsPerRequest,
                         long clientPeakRssKb, long serverPeakRssKb, String transport, double elapsedSeconds,
                         String error) {

    public boolean ok() {
        return error == null;
    }

    /** The server kept up: it answered at least {@link LoadPlan#SATURATED} of what was offered. */
    public boolean keptUp() {
        return ok() && achievedPerSec >= LoadPlan.SATURATED * offeredPerSec;
    }

    static LoadRecord failed(int repetition, Provider p, Mode m, int connections, int length, double offered,
                             double elapsed, String error) {
        double nan = Double.NaN;
        return new LoadRecord(repetition, p, m, connections, length, offered, nan, nan, nan, nan, nan, nan, nan, -1, -1, "",
                elapsed, error);
    }
}
