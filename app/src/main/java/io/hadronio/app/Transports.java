package io.hadronio.app;

import io.hadronio.HadronioProvider;
import io.hadronio.HadronioSocketOptions;
import java.io.IOException;
import java.nio.channels.NetworkChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Collection;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

/**
 * The path a channel's bytes take, as the benchmarks report it: {@code cma,sysv} (UCX
 * transports) for a hadroNIO channel on UCX, {@code kernel-tcp} for the JDK's channels and
 * for a hadroNIO channel whose connection is plain TCP, {@code kernel-unix} for one on a
 * local Unix stream ({@code hadronio.local.stream}). Reads hadroNIO's
 * {@code transports()} reflectively, so that the same code runs on either provider.
 *
 * <p>The application benchmarks ({@code grpc|jetty benchmark}, {@code jgroups benchmark}) name
 * paths as hadroNIO's {@link HadronioSocketOptions#TRANSPORT} does instead ({@link #path}):
 * {@code ucx:cma,sysv} or {@code tcp}, the kernel's TCP on either provider.
 */
public final class Transports {
    private Transports() {
    }

    /** {@code channel}'s transports, or {@code kernel-tcp}. */
    public static String of(Object channel) {
        try {
            Object t = channel.getClass().getMethod("transports").invoke(channel);
            String lanes = String.valueOf(t).replace("[", "").replace("]", "").replace(" ", "");
            if (!lanes.isEmpty()) {
                return lanes;
            }
            // not on UCX: a local stream between two hadroNIO processes (hadronio.local.stream),
            // or plain kernel TCP (a peer that is not accelerated, or a connection that stayed)
            Object path = channel.getClass().getMethod("transport").invoke(channel);
            return "unix".equals(path) ? "kernel-unix" : "kernel-tcp";
        } catch (ReflectiveOperationException e) {
            return "kernel-tcp";
        }
    }

    /** "hadronio" when the JVM's provider is hadroNIO and UCX works, else "jdk". */
    public static String provider() {
        return SelectorProvider.provider() instanceof HadronioProvider h && h.isAccelerated() ? "hadronio" : "jdk";
    }

    /**
     * A connected channel's path: hadroNIO's {@link HadronioSocketOptions#TRANSPORT}
     * ({@code ucx:cma,sysv}, {@code tcp}), {@code tcp} for the JDK's channels.
     */
    public static String path(NetworkChannel channel) {
        if (!channel.supportedOptions().contains(HadronioSocketOptions.TRANSPORT)) {
            return "tcp";
        }
        try {
            String path = channel.getOption(HadronioSocketOptions.TRANSPORT);
            return path.isEmpty() ? "unconnected" : path;
        } catch (IOException e) {
            return "closed";
        }
    }

    /**
     * The paths of several connections, each with how many took it, without spaces (a
     * {@code RESULT} line's value): {@code ucx:cma,sysv(16)}, {@code tcp(1)+ucx:cma,sysv(15)},
     * {@code none} for no connection.
     */
    public static String summary(Collection<String> paths) {
        if (paths.isEmpty()) {
            return "none";
        }
        Map<String, Long> counts = new TreeMap<>(paths.stream().collect(Collectors.groupingBy(p -> p, Collectors.counting())));
        return counts.entrySet().stream().map(e -> e.getKey() + "(" + e.getValue() + ")").collect(Collectors.joining("+"));
    }

    /**
     * For applications whose channels are out of reach: {@code ucx(N-endpoints)} while
     * hadroNIO holds UCX endpoints in this JVM (one per connection on UCX), else {@code tcp}.
     */
    public static String byEndpoints() {
        if (SelectorProvider.provider() instanceof HadronioProvider h) {
            Long endpoints = h.resources().get("ucx.endpoints");
            if (endpoints != null && endpoints > 0) {
                return "ucx(" + endpoints + "-endpoints)";
            }
        }
        return "tcp";
    }
}
