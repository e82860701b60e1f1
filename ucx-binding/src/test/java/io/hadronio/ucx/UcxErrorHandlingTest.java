package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.function.Executable;

/**
 * Misuse and failures surface as Java exceptions: nothing crashes the JVM, and no
 * request is left behind.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxErrorHandlingTest {
    private static final long NEVER_SENT_TAG = 0x7E57_0000_0000_0001L;

    private UcxContext context;
    private UcxWorker a;
    private UcxWorker b;
    private UcxEndpoint aToB;
    private Arena arena;

    @BeforeEach
    void setUp() throws UcxException {
        context = UcxContext.builder().features(Feature.TAG).name("error-test").open();
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

    private static void assertFailsWith(int status, Executable call) {
        UcxException e = assertThrows(UcxException.class, call);
        assertEquals(status, e.status(), e.getMessage());
    }

    // ---- closed endpoints --------------------------------------------------------------

    @Test
    void shouldThrowUcxExceptionWhenSendingOnAClosedEndpoint() throws UcxException {
        MemorySegment buffer = arena.allocate(64);
        aToB.close();
        assertFalse(aToB.isOpen());
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> aToB.tagSend(buffer, 1));
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> aToB.tagSend(buffer.address(), 64, 1));
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> aToB.amSend(1, buffer.asSlice(0, 0), buffer));
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, aToB::flush);
        assertThrows(IllegalStateException.class, aToB::info);
        assertEquals(UcxWorker.COMPLETED, aToB.closeNonBlocking(true), "closing twice is a no-op");
        assertDoesNotThrow(aToB::close);
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldThrowUcxExceptionWhenSendingOnAnEndpointWhoseCloseIsInProgress() throws UcxException {
        long close = aToB.closeNonBlocking(false);
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> aToB.tagSend(arena.allocate(8), 1));
        Progress.complete(a, close, b);
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldRefuseAForcedCloseOfAnEndpointWithoutPeerErrorHandlingAndKeepItOpen() throws UcxException {
        // UCX 1.13 allows UCP_EP_CLOSE_FLAG_FORCE only with UCP_ERR_HANDLING_MODE_PEER
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, () -> aToB.closeNonBlocking(true));
        assertTrue(aToB.isOpen());
        MemorySegment target = arena.allocate(16);
        long receive = b.tagReceive(target, 3, -1L);
        assertEquals(UcsStatus.OK, Progress.complete(a, aToB.tagSend(arena.allocate(16), 3), b));
        assertEquals(16, Progress.receive(b, receive, a));
        assertEquals(UcsStatus.OK, Progress.complete(a, aToB.closeNonBlocking(false), b));
        assertFalse(aToB.isOpen());
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldForceCloseAnEndpointWithPeerErrorHandling() throws UcxException {
        UcxEndpoint endpoint = a.connect(b.address(), ErrorMode.PEER);
        long close = endpoint.closeNonBlocking(true);
        assertFalse(endpoint.isOpen());
        Progress.status(a, close, b);
        a.release(close);
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> endpoint.tagSend(arena.allocate(8), 1));
        assertEquals(0, a.outstandingRequests());
    }

    // ---- corrupted worker addresses ----------------------------------------------------

    @Test
    void shouldRefuseAnEmptyAddress() {
        assertFailsWith(UcsStatus.ERR_INVALID_ADDR, () -> a.connect(new byte[0], ErrorMode.NONE));
    }

    @Test
    void shouldRefuseAddressesOfAnUnknownFormatVersionBeforeUcxSeesThem() throws UcxException {
        // UCX 1.13 aborts the process (assertion in ucp_address_unpack) on these
        byte[] real = b.address();
        for (int version = 2; version < 16; version++) {
            byte[] address = real.clone();
            address[0] = (byte) ((address[0] & 0xF0) | version);
            assertFailsWith(UcsStatus.ERR_INVALID_ADDR, () -> a.connect(address, ErrorMode.NONE));
        }
        assertFailsWith(UcsStatus.ERR_INVALID_ADDR, () -> a.connect(new byte[] {(byte) 0xFF}, ErrorMode.PEER));
        // the worker is unharmed
        UcxEndpoint endpoint = a.connect(real, ErrorMode.NONE);
        assertTrue(endpoint.isOpen());
    }

    @Test
    void shouldReportCorruptedAddressesAsUcxExceptionsWithoutCrashing() throws Exception {
        // in a child JVM: should a case crash UCX, it takes down only the child, and the
        // output names the case
        try (ChildJvm child = ChildJvm.start(UcxCorruptAddressProbe.class, Map.of())) {
            int exit = child.awaitExit(ChildJvm.DEFAULT_EXIT_TIMEOUT);
            String output = child.output();
            assertEquals(0, exit, () -> "the probe JVM died (last 'start' line names the case): " + child.report());
            assertTrue(output.contains(UcxCorruptAddressProbe.DONE), child::report);
            Matcher m = Pattern.compile("(?m)^case (\\S+): (.*)$").matcher(output);
            List<String> notRefused = new ArrayList<>();
            int cases = 0;
            while (m.find()) {
                cases++;
                boolean refused = m.group(2).startsWith("UcxException");
                boolean real = m.group(1).equals("real");
                if (refused == real) {
                    notRefused.add(m.group(1) + ": " + m.group(2));
                }
            }
            assertTrue(cases > 40, child::report);
            assertTrue(notRefused.isEmpty(), () -> "unexpected outcomes: " + notRefused + "\n" + child.report());
            assertTrue(output.contains("outstanding 0"), child::report);
        }
    }

    // ---- cancel --------------------------------------------------------------------------

    @Test
    void shouldCompletePendingReceivesWithErrCanceledWhenCancelled() throws UcxException {
        List<Long> receives = new ArrayList<>();
        for (int i = 0; i < 100; i++) { // enough to make the request table grow
            receives.add(a.tagReceive(arena.allocate(256), NEVER_SENT_TAG + i, -1L));
        }
        assertEquals(100, a.outstandingRequests());
        for (int i = 0; i < 10; i++) {
            a.progress();
        }
        for (long request : receives) {
            assertEquals(UcsStatus.INPROGRESS, a.receiveStatus(request), "nobody sent it");
            a.cancel(request);
        }
        for (long request : receives) {
            assertEquals(UcsStatus.ERR_CANCELED, Progress.status(a, request));
            assertEquals(UcsStatus.ERR_CANCELED, a.receiveStatus(request));
            a.release(request);
        }
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldLeaveACompletedRequestUnchangedWhenCancelled() throws UcxException {
        MemorySegment source = arena.allocate(32);
        MemorySegment target = arena.allocate(32);
        long receive = b.tagReceive(target, 5, -1L);
        Progress.complete(a, aToB.tagSend(source, 5), b);
        assertEquals(UcsStatus.OK, Progress.status(b, receive, a));
        b.cancel(receive);
        assertEquals(UcsStatus.OK, b.status(receive));
        b.release(receive);
        assertEquals(0, b.outstandingRequests());
    }

    // ---- unknown and released requests ---------------------------------------------------

    @Test
    void shouldRejectUnknownAndDoubleReleasedRequests() throws UcxException {
        long bogus = 0x7f00_dead_bee0L;
        assertThrows(IllegalArgumentException.class, () -> a.release(bogus));
        assertThrows(IllegalArgumentException.class, () -> a.status(bogus));
        assertThrows(IllegalArgumentException.class, () -> a.receiveStatus(bogus));
        assertThrows(IllegalArgumentException.class, () -> a.cancel(bogus));

        long receive = a.tagReceive(arena.allocate(8), NEVER_SENT_TAG, -1L);
        assertThrows(IllegalArgumentException.class, () -> b.release(receive), "a request of another worker");
        a.cancel(receive);
        Progress.status(a, receive);
        a.release(receive);
        assertThrows(IllegalArgumentException.class, () -> a.release(receive), "released twice");
        assertThrows(IllegalArgumentException.class, () -> a.status(receive));
        assertThrows(IllegalArgumentException.class, () -> a.cancel(receive));
        assertEquals(0, a.outstandingRequests());

        // COMPLETED is not a request: releasing or cancelling it does nothing
        assertDoesNotThrow(() -> a.release(UcxWorker.COMPLETED));
        assertDoesNotThrow(() -> a.cancel(UcxWorker.COMPLETED));
        assertEquals(UcsStatus.OK, a.status(UcxWorker.COMPLETED));
    }

    @Test
    void shouldRefuseHeapMemoryForTransfers() {
        MemorySegment heap = MemorySegment.ofArray(new byte[16]);
        assertThrows(IllegalArgumentException.class, () -> aToB.tagSend(heap, 1));
        assertThrows(IllegalArgumentException.class, () -> a.tagReceive(heap, 1, -1L));
        assertThrows(IllegalArgumentException.class, () -> context.map(heap));
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldRefuseACallbackOfAnotherWorker() {
        UcxCallbackHandle ofB = b.register((request, status, tag, length) -> { });
        assertThrows(IllegalArgumentException.class, () -> a.tagReceive(arena.allocate(8), 1, -1L, ofB));
        assertThrows(IllegalArgumentException.class, () -> aToB.tagSend(arena.allocate(8), 1, ofB));
        assertEquals(0, a.outstandingRequests());
    }

    @Test
    void shouldThrowWhenUsingFeaturesTheContextDidNotAskFor() throws UcxException {
        // the context of this test asked for TAG only: no WAKEUP, no AM
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, a::eventFd);
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, a::arm);
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, () -> a.waitForEvents(0));
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, () -> b.setAmHandler(1, (h, d, attr) -> UcsStatus.OK));
        assertFailsWith(UcsStatus.ERR_INVALID_PARAM, () -> aToB.amSend(1, arena.allocate(8), arena.allocate(8)));
        assertEquals(0, a.outstandingRequests());
        // nothing broke
        long receive = b.tagReceive(arena.allocate(8), 4, -1L);
        Progress.complete(a, aToB.tagSend(arena.allocate(8), 4), b);
        assertEquals(8, Progress.receive(b, receive, a));
    }

    // ---- closing with outstanding requests ----------------------------------------------

    @Test
    void shouldCloseAWorkerWithPendingReceivesAndASendThePeerNeverReceives() throws UcxException {
        List<Long> receives = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            receives.add(a.tagReceive(arena.allocate(1024), NEVER_SENT_TAG + i, -1L));
        }
        // large enough for rendezvous: it cannot complete until b posts a matching receive, which it never does
        MemorySegment big = arena.allocate(4 << 20);
        long send = aToB.tagSend(big, 9);
        assertTrue(UcsStatus.isRequestPointer(send), "a 4 MiB send completed at once");
        for (int i = 0; i < 100; i++) {
            a.progress();
            b.progress();
        }
        assertEquals(UcsStatus.INPROGRESS, a.status(send));
        assertEquals(6, a.outstandingRequests());

        a.close();

        assertFalse(a.isOpen());
        assertFalse(aToB.isOpen());
        assertThrows(IllegalStateException.class, a::progress);
        assertThrows(IllegalStateException.class, a::address);
        assertThrows(IllegalStateException.class, () -> a.status(send));
        assertThrows(IllegalStateException.class, () -> a.release(send));
        assertThrows(IllegalStateException.class, () -> a.cancel(receives.get(0)));
        assertThrows(IllegalStateException.class, () -> a.receiveStatus(receives.get(0)));
        assertThrows(IllegalStateException.class, () -> a.tagReceive(arena.allocate(8), 1, -1L));
        assertThrows(IllegalStateException.class, () -> a.connect(b.address(), ErrorMode.NONE));
        assertThrows(IllegalStateException.class, () -> a.register((r, s, t, l) -> { }));
        assertThrows(IllegalStateException.class, () -> a.setAmHandler(1, null));
        assertThrows(IllegalStateException.class, a::signal);
        assertFailsWith(UcsStatus.ERR_NOT_CONNECTED, () -> aToB.tagSend(big, 9));
        assertThrows(IllegalStateException.class, aToB::info);
        assertDoesNotThrow(aToB::close);
        assertDoesNotThrow(a::close, "closing twice is a no-op");

        // the peer, which holds the unexpected rendezvous announcement, is unharmed
        for (int i = 0; i < 100; i++) {
            b.progress();
        }
        UcxWorker c = context.newWorker(ThreadMode.SINGLE, "c");
        MemorySegment target = arena.allocate(8);
        long receive = b.tagReceive(target, 77, -1L);
        Progress.complete(c, c.connect(b.address(), ErrorMode.NONE).tagSend(arena.allocate(8), 77), b);
        assertEquals(8, Progress.receive(b, receive, c));
    }

    @Test
    void shouldCloseWorkersWithTheContext() throws UcxException {
        long receive = b.tagReceive(arena.allocate(8), NEVER_SENT_TAG, -1L);
        context.close();
        assertFalse(context.isOpen());
        assertFalse(a.isOpen());
        assertFalse(b.isOpen());
        assertThrows(IllegalStateException.class, () -> b.status(receive));
        assertThrows(IllegalStateException.class, () -> context.newWorker(ThreadMode.SINGLE, "late"));
        assertThrows(IllegalStateException.class, () -> context.map(arena.allocate(64)));
        assertDoesNotThrow(context::close, "closing twice is a no-op");
    }

    @Test
    void shouldFailToOpenAContextWithAnInvalidConfigurationValue() {
        // (UCX 1.13 accepts unknown keys silently; it checks values)
        UcxException e = assertThrows(UcxException.class,
                () -> UcxContext.builder().config("RNDV_THRESH", "not-a-size").open().close());
        assertEquals(UcsStatus.ERR_INVALID_PARAM, e.status(), e.getMessage());
        assertTrue(e.getMessage().contains("RNDV_THRESH"), e.getMessage());
    }

    @Test
    void shouldFinishAFlushingEndpointCloseOnceThePeerProgresses() throws UcxException {
        long close = aToB.closeNonBlocking(false);
        assertEquals(UcsStatus.OK, Progress.complete(a, close, b));
        assertEquals(0, a.outstandingRequests());
    }
}
