package io.hadronio.observe;

import java.net.InetSocketAddress;
import java.net.SocketAddress;

/**
 * The socket channel's JFR events, shaped as the JDK's {@code SocketChannelImpl} emits its own
 * ({@code if (!SocketReadEvent.enabled()) return implRead(buf); ... offer(...)}), through the
 * public API: {@link #readEnabled()} asks a static final event object whether its type is
 * enabled (a static field and a plain one once JFR instrumented the class; a constant
 * {@code false}, folded by the JIT, while JFR never started), so a JVM that records nothing pays
 * one such check per call and allocates nothing. Only a recording JVM makes an event per call
 * (which escape analysis usually removes), and commits those past the threshold.
 */
public final class SocketEvents {
    private SocketEvents() {
    }

    /** Asked only isEnabled(), never begun or committed: one object for every thread. Loaded only with jdk.jfr. */
    private static final class Probes {
        static final SocketReadEvent READ = new SocketReadEvent();
        static final SocketWriteEvent WRITE = new SocketWriteEvent();
    }

    /** True while a recording has {@code io.hadronio.SocketRead} enabled. */
    public static boolean readEnabled() {
        return JdkModules.jfrStarted() && Probes.READ.isEnabled();
    }

    /** True while a recording has {@code io.hadronio.SocketWrite} enabled. */
    public static boolean writeEnabled() {
        return JdkModules.jfrStarted() && Probes.WRITE.isEnabled();
    }

    /** An event begun now, for a read about to start. */
    public static SocketReadEvent beginRead() {
        SocketReadEvent e = new SocketReadEvent();
        e.begin();
        return e;
    }

    /** An event begun now, for a write about to start. */
    public static SocketWriteEvent beginWrite() {
        SocketWriteEvent e = new SocketWriteEvent();
        e.begin();
        return e;
    }

    /** The read ended with {@code n} bytes (-1: end of stream); committed if it took the threshold or more. */
    public static void endRead(SocketReadEvent e, long n, SocketAddress remote, long timeoutMillis, PathKind path) {
        e.end();
        if (e.shouldCommit()) {
            if (remote instanceof InetSocketAddress isa) {
                e.host = isa.getHostString();
                e.address = isa.getAddress() == null ? "" : isa.getAddress().getHostAddress();
                e.port = isa.getPort();
            }
            e.timeout = timeoutMillis;
            e.bytesRead = Math.max(n, 0);
            e.endOfStream = n < 0;
            e.path = path.label();
            e.commit();
        }
    }

    /** The write ended with {@code n} bytes; committed if it took the threshold or more. */
    public static void endWrite(SocketWriteEvent e, long n, SocketAddress remote, PathKind path) {
        e.end();
        if (e.shouldCommit()) {
            if (remote instanceof InetSocketAddress isa) {
                e.host = isa.getHostString();
                e.address = isa.getAddress() == null ? "" : isa.getAddress().getHostAddress();
                e.port = isa.getPort();
            }
            e.bytesWritten = Math.max(n, 0);
            e.path = path.label();
            e.commit();
        }
    }
}
