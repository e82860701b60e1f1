package io.hadronio.app.evaluate;

/**
 * The outcome of one run of one point, one row of {@code runs.csv}. Latency fields are NaN
 * for throughput runs; a failed run has {@code error} set and NaN elsewhere.
 *
 * @param repetition        1-based repetition this run belongs to
 * @param provider          who carried the bytes
 * @param mode              blocking, nonblocking, netty or raw
 * @param metric            throughput or latency
 * @param size              message size, bytes
 * @param messages          measured operations (writes or round trips)
 * @param opsPerSec         operations per second (round trips per second for latency)
 * @param bytesPerSec       payload bytes per second, one direction
 * @param latencyMeanUs     mean round trip, µs
 * @param latencyP50Us      median round trip, µs
 * @param latencyP99Us      99th percentile, µs
 * @param latencyP999Us     99.9th percentile, µs
 * @param clientCpuUsPerOp  client CPU time during the measured window per operation, µs
 * @param serverCpuUsPerOp  server CPU time during the measured window per operation, µs
 * @param clientPeakRssKb   client's peak resident memory (VmHWM), KiB
 * @param serverPeakRssKb   server's peak resident memory, KiB
 * @param transport         the transport the client's connection used ({@code cma,sysv}, {@code kernel-tcp})
 * @param elapsedSeconds    wall time of the whole run, both JVMs' start to exit
 * @param error             why the run failed, or null
 */
public record RunRecord(int repetition, Provider provider, Mode mode, Metric metric, int size, long messages,
                        double opsPerSec, double bytesPerSec, double latencyMeanUs, double latencyP50Us,
                        double latencyP99Us, double latencyP999Us, double clientCpuUsPerOp, double serverCpuUsPerOp,
                        long clientPeakRssKb, long serverPeakRssKb, String transport, double elapsedSeconds,
                        String error) {

    public Point point() {
        return new Point(provider, mode, metric, size);
    }

    public boolean ok() {
        return error == null;
    }

    static RunRecord failed(int repetition, Point p, double elapsedSeconds, String error) {
        double nan = Double.NaN;
        return new RunRecord(repetition, p.provider(), p.mode(), p.metric(), p.size(), 0, nan, nan, nan, nan, nan, nan,
                nan, nan, -1, -1, "", elapsedSeconds, error);
    }
}
