package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedInputStream;
import java.io.BufferedOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two JVMs on one host: this one and a {@link UcxEchoPeer} started for the test. They
 * swap worker addresses over a plain TCP connection on 127.0.0.1 (as the provider's
 * handshake does), connect UCX endpoints to each other, and echo tagged messages from
 * empty to 4 MiB, both directions, checked byte for byte. UCX should pick shared
 * memory between the two processes unless both are told to use TCP.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
class UcxTwoProcessTest {
    private static final List<Integer> SIZES = List.of(0, 1, 8, 1024, 64 << 10, 1 << 20, 4 << 20);
    private static final Set<String> SHARED_MEMORY = Set.of("sysv", "posix", "cma", "xpmem", "knem");

    /** What one run saw: the transports of both endpoints. */
    private record Run(Set<String> localTransports, Set<String> peerTransports, String info) {
    }

    @Test
    void shouldEchoTaggedMessagesOverSharedMemoryBetweenTwoJvms() throws Exception {
        Run run = echoWithPeer(Map.of(), builder -> { });
        for (Set<String> transports : List.of(run.localTransports(), run.peerTransports())) {
            assertFalse(transports.contains("tcp"), () -> transports + "\n" + run.info());
            assertTrue(transports.stream().anyMatch(SHARED_MEMORY::contains),
                    () -> "expected shared memory, got " + transports + "\n" + run.info());
        }
    }

