package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/** Two workers in one JVM exchange tagged messages through the binding. */
class UcxLoopbackTest {
    private UcxContext context;
    private UcxWorker a;
    private UcxWorker b;
    private UcxEndpoint aToB;
    private Arena arena;

    @BeforeEach
    void setUp() throws UcxException {
        context = UcxContext.builder().features(Feature.TAG, Feature.AM, Feature.WAKEUP).open();
        a = context.newWorker(ThreadMode.SINGLE, "a");
        b = context.newWorker(ThreadMode.SINGLE, "b");
        aToB = a.connect(b.address(), ErrorMode.NONE);
        arena = Arena.ofShared();
    }

    @AfterEach
    void tearDown() {
        context.close();
        arena.close();
    }

    private void progressBoth() {
        a.progress();
        b.progress();
    }

    @ParameterizedTest
    @ValueSource(ints = {0, 1, 8, 1023, 1024, 65536, 1 << 20, 4 << 20})
    void shouldExchangeTaggedMessagesOfEverySize(int size) throws UcxException {
        byte[] payload = new byte[size];
        new Random(size).nextBytes(payload);
        MemorySegment src = arena.allocate(Math.max(size, 1));
        MemorySegment.copy(payload, 0, src, ValueLayout.JAVA_BYTE, 0, size);
        MemorySegment dst = arena.allocate(Math.max(size, 1));

        long recv = b.tagReceive(dst.asSlice(0, size), 42, -1L);
        long send = aToB.tagSend(src.asSlice(0, size), 42);
        int sendStatus;
        int recvStatus;
        do {
            progressBoth();
            sendStatus = a.status(send);
            recvStatus = b.receiveStatus(recv);
        } while (sendStatus == UcsStatus.INPROGRESS || recvStatus == UcsStatus.INPROGRESS);
        assertEquals(UcsStatus.OK, sendStatus);
        assertEquals(UcsStatus.OK, recvStatus);
        assertEquals(size, b.receivedLength());
        assertEquals(42, b.receivedTag());
        assertArrayEquals(payload, dst.asSlice(0, size).toArray(ValueLayout.JAVA_BYTE));
        a.release(send);
        b.release(recv);
        assertEquals(0, a.outstandingRequests());
        assertEquals(0, b.outstandingRequests());
    }

    @Test
    void shouldUseSharedMemoryOnOneHost() {
        Set<String> transports = aToB.transports();
        assertFalse(transports.isEmpty(), aToB.info());
        assertTrue(transports.stream().anyMatch(t -> Set.of("sysv", "posix", "cma", "self", "xpmem", "knem").contains(t)),
                "transports " + transports + "\n" + aToB.info());
        assertFalse(transports.contains("tcp"), aToB.info());
    }

    /**
     * transports() and lanes() are read once, when first asked (ucp_ep_print_info is slow):
     * that holds only if an endpoint made from a worker address keeps the lanes it was made
     * with. Asked right after connect, as the provider asks, and compared with a fresh
     * print after both directions carried small and large messages.
     */
    @ParameterizedTest
    @ValueSource(strings = {"", "tcp"})
    void shouldKeepTheLanesItWasMadeWith(String tls) throws UcxException {
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG, Feature.AM, Feature.WAKEUP);
        if (!tls.isEmpty()) {
            builder.config("TLS", tls);
        }
        try (UcxContext ctx = builder.open()) {
            UcxWorker x = ctx.newWorker(ThreadMode.SINGLE, "x");
            UcxWorker y = ctx.newWorker(ThreadMode.SINGLE, "y");
            UcxEndpoint xToY = x.connect(y.address(), ErrorMode.PEER);
            Set<String> transports = xToY.transports();
            Set<String> lanes = xToY.lanes();
            assertFalse(transports.isEmpty(), xToY.info());
            if (!tls.isEmpty()) {
                assertEquals(Set.of(tls), transports, xToY.info());
            }
            UcxEndpoint yToX = y.connect(x.address(), ErrorMode.PEER);
            for (int size : new int[] {8, 65536, 1 << 20}) {
                MemorySegment src = arena.allocate(size);
                MemorySegment dst = arena.allocate(size);
                for (int i = 0; i < 20; i++) {
                    exchange(x, xToY, y, src, dst, size);
                    exchange(y, yToX, x, src, dst, size);
                }
            }
            UcxEndpoint.Lanes fresh = UcxEndpoint.Lanes.parse(xToY.info());
            assertEquals(fresh.transports(), transports, xToY.info());
            assertEquals(fresh.pairs(), lanes, xToY.info());
            assertEquals(transports, xToY.transports());
        }
    }

    private static void exchange(UcxWorker from, UcxEndpoint ep, UcxWorker to, MemorySegment src, MemorySegment dst,
            int size) throws UcxException {
        long recv = to.tagReceive(dst, 7, -1L);
        long send = ep.tagSend(src, 7);
        int sendStatus;
        int recvStatus;
        do {
            from.progress();
            to.progress();
            sendStatus = from.status(send);
            recvStatus = to.receiveStatus(recv);
        } while (sendStatus == UcsStatus.INPROGRESS || recvStatus == UcsStatus.INPROGRESS);
        assertEquals(UcsStatus.OK, sendStatus);
        assertEquals(UcsStatus.OK, recvStatus);
        assertEquals(size, to.receivedLength());
        from.release(send);
        to.release(recv);
    }
}
