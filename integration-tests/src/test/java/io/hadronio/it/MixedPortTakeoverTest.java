package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.hadronio.it.Contract.Case;
import io.hadronio.it.Contract.Conn;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.channels.SocketChannel;
import java.util.SplittableRandom;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A port changes hands between an accelerated and a plain server in another process, and
 * this JVM's accelerated client, which just talked to the old owner, must take the path
 * the new owner offers: plain TCP to a plain server on the port of an accelerated one
 * killed with SIGKILL (it had no chance to clean up; its rendezvous name must be gone with
 * it), UCX to an accelerated server on the port a plain one left.
 */
@Timeout(60)
class MixedPortTakeoverTest extends ItSupport {
    static final int N = (1 << 20) + 11;
    static final SplittableRandom SEEDS = new SplittableRandom();

    // the processes that take over ports; the ones that give them up are started per test
    static ChildJvm plainTaker;
    static ChildJvm acceleratedTaker;

    @BeforeAll
    static void startTakers() throws Exception {
        plainTaker = ChildJvm.withoutProvider("contract");
        acceleratedTaker = ChildJvm.withProvider("contract");
        plainTaker.port();
        acceleratedTaker.port();
    }

    @AfterAll
    static void stopTakers() {
        for (ChildJvm c : new ChildJvm[] {plainTaker, acceleratedTaker}) {
            if (c != null) {
                c.close();
            }
        }
    }

    /** An echo with this JVM's accelerated client against a child's server; returns both transports. */
    private static ContractRun.Transports echoWith(ChildJvm server, int port) throws Exception {
        int id = ContractRun.nextId();
        long seed = SEEDS.nextLong();
        String args = Case.ECHO + " " + N + " " + seed;
        return ContractRun.run(server, id, "accept " + id + " " + args, () -> {
            try (Conn conn = Contract.of(SocketChannel.open(loopback(port)))) {
                String transport = conn.transport();
                Contract.client(Case.ECHO, conn, N, seed);
                return transport;
            }
        }, "echo with the server on port " + port);
    }

    /** An echo with this JVM's accelerated client against a {@link ServerSocket} of this JVM. */
    private static String echoWith(ServerSocket server) throws Exception {
        long seed = SEEDS.nextLong();
        Task<Void> serving = start("server-socket", () -> {
            try (Conn conn = Contract.of(server.accept())) {
                Contract.server(Case.ECHO, conn, N, seed);
            }
            return null;
        });
        String transport;
        try (Conn conn = Contract.of(SocketChannel.open(loopback(server.getLocalPort())))) {
            transport = conn.transport();
            Contract.client(Case.ECHO, conn, N, seed);
        }
        Throwable failure = serving.failure();
        if (failure != null) {
            throw new AssertionError("the ServerSocket's side", failure);
        }
        return transport;
    }

    private static int takeOver(ChildJvm taker, int port) throws Exception {
        taker.send("listen " + port);
        assertEquals(port, Integer.parseInt(taker.expect("LISTENING ")), taker::report);
        return port;
    }

    private static ServerSocket serverSocketOn(int port) throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(LOOPBACK, port));
        return s;
    }

    /** The port of an accelerated server killed with SIGKILL, and our connection to it that was open then. */
    record Killed(int port, SocketChannel open) {
        /** Our connection to the killed server ends (end-of-stream or an error), it does not hang. */
        void assertEnded() throws Exception {
            try (open) {
                Task<Integer> read = start("read-from-killed", () -> Contract.readToEnd(Contract.of(open), 0,
                        "the killed server").length);
                Throwable failure = read.failure();
                if (failure != null && !(failure instanceof IOException)) {
                    throw new AssertionError("reading from the killed server", failure);
                }
            }
        }
    }

    /** Starts an accelerated server, checks we are on UCX with it, kills it while a connection to it is open. */
    private static Killed killedAcceleratedServer() throws Exception {
        try (ChildJvm victim = ChildJvm.withProvider("contract")) {
            int port = victim.port();
            ContractRun.Transports t = echoWith(victim, port);
            ContractRun.assertTransport("ucx:", t.here(), "our client to the accelerated server");
            ContractRun.assertTransport("ucx:", t.child(), "the accelerated server");
            SocketChannel open = SocketChannel.open(loopback(port));
            ContractRun.assertTransport("ucx:", Contract.transport(open), "our open connection to the accelerated server");
            victim.kill();
            return new Killed(port, open);
        }
    }

    @Test
    void shouldUseTcpToAPlainChildServerOnThePortOfAKilledAcceleratedServer() throws Exception {
        Killed killed = killedAcceleratedServer();
        int port = takeOver(plainTaker, killed.port());
        ContractRun.Transports t = echoWith(plainTaker, port);
        ContractRun.assertTransport("tcp", t.here(), "our client to the plain server that took the port");
        ContractRun.assertTransport("jdk", t.child(), "the plain server");
        killed.assertEnded();
    }

    @Test
    void shouldUseTcpToAServerSocketOnThePortOfAKilledAcceleratedServer() throws Exception {
        Killed killed = killedAcceleratedServer();
        try (ServerSocket plain = serverSocketOn(killed.port())) {
            ContractRun.assertTransport("tcp", echoWith(plain), "our client to the ServerSocket that took the port");
        }
        killed.assertEnded();
    }

    @Test
    void shouldUseUcxToAnAcceleratedServerOnThePortAPlainChildServerLeft() throws Exception {
        int port;
        try (ChildJvm leaving = ChildJvm.withoutProvider("contract")) {
            port = leaving.port();
            ContractRun.Transports t = echoWith(leaving, port);
            ContractRun.assertTransport("tcp", t.here(), "our client to the plain server");
            ContractRun.assertTransport("jdk", t.child(), "the plain server");
            leaving.send("exit");
            assertEquals(0, leaving.awaitExit(), leaving::report);
        }
        takeOver(acceleratedTaker, port);
        ContractRun.Transports t = echoWith(acceleratedTaker, port);
        ContractRun.assertTransport("ucx:", t.here(), "our client to the accelerated server that took the port");
        ContractRun.assertTransport("ucx:", t.child(), "the accelerated server that took the port");
    }

    @Test
    void shouldUseUcxToAnAcceleratedServerOnThePortAServerSocketLeft() throws Exception {
        int port;
        try (ServerSocket plain = new ServerSocket(0, 50, LOOPBACK)) {
            port = plain.getLocalPort();
            ContractRun.assertTransport("tcp", echoWith(plain), "our client to the ServerSocket");
        }
        takeOver(acceleratedTaker, port);
        ContractRun.Transports t = echoWith(acceleratedTaker, port);
        ContractRun.assertTransport("ucx:", t.here(), "our client to the accelerated server that took the port");
        ContractRun.assertTransport("ucx:", t.child(), "the accelerated server that took the port");
    }
}
