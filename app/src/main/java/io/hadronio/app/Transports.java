package io.hadronio.app;

/**
 * The path a channel's bytes take, as the benchmarks report it: {@code cma,sysv} (UCX
 * transports) for a hadroNIO channel on UCX, {@code kernel-tcp} for the JDK's channels and
 * for a hadroNIO channel whose connection is plain TCP. Reads hadroNIO's
 * {@code transports()} reflectively, so that the same code runs on either provider.
 */
public final class Transports {
    private Transports() {
    }

    /** {@code channel}'s transports, or {@code kernel-tcp}. */
    public static String of(Object channel) {
        try {
            Object t = channel.getClass().getMethod("transports").invoke(channel);
            String lanes = String.valueOf(t).replace("[", "").replace("]", "").replace(" ", "");
            // a hadroNIO channel whose peer is not accelerated runs on plain kernel TCP
            return lanes.isEmpty() ? "kernel-tcp" : lanes;
        } catch (ReflectiveOperationException e) {
            return "kernel-tcp";
        }
    }
}
