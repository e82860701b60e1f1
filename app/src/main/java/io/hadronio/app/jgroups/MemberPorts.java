package io.hadronio.app.jgroups;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;

/**
 * TCP ports for the members of a JGroups cluster on 127.0.0.1, which TCPPING needs before
 * any member starts. They come from below the kernel's ephemeral range: a port from that
 * range, free when it was chosen, was once taken by another member's outgoing connection
 * before its own member could bind it ({@code BindException: No available port}).
 * {@code scripts/bench-apps.sh} chooses its members' ports the same way.
 */
public final class MemberPorts {
    // JGroups' FD_SOCK2 listens at a member's port + 100 (or the first free one of the next few)
    private static final int FD_SOCK_OFFSET = 100;
    private static final int FD_SOCK_RANGE = 20;
    private static final int HEADROOM = 200;
    private static final int LOWEST = 10_000;

    private MemberPorts() {
    }

    /** {@code n} ports free on 127.0.0.1 now, below the ephemeral range. */
    public static int[] free(int n) throws IOException {
        int high = Math.max(LOWEST + 1_000, ephemeralLow() - HEADROOM);
        List<ServerSocket> sockets = new ArrayList<>();
        try {
            while (sockets.size() < n) {
                int port = LOWEST + ThreadLocalRandom.current().nextInt(high - LOWEST);
                if (collidesWithFailureDetection(port, sockets)) {
                    continue;
                }
                try {
                    sockets.add(new ServerSocket(port, 1, InetAddress.getLoopbackAddress()));
                } catch (IOException taken) {
                    // try another
                }
            }
            return sockets.stream().mapToInt(ServerSocket::getLocalPort).toArray();
        } finally {
            for (ServerSocket s : sockets) {
                s.close();
            }
        }
    }

    /**
     * Whether {@code port} is where another member's FD_SOCK2 may listen, or the other way
     * round: a member once failed to bind its port because the first member's FD_SOCK2 had
     * taken it ({@code BindException: No available port to bind to in range [10771 .. 10771]}).
     */
    private static boolean collidesWithFailureDetection(int port, List<ServerSocket> chosen) {
        for (ServerSocket s : chosen) {
            int distance = Math.abs(port - s.getLocalPort());
            if (Math.abs(distance - FD_SOCK_OFFSET) <= FD_SOCK_RANGE) {
                return true;
            }
        }
        return false;
    }

    /** The lowest port the kernel hands to a connect (Linux; its default when unknown). */
    private static int ephemeralLow() {
        try {
            String range = Files.readString(Path.of("/proc/sys/net/ipv4/ip_local_port_range"));
            return Integer.parseInt(range.trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            return 32768;
        }
    }
}
