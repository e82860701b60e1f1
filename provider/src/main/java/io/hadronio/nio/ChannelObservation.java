package io.hadronio.nio;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.observe.ConnectionEvents;
import io.hadronio.observe.ConnectionInfo;
import io.hadronio.observe.Counters;
import io.hadronio.observe.Fallback;
import io.hadronio.observe.ObservedConnection;
import io.hadronio.observe.PathKind;
import io.hadronio.path.KernelStream;
import io.hadronio.path.Paths;
import io.hadronio.runtime.UcxRuntime;
import java.io.IOException;
import java.net.SocketAddress;

/**
 * A socket channel's connection as the observing tools see it (observe/): it joins the JVM's
 * listing and counters when it opens, leaves them when the channel closes, and answers the
 * listing from the lifecycle, the paths and the kernel socket. Never on a data path: the bytes
 * it reports are the paths' own counts.
 */
final class ChannelObservation implements ObservedConnection {
    private final UcxRuntime runtime;
    private final ConnectionLifecycle life;
    private final KernelStream kernel;
    private final Paths paths;
    // under this object's monitor: opened, then closed, each once
    private boolean opened;
    private boolean closed;
    // the addresses and time at the open (the local stream's emulated TCP addresses where it is one);
    // an address is formatted only when something reports it (text): formatting it at every open
    // was a tenth of a cold server's work per accepted connection
    private volatile SocketAddress local;
    private volatile SocketAddress remote;
    private volatile long openedAt;

    ChannelObservation(UcxRuntime runtime, ConnectionLifecycle life, KernelStream kernel, Paths paths) {
        this.runtime = runtime;
        this.life = life;
        this.kernel = kernel;
        this.paths = paths;
    }

    /** The connection is open (connect, finishConnect or accept): it joins the listing, once. */
    void opened() {
        synchronized (this) {
            if (opened || closed) {
                return;
            }
            opened = true;
            local = address(true);
            remote = address(false);
            openedAt = System.currentTimeMillis();
        }
        life.observeAs(remote);
        Counters.jvm().opened(this);
        if (ConnectionEvents.openedWanted()) {
            ConnectionEvents.opened(text(local), text(remote), paths.path().label(), paths.transport());
        }
    }

    /** The channel closed: the connection leaves the listing, its bytes count as closed ones. */
    void closed() {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            if (!opened) {
                return;
            }
        }
        if (Counters.jvm().closed(this) && ConnectionEvents.closedWanted()) {
            ConnectionEvents.closed(text(local), text(remote), paths.path().label(), sum(true), sum(false), openedAt);
        }
    }

    private SocketAddress address(boolean ofLocal) {
        try {
            return ofLocal ? kernel.localAddress() : kernel.remoteAddress();
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    private static String text(SocketAddress a) {
        return a == null ? "" : a.toString();
    }

    private long sum(boolean in) {
        long n = 0;
        for (PathKind k : PathKind.values()) {
            n += in ? paths.bytesIn(k) : paths.bytesOut(k);
        }
        return n;
    }

    @Override
    public ConnectionInfo info() {
        Fallback f = life.whyNotOnUcx(runtime.startFailed());
        String how = f == null ? null : life.fallbackHow();
        return new ConnectionInfo(text(local), text(remote), life.stateName(), paths.path().label(), paths.transport(),
                f == null ? "" : f.code(), f == null ? "" : how == null ? f.words() : f.words() + ": " + how,
                sum(true), sum(false), openedAt, life.upgradedAt());
    }

    @Override
    public long bytesIn(PathKind path) {
        return paths.bytesIn(path);
    }

    @Override
    public long bytesOut(PathKind path) {
        return paths.bytesOut(path);
    }
}
