package io.hadronio.observe;

/**
 * An open connection as the observing tools see it ({@link OpenConnections}): a snapshot for the
 * listing and its bytes by path. Asked only by those tools, never on a data path.
 */
public interface ObservedConnection {
    /** What the connection is now: addresses, state, path, why not on UCX, bytes, upgrade time. */
    ConnectionInfo info();

    /** Bytes the application read over {@code path} so far (a racy read of the reader's count). */
    long bytesIn(PathKind path);

    /** Bytes the application wrote over {@code path} so far (a racy read of the writer's count). */
    long bytesOut(PathKind path);
}
