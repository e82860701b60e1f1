package io.hadronio.it;

import io.hadronio.it.Contract.Case;
import io.hadronio.it.Contract.Conn;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The provider's contract across processes, in the three pairings of a mixed deployment:
 * accelerated on both sides, an accelerated server with a plain client, a plain server
 * with an accelerated client. "Plain" is a child JVM without hadroNIO, or a JDK channel
 * ({@code HadronioProvider#platform()}) or a {@code java.net.Socket}/{@code ServerSocket}
 * in this JVM (which runs on hadroNIO). Every case runs one {@link Contract} role here and
 * the other in a {@link Peer} child, and checks the path each side took: UCX when both
 * are accelerated, "tcp" on the hadroNIO side otherwise, and a JDK channel on the plain
 * side. The two children, one accelerated and one plain, serve every test.
 *
 * <p>The cases: blocking echo of random data (1 B, 64 KiB, 4 MiB) checked byte for byte;
 * the same non-blocking through selectors, from a non-blocking connect and accept on;
 * a server-first protocol (greeting right after accept, the client only reads first);
 * half-close either way (shutdownOutput, the peer reads -1 and still answers); close
 * either way (the peer reads everything, then -1), also with the reader starting only
 * after the close; SO_LINGER 0 close either way (the peer's read and a write after it fail
 * with an IOException), also with the reader starting only after the reset.
 */
@Timeout(60)
class MixedPairingsTest extends ItSupport {
    /** What this JVM uses for its side of a connection: hadroNIO's channels, the JDK's, or java.net. */
    enum Local {
        HADRONIO, JDK_CHANNEL, NET_SOCKET
    }

    /** Which side this JVM plays, with what, against which child. */
    enum Topology {
        ACCELERATED_CLIENT_ACCELERATED_CHILD_SERVER(false, Local.HADRONIO, true),
        ACCELERATED_CHILD_CLIENT_ACCELERATED_SERVER(true, Local.HADRONIO, true),
        PLAIN_CHILD_CLIENT_ACCELERATED_SERVER(true, Local.HADRONIO, false),
        JDK_CHANNEL_CLIENT_ACCELERATED_CHILD_SERVER(false, Local.JDK_CHANNEL, true),
        NET_SOCKET_CLIENT_ACCELERATED_CHILD_SERVER(false, Local.NET_SOCKET, true),
        ACCELERATED_CLIENT_PLAIN_CHILD_SERVER(false, Local.HADRONIO, false),
        ACCELERATED_CHILD_CLIENT_JDK_CHANNEL_SERVER(true, Local.JDK_CHANNEL, true),
        ACCELERATED_CHILD_CLIENT_NET_SERVER_SOCKET(true, Local.NET_SOCKET, true);

        final boolean localServer;
        final Local local;
        final boolean acceleratedChild;

        Topology(boolean localServer, Local local, boolean acceleratedChild) {
            this.localServer = localServer;
            this.local = local;
            this.acceleratedChild = acceleratedChild;
        }

        boolean bothAccelerated() {
            return local == Local.HADRONIO && acceleratedChild;
        }

        /** The transport the side here must report. */
        String expectedHere() {
            return local == Local.HADRONIO ? (bothAccelerated() ? "ucx:" : "tcp") : "jdk";
        }

        String expectedInChild() {
            return acceleratedChild ? (bothAccelerated() ? "ucx:" : "tcp") : "jdk";
        }

        @Override
        public String toString() {
            String server = localServer ? local + " server here" : (acceleratedChild ? "accelerated" : "plain")
                    + " child server";
            String client = localServer ? (acceleratedChild ? "accelerated" : "plain") + " child client"
                    : local + " client here";
            String pairing = bothAccelerated() ? "accelerated<->accelerated"
                    : (localServer ? local == Local.HADRONIO : acceleratedChild)
                    ? "accelerated server<->plain client" : "plain server<->accelerated client";
            return pairing + " (" + server + ", " + client + ")";
        }
    }

    static final int[] ECHO_SIZES = {1, 64 * 1024, 4 << 20};
    static final int SELECT_ECHO_SIZE = (2 << 20) + 3;
    // more than the receive window (512 KiB by default): the writer closes while data is in flight
    static final int CLOSE_SIZE = (1 << 20) + 5;
    static final int HALF_CLOSE_SIZE = (1 << 20) + 7;
    // less than a fresh loopback connection's TCP receive window and hadroNIO's (512 KiB)
    static final int IN_ANY_WINDOW = 60_000;

    static final SplittableRandom SEEDS = new SplittableRandom();

    static ChildJvm accelerated;
    static int acceleratedPort;
    static ChildJvm plain;
    static int plainPort;
    // this JVM's listeners, one of each kind
    static ServerSocketChannel hadronioListener;
    static ServerSocketChannel jdkListener;
    static ServerSocket netListener;

    @BeforeAll
    static void startPeers() throws Exception {
        // both start at once; port() waits for each
        accelerated = ChildJvm.withProvider("contract");
        plain = ChildJvm.withoutProvider("contract");
        acceleratedPort = accelerated.port();
        plainPort = plain.port();
        for (Local l : Local.values()) {
            listen(l);
        }
        warmUp();
    }

    /**
     * One connection each way between this JVM and the accelerated child, their paths not
     * checked. A JVM's first rendezvous (the first HMAC, SecureRandom and native calls of
     * the process) can take longer than the client waits for it (at most 1 s) on a busy
     * host, and then the connection is plain TCP by design; the cases check the contract
     * of warm processes.
     */
    private static void warmUp() throws Exception {
        exchange(Topology.ACCELERATED_CLIENT_ACCELERATED_CHILD_SERVER, Case.ECHO, 1);
        exchange(Topology.ACCELERATED_CHILD_CLIENT_ACCELERATED_SERVER, Case.ECHO, 1);
    }

    @AfterAll
    static void stopPeers() throws IOException {
        for (ChildJvm c : new ChildJvm[] {accelerated, plain}) {
            if (c != null) {
                c.close();
            }
        }
        for (Local l : Local.values()) {
            unlisten(l);
        }
    }

    private static void listen(Local l) throws IOException {
        switch (l) {
            case HADRONIO -> hadronioListener = ServerSocketChannel.open().bind(loopback(0));
            case JDK_CHANNEL -> jdkListener = provider().platform().openServerSocketChannel().bind(loopback(0));
            case NET_SOCKET -> netListener = new ServerSocket(0, 50, LOOPBACK);
        }
    }

    private static void unlisten(Local l) throws IOException {
        switch (l) {
            case HADRONIO -> close(hadronioListener);
            case JDK_CHANNEL -> close(jdkListener);
            case NET_SOCKET -> close(netListener);
        }
    }

    private static void close(AutoCloseable c) throws IOException {
        try {
            if (c != null) {
                c.close();
            }
        } catch (IOException e) {
            throw e;
        } catch (Exception e) {
            throw new IOException(e);
        }
    }

    private static int localPort(Local l) throws IOException {
        return switch (l) {
            case HADRONIO -> ((InetSocketAddress) hadronioListener.getLocalAddress()).getPort();
            case JDK_CHANNEL -> ((InetSocketAddress) jdkListener.getLocalAddress()).getPort();
            case NET_SOCKET -> netListener.getLocalPort();
        };
    }

    private static Conn accept(Local l, Case c) throws IOException {
        return switch (l) {
            case HADRONIO -> Contract.of(Contract.accept(hadronioListener, c));
            case JDK_CHANNEL -> Contract.of(Contract.accept(jdkListener, c));
            case NET_SOCKET -> Contract.of(netListener.accept());
        };
    }

    private static Conn connect(Local l, int port, Case c) throws IOException {
        return switch (l) {
            case HADRONIO -> Contract.of(Contract.connect(SocketChannel.open(), loopback(port), c));
            case JDK_CHANNEL -> Contract.of(Contract.connect(provider().platform().openSocketChannel(), loopback(port), c));
            case NET_SOCKET -> Contract.of(new Socket(LOOPBACK, port));
        };
    }

    /**
     * Runs one connection of case c: one role here, the other in the child, and checks the
     * transport each side saw. A failure leaves the child or listener in an unknown state
     * (in the middle of the case), so both are replaced.
     */
    private static void run(Topology t, Case c, long n) throws Exception {
        try {
            ContractRun.Transports seen = exchange(t, c, n);
            String what = t + " " + c + " " + n;
            ContractRun.assertTransport(t.expectedHere(), seen.here(), "this JVM's side of " + what);
            ContractRun.assertTransport(t.expectedInChild(), seen.child(), "the child's side of " + what);
        } catch (Throwable e) {
            recover(t);
            throw e;
        }
    }

    /** One connection of case c, both roles; returns the transports both sides saw. */
    private static ContractRun.Transports exchange(Topology t, Case c, long n) throws Exception {
        int id = ContractRun.nextId();
        long seed = SEEDS.nextLong();
        ChildJvm child = t.acceleratedChild ? accelerated : plain;
        int childPort = t.acceleratedChild ? acceleratedPort : plainPort;
        String args = c + " " + n + " " + seed;
        String what = t + " " + args;
        if (t.localServer) {
            return ContractRun.run(child, id, "connect " + id + " " + localPort(t.local) + " " + args, () -> {
                try (Conn conn = accept(t.local, c)) {
                    String transport = conn.transport();
                    Contract.server(c, conn, n, seed);
                    return transport;
                }
            }, what);
        }
        return ContractRun.run(child, id, "accept " + id + " " + args, () -> {
            try (Conn conn = connect(t.local, childPort, c)) {
                String transport = conn.transport();
                Contract.client(c, conn, n, seed);
                return transport;
            }
        }, what);
    }

    /**
     * The child resets (SO_LINGER 0 close) and reports it; only then does this JVM read:
     * the reset that arrived while nobody read must still fail the read, and a write.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldFailAReadThatStartsAfterThePeersResetArrived(Topology t) throws Exception {
        int id = ContractRun.nextId();
        Case c = t.localServer ? Case.RESET_BY_CLIENT : Case.RESET_BY_SERVER;
        ChildJvm child = t.acceleratedChild ? accelerated : plain;
        int childPort = t.acceleratedChild ? acceleratedPort : plainPort;
        String what = t + " " + c + ", read after the reset";
        String command = t.localServer ? "connect " + id + " " + localPort(t.local) + " " + c + " 0 0"
                : "accept " + id + " " + c + " 0 0";
        try {
            ContractRun.Transports seen = ContractRun.run(child, id, command, childResult -> {
                try (Conn conn = t.localServer ? accept(t.local, c) : connect(t.local, childPort, c)) {
                    String transport = conn.transport();
                    conn.write(ByteBuffer.wrap(new byte[] {'R'}));
                    // the child prints its result after its close with SO_LINGER 0
                    childResult.get(ChildJvm.LINE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    Contract.awaitReset(conn);
                    return transport;
                }
            }, what);
            ContractRun.assertTransport(t.expectedHere(), seen.here(), "this JVM's side of " + what);
            ContractRun.assertTransport(t.expectedInChild(), seen.child(), "the child's side of " + what);
        } catch (Throwable e) {
            recover(t);
            throw e;
        }
    }

    /**
     * The child writes and closes and reports it; only then does this JVM read: everything
     * written, then end-of-stream. Less than any receive window (the kernel's, hadroNIO's),
     * so that the child's write and close return without us reading.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldReadEverythingThenEndOfStreamWhenReadingOnlyAfterThePeersClose(Topology t) throws Exception {
        int id = ContractRun.nextId();
        long seed = SEEDS.nextLong();
        int n = IN_ANY_WINDOW;
        Case c = t.localServer ? Case.CLOSE_BY_CLIENT : Case.CLOSE_BY_SERVER;
        ChildJvm child = t.acceleratedChild ? accelerated : plain;
        int childPort = t.acceleratedChild ? acceleratedPort : plainPort;
        String args = c + " " + n + " " + seed;
        String what = t + " " + args + ", read after the close";
        String command = t.localServer ? "connect " + id + " " + localPort(t.local) + " " + args
                : "accept " + id + " " + args;
        try {
            ContractRun.Transports seen = ContractRun.run(child, id, command, childResult -> {
                try (Conn conn = t.localServer ? accept(t.local, c) : connect(t.local, childPort, c)) {
                    String transport = conn.transport();
                    // the child prints its result after its write and close returned
                    childResult.get(ChildJvm.LINE_TIMEOUT.toSeconds(), TimeUnit.SECONDS);
                    Contract.expectStream(conn, Contract.random(n, seed), "the child's data before its close");
                    return transport;
                }
            }, what);
            ContractRun.assertTransport(t.expectedHere(), seen.here(), "this JVM's side of " + what);
            ContractRun.assertTransport(t.expectedInChild(), seen.child(), "the child's side of " + what);
        } catch (Throwable e) {
            recover(t);
            throw e;
        }
    }

    /** Replaces the child and the listener a failed case used: they may still be in the middle of it. */
    private static void recover(Topology t) throws Exception {
        if (t.localServer) {
            unlisten(t.local);
            listen(t.local);
        }
        if (t.acceleratedChild) {
            accelerated.close();
            accelerated = ChildJvm.withProvider("contract");
            acceleratedPort = accelerated.port();
            warmUp();
        } else {
            plain.close();
            plain = ChildJvm.withoutProvider("contract");
            plainPort = plain.port();
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldEchoRandomDataByteForByteInBlockingMode(Topology t) throws Exception {
        for (int n : ECHO_SIZES) {
            run(t, Case.ECHO, n);
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldEchoThroughSelectorsInNonBlockingMode(Topology t) throws Exception {
        run(t, Case.SELECT_ECHO, SELECT_ECHO_SIZE);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldServeAServerFirstProtocol(Topology t) throws Exception {
        run(t, Case.SERVER_FIRST, 0);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldDeliverTheAnswerAfterTheClientsShutdownOutput(Topology t) throws Exception {
        run(t, Case.HALF_CLOSE_BY_CLIENT, HALF_CLOSE_SIZE);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldDeliverTheAnswerAfterTheServersShutdownOutput(Topology t) throws Exception {
        run(t, Case.HALF_CLOSE_BY_SERVER, HALF_CLOSE_SIZE);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldReadEverythingThenEndOfStreamAfterTheServersClose(Topology t) throws Exception {
        run(t, Case.CLOSE_BY_SERVER, CLOSE_SIZE);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldReadEverythingThenEndOfStreamAfterTheClientsClose(Topology t) throws Exception {
        run(t, Case.CLOSE_BY_CLIENT, CLOSE_SIZE);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldFailTheClientsReadWhenTheServerClosesWithLingerZero(Topology t) throws Exception {
        run(t, Case.RESET_BY_SERVER, 0);
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Topology.class)
    void shouldFailTheServersReadWhenTheClientClosesWithLingerZero(Topology t) throws Exception {
        run(t, Case.RESET_BY_CLIENT, 0);
    }
}