    @Test
    void shouldEchoTaggedMessagesOverTcpWhenBothJvmsAskForTcp() throws Exception {
        Run run = echoWithPeer(Map.of("UCX_TLS", "tcp"), builder -> builder.config("TLS", "tcp"));
        assertEquals(Set.of("tcp"), run.localTransports(), run.info());
        assertEquals(Set.of("tcp"), run.peerTransports(), run.info());
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"shared-memory", "tcp"})
    void shouldReportAPeerThatDiedToTheErrorHandler(String transport) throws Exception {
        // peer failure needs ErrorMode.PEER; on shared memory UCX 1.13 offers it only with
        // MM_ERROR_HANDLING, and notices a dead peer by keepalive (every 20 s by default)
        Map<String, String> settings = transport.equals("tcp")
                ? Map.of("TLS", "tcp", "KEEPALIVE_INTERVAL", "100ms")
                : Map.of("MM_ERROR_HANDLING", "y", "KEEPALIVE_INTERVAL", "100ms");
        Map<String, String> peerEnvironment = new HashMap<>();
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG).name("peer-failure-test");
        settings.forEach((key, value) -> {
            peerEnvironment.put("UCX_" + key, value);
            builder.config(key, value);
        });
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ChildJvm peer = ChildJvm.start(UcxEchoPeer.class, peerEnvironment,
                        String.valueOf(server.getLocalPort()));
                UcxContext context = builder.open();
                Arena arena = Arena.ofShared()) {
            server.setSoTimeout(30_000);
            try (Socket socket = accept(server, peer)) {
                socket.setSoTimeout(30_000);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "peer-failure-test");
                Progress.writeAddress(out, worker.address());
                List<Integer> failures = new ArrayList<>();
                UcxEndpoint endpoint = worker.connect(Progress.readAddress(in), ErrorMode.PEER,
                        (failed, status) -> failures.add(status));
                in.readUTF(); // the peer's transports
                assertEquals(UcxEchoPeer.READY, in.readUTF(), peer::report);
                Set<String> transports = endpoint.transports();
                if (transport.equals("tcp")) {
                    assertEquals(Set.of("tcp"), transports, endpoint::info);
                } else {
                    assertFalse(transports.contains("tcp"), endpoint::info);
                    assertTrue(transports.stream().anyMatch(SHARED_MEMORY::contains), endpoint::info);
                }

                MemorySegment message = arena.allocate(8);
                long receive = worker.tagReceive(message, UcxEchoPeer.TAG_REPLY, -1L);
                assertEquals(UcsStatus.OK, Progress.complete(worker, endpoint.tagSend(message, UcxEchoPeer.TAG_REQUEST)));
                assertEquals(8, Progress.receive(worker, receive), "the echo before the peer dies");

                peer.process().destroyForcibly();
                assertTrue(peer.process().waitFor(30, TimeUnit.SECONDS), "the peer JVM did not die");

                // keep sending until UCX notices; each send completes (maybe with an error) or stays pending
                List<Long> pending = new ArrayList<>();
                Progress.until(() -> {
                    if (!failures.isEmpty()) {
                        return true;
                    }
                    try {
                        long send = endpoint.tagSend(message, UcxEchoPeer.TAG_REQUEST);
                        if (send != UcxWorker.COMPLETED) {
                            pending.add(send);
                        }
                    } catch (UcxException e) {
                        // the endpoint failed between the check above and this send
                    }
                    for (int i = 0; i < 1000; i++) {
                        worker.progress();
                    }
                    return !failures.isEmpty();
                }, () -> "the error handler never ran for the dead peer", worker);

                int status = failures.get(0);
                assertTrue(UcsStatus.isError(status), "status " + status);
                assertEquals(status, endpoint.errorStatus());
                UcxException e = assertThrows(UcxException.class, () -> endpoint.tagSend(message, 1));
                assertEquals(status, e.status());
                for (long send : pending) {
                    assertTrue(Progress.status(worker, send) <= UcsStatus.OK, "a send to the dead peer");
                    worker.release(send);
                }
                endpoint.close(); // forced, since the endpoint failed
                assertFalse(endpoint.isOpen());
                assertEquals(0, worker.outstandingRequests());
            }
        }
    }

    private static Run echoWithPeer(Map<String, String> peerEnvironment, Consumer<UcxContext.Builder> configure)
            throws Exception {
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG).name("two-process-test");
        configure.accept(builder);
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                ChildJvm peer = ChildJvm.start(UcxEchoPeer.class, peerEnvironment,
                        String.valueOf(server.getLocalPort()));
                UcxContext context = builder.open();
                Arena arena = Arena.ofShared()) {
            server.setSoTimeout(30_000);
            try (Socket socket = accept(server, peer)) {
                socket.setSoTimeout(30_000);
                DataOutputStream out = new DataOutputStream(new BufferedOutputStream(socket.getOutputStream()));
                DataInputStream in = new DataInputStream(new BufferedInputStream(socket.getInputStream()));
                UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "two-process-test");
                Progress.writeAddress(out, worker.address());
                UcxEndpoint endpoint = worker.connect(Progress.readAddress(in), ErrorMode.NONE);
                Set<String> peerTransports = new TreeSet<>(Arrays.asList(in.readUTF().split(",")));
                assertEquals(UcxEchoPeer.READY, in.readUTF(), peer::report);

                MemorySegment source = arena.allocate(UcxEchoPeer.MAX_MESSAGE);
                MemorySegment echo = arena.allocate(UcxEchoPeer.MAX_MESSAGE);
                Random random = new Random(42);
                for (int size : SIZES) {
                    byte[] payload = new byte[size];
                    random.nextBytes(payload);
                    MemorySegment.copy(payload, 0, source, ValueLayout.JAVA_BYTE, 0, size);
                    echo.fill((byte) 0x5A);
                    long receive = worker.tagReceive(echo, UcxEchoPeer.TAG_REPLY, -1L);
                    long send = endpoint.tagSend(source.asSlice(0, size), UcxEchoPeer.TAG_REQUEST);
                    assertEquals(UcsStatus.OK, Progress.complete(worker, send), () -> "send of " + size + " B");
                    long received = Progress.receive(worker, receive);
                    assertEquals(size, received, () -> "echo length of " + size + " B\n" + peer.report());
                    assertEquals(UcxEchoPeer.TAG_REPLY, worker.receivedTag());
                    assertArrayEquals(payload, echo.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE),
                            () -> "echoed bytes of a " + size + " B message differ");
                    if (size < echo.byteSize()) {
                        assertEquals((byte) 0x5A, echo.get(ValueLayout.JAVA_BYTE, size), "the echo wrote past its length");
                    }
                }
                long stop = endpoint.tagSend(source.asSlice(0, 0), UcxEchoPeer.TAG_STOP);
                assertEquals(UcsStatus.OK, Progress.complete(worker, stop));
                assertEquals(UcxEchoPeer.BYE, in.readUTF(), peer::report);
                assertEquals(0, worker.outstandingRequests());

                Run run = new Run(endpoint.transports(), peerTransports, endpoint.info());
                worker.close(); // force-closes the endpoint
                socket.shutdownOutput(); // lets the peer exit
                assertEquals(0, peer.awaitExit(ChildJvm.DEFAULT_EXIT_TIMEOUT), peer::report);
                return run;
            }
        }
    }

    private static Socket accept(ServerSocket server, ChildJvm peer) throws Exception {
        try {
            return server.accept();
        } catch (java.net.SocketTimeoutException e) {
            throw new AssertionError("the peer JVM did not connect: " + peer.report(), e);
        }
    }
}
