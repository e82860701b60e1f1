package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

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
