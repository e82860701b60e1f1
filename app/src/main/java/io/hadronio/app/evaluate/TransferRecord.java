package io.hadronio.app.evaluate;

/**
 * One JVM pair of the file transfers, one row of {@code transfers.csv}: {@code pattern}
 * ({@code fetch}: the server sends the file with {@code transferTo}; {@code upload}: it stores
 * what the client sends with {@code transferFrom}), both JVMs on {@code provider}; a failed pair
 * has {@code error} set and NaN elsewhere.
 *
 * @param repetition     1-based repetition
 * @param provider       JDK or hadroNIO (both JVMs)
 * @param pattern        fetch or upload
 * @param bytes          bytes per transfer
 * @param mbPerSec       MB/s over the measured transfers (10^6 bytes)
 * @param transport      the connection's transport, as the client reported it
 * @param elapsedSeconds the pair's wall time
 * @param error          why the pair failed, or null
 */
public record TransferRecord(int repetition, Provider provider, String pattern, long bytes, double mbPerSec,
                             String transport, double elapsedSeconds, String error) {
    public boolean ok() {
        return error == null;
    }
}
