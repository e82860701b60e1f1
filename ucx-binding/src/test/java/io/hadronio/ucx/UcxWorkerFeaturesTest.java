package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Active messages, completion callbacks, the worker's event fd and memory mapping,
 * between two workers of one context.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class UcxWorkerFeaturesTest {
    private static final int AM_ID = 7;
    // an upper bound for blocking waits that must return; never reached when the test passes
    private static final int WAIT_MILLIS = 30_000;

    private UcxContext context;
    private UcxWorker a;
    private UcxWorker b;
    private UcxEndpoint aToB;
    private Arena arena;

    @BeforeEach
    void setUp() throws UcxException {
        context = UcxContext.builder().features(Feature.TAG, Feature.AM, Feature.WAKEUP).name("features-test").open();
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

    private MemorySegment randomSegment(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        MemorySegment segment = arena.allocate(Math.max(size, 1)).asSlice(0, size);
        MemorySegment.copy(bytes, 0, segment, ValueLayout.JAVA_BYTE, 0, size);
        return segment;
    }

    private static byte[] bytes(MemorySegment segment) {
        return segment.toArray(ValueLayout.JAVA_BYTE);
    }

    // ---- tag receives ----------------------------------------------------------------------

    @Test
    void shouldReportTagAndLengthOfAMessageThatArrivedBeforeItsReceive() throws UcxException {
        // a first message leaves its tag and length behind in the worker
        MemorySegment first = arena.allocate(64);
        long firstReceive = b.tagReceive(first, 0x44, -1L);
        Progress.complete(a, aToB.tagSend(randomSegment(50, 16), 0x44), b);
        assertEquals(50, Progress.receive(b, firstReceive, a));
        assertEquals(0x44, b.receivedTag());

        MemorySegment source = randomSegment(100, 15);
        assertEquals(UcsStatus.OK, Progress.complete(a, aToB.tagSend(source, 0x55), b));
        for (int i = 0; i < 100; i++) { // b takes the eager message into its unexpected queue
            b.progress();
        }
        MemorySegment target = arena.allocate(128);
        long receive = b.tagReceive(target, 0x55, -1L); // may complete at once (UCX >= 1.16)
        assertEquals(100, Progress.receive(b, receive, a));
        assertEquals(0x55, b.receivedTag());
        assertArrayEquals(bytes(source), bytes(target.asSlice(0, 100)));
        assertEquals(0, b.outstandingRequests());
    }

    // ---- active messages -----------------------------------------------------------------

    /** What an active-message handler saw, copied during the upcall. */
    private record Delivery(byte[] header, long dataAddress, long length, byte[] data, long attributes) {
    }

    @Test
    void shouldDeliverSmallActiveMessagesWithHeaderAndData() throws UcxException {
        List<Delivery> deliveries = new ArrayList<>();
        b.setAmHandler(AM_ID, (header, data, attributes) -> {
            deliveries.add(new Delivery(bytes(header), data.address(), data.byteSize(), bytes(data), attributes));
            return UcsStatus.OK;
        });
        MemorySegment header = randomSegment(24, 1);
        MemorySegment data = randomSegment(200, 2);
        assertEquals(UcsStatus.OK, Progress.complete(a, aToB.amSend(AM_ID, header, data), b));
        Progress.until(() -> !deliveries.isEmpty(), () -> "active message never delivered", a, b);

        Delivery d = deliveries.get(0);
        assertArrayEquals(bytes(header), d.header());
        assertArrayEquals(bytes(data), d.data());
        assertEquals(0, d.attributes() & UcxAmHandler.ATTR_RENDEZVOUS);
        assertEquals(1, deliveries.size());
        assertEquals(0, a.outstandingRequests());
        assertEquals(0, b.outstandingRequests());
    }

    @Test
    void shouldDeliverActiveMessagesWithoutHeaderOrData() throws UcxException {
        List<Delivery> deliveries = new ArrayList<>();
        b.setAmHandler(AM_ID, (header, data, attributes) -> {
            deliveries.add(new Delivery(bytes(header), data.address(), data.byteSize(), bytes(data), attributes));
            return UcsStatus.OK;
        });
        MemorySegment empty = arena.allocate(1).asSlice(0, 0);
        Progress.complete(a, aToB.amSend(AM_ID, empty, randomSegment(5, 3)), b);
        Progress.complete(a, aToB.amSend(AM_ID, randomSegment(5, 4), empty), b);
        Progress.until(() -> deliveries.size() == 2, () -> deliveries.size() + " of 2 delivered", a, b);
        assertEquals(0, deliveries.get(0).header().length);
        assertArrayEquals(bytes(randomSegment(5, 3)), deliveries.get(0).data());
        assertArrayEquals(bytes(randomSegment(5, 4)), deliveries.get(1).header());
        assertEquals(0, deliveries.get(1).length());
    }

    @Test
    void shouldLetTheHandlerKeepEagerDataUntilReleased() throws UcxException {
        // the binding installs handlers with UCP_AM_FLAG_PERSISTENT_DATA: data may always be kept
        AtomicReference<Delivery> kept = new AtomicReference<>();
        b.setAmHandler(AM_ID, (header, data, attributes) -> {
            kept.set(new Delivery(bytes(header), data.address(), data.byteSize(), null, attributes));
            return UcsStatus.INPROGRESS;
        });
        MemorySegment data = randomSegment(512, 5);
        Progress.complete(a, aToB.amSend(AM_ID, randomSegment(8, 6), data), b);
        Progress.until(() -> kept.get() != null, () -> "active message never delivered", a, b);
        Delivery d = kept.get();
        assertTrue((d.attributes() & UcxAmHandler.ATTR_DATA) != 0, "no ATTR_DATA: " + Long.toHexString(d.attributes()));
        assertEquals(0, d.attributes() & UcxAmHandler.ATTR_RENDEZVOUS);
        for (int i = 0; i < 100; i++) { // the kept data survives further progress
            a.progress();
            b.progress();
        }
        MemorySegment keptData = MemorySegment.ofAddress(d.dataAddress()).reinterpret(d.length());
        assertArrayEquals(bytes(data), bytes(keptData));
        b.amReleaseData(keptData);
    }

    @Test
    void shouldFetchRendezvousActiveMessagesWithAmReceiveData() throws UcxException {
        int size = 1 << 20;
        AtomicReference<Delivery> announced = new AtomicReference<>();
        b.setAmHandler(AM_ID, (header, data, attributes) -> {
            // data is a descriptor here, valid after the callback because we return INPROGRESS
            announced.set(new Delivery(bytes(header), data.address(), data.byteSize(), null, attributes));
            return UcsStatus.INPROGRESS;
        });
        MemorySegment header = randomSegment(16, 7);
        MemorySegment data = randomSegment(size, 8);
        long send = aToB.amSend(AM_ID, header, data);
        Progress.until(() -> announced.get() != null, () -> "rendezvous message never announced", a, b);

        Delivery d = announced.get();
        assertTrue((d.attributes() & UcxAmHandler.ATTR_RENDEZVOUS) != 0,
                "1 MiB went eager: attributes 0x" + Long.toHexString(d.attributes()));
        assertEquals(size, d.length());
        assertArrayEquals(bytes(header), d.header());
        MemorySegment target = arena.allocate(size);
        long fetch = b.amReceiveData(MemorySegment.ofAddress(d.dataAddress()), target);
        assertEquals(UcsStatus.OK, Progress.complete(b, fetch, a));
        assertEquals(UcsStatus.OK, Progress.complete(a, send, b));
        assertArrayEquals(bytes(data), bytes(target));
        assertEquals(0, a.outstandingRequests());
        assertEquals(0, b.outstandingRequests());
    }

    @Test
    void shouldDeliverToTheHandlerThatReplacedAnother() throws UcxException {
        List<Delivery> first = new ArrayList<>();
        List<Delivery> second = new ArrayList<>();
        b.setAmHandler(AM_ID, (h, d, attr) -> {
            first.add(new Delivery(bytes(h), 0, d.byteSize(), null, attr));
            return UcsStatus.OK;
        });
        b.setAmHandler(AM_ID, (h, d, attr) -> { // replaces the first
            second.add(new Delivery(bytes(h), 0, d.byteSize(), null, attr));
            return UcsStatus.OK;
        });
        Progress.complete(a, aToB.amSend(AM_ID, randomSegment(4, 9), randomSegment(4, 10)), b);
        Progress.until(() -> second.size() == 1, () -> "not delivered to the new handler", a, b);
        assertTrue(first.isEmpty(), "delivered to the replaced handler");
        assertDoesNotThrow(() -> b.setAmHandler(AM_ID, null), "removing a handler");
    }

    // ---- completion callbacks --------------------------------------------------------------

    /** One completion callback call. */
    private record Completion(long request, int status, long tag, long length) {
    }

    @Test
    void shouldRunCompletionCallbacksWithTagAndLength() throws UcxException {
        List<Completion> sends = new ArrayList<>();
        List<Completion> receives = new ArrayList<>();
        UcxCallbackHandle onSend = a.register((request, status, tag, length) ->
                sends.add(new Completion(request, status, tag, length)));
        UcxCallbackHandle onReceive = b.register((request, status, tag, length) ->
                receives.add(new Completion(request, status, tag, length)));
        int size = 1 << 20; // rendezvous: the send cannot complete inside tagSend
        long senderTag = 0xABCD_0000_0000_1234L;
        MemorySegment source = randomSegment(size, 11);
        MemorySegment target = arena.allocate(size);

        long receive = b.tagReceive(target, 0xABCD_0000_0000_0000L, 0xFFFF_0000_0000_0000L, onReceive);
        long send = aToB.tagSend(source, senderTag, onSend);
        assertTrue(UcsStatus.isRequestPointer(send));
        assertTrue(UcsStatus.isRequestPointer(receive));
        Progress.until(() -> sends.size() == 1 && receives.size() == 1,
                () -> sends.size() + " send and " + receives.size() + " receive callbacks", a, b);

        assertEquals(new Completion(send, UcsStatus.OK, 0, 0), sends.get(0));
        assertEquals(new Completion(receive, UcsStatus.OK, senderTag, size), receives.get(0));
        assertArrayEquals(bytes(source), bytes(target));
        assertEquals(UcsStatus.OK, a.status(send));
        assertEquals(UcsStatus.OK, b.receiveStatus(receive));
        a.release(send);
        b.release(receive);
        assertEquals(0, a.outstandingRequests());
        assertEquals(0, b.outstandingRequests());
    }

    @Test
    void shouldRunTheReceiveCallbackWithErrCanceledWhenCancelled() throws UcxException {
        List<Completion> receives = new ArrayList<>();
        UcxCallbackHandle onReceive = b.register((request, status, tag, length) ->
                receives.add(new Completion(request, status, tag, length)));
        long receive = b.tagReceive(arena.allocate(64), 99, -1L, onReceive);
        b.cancel(receive);
        Progress.until(() -> !receives.isEmpty(), () -> "no callback after cancel", b);
        assertEquals(receive, receives.get(0).request());
        assertEquals(UcsStatus.ERR_CANCELED, receives.get(0).status());
        b.release(receive);
        assertEquals(0, b.outstandingRequests());
    }

    @Test
    void shouldSurviveACallbackThatThrows() throws UcxException {
        AtomicBoolean called = new AtomicBoolean();
        UcxCallbackHandle throwing = b.register((request, status, tag, length) -> {
            called.set(true);
            throw new IllegalStateException("thrown by the test, caught and logged by the binding");
        });
        long receive = b.tagReceive(arena.allocate(8), 5, -1L, throwing);
        Progress.complete(a, aToB.tagSend(randomSegment(8, 12), 5), b);
        Progress.until(called::get, () -> "callback never ran", a, b);
        assertEquals(UcsStatus.OK, b.receiveStatus(receive));
        b.release(receive);
    }

    // ---- event fd ------------------------------------------------------------------------------

    private static void armFully(UcxWorker worker) throws UcxException {
        Progress.until(() -> {
            try {
                return worker.arm();
            } catch (UcxException e) {
                throw new AssertionError(e);
            }
        }, () -> "arm() kept returning busy", worker);
    }

    @Test
    void shouldMakeTheEventFdReadableWhenSignalledFromAnotherThread() throws Exception {
        assertTrue(b.eventFd() >= 0);
        assertEquals(b.eventFd(), b.eventFd(), "the same fd every time");
        armFully(b);
        assertFalse(b.waitForEvents(0), "readable before anything happened");

        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread signaller = new Thread(() -> {
            try {
                b.signal();
            } catch (Throwable t) {
                failure.set(t);
            }
        }, "signaller");
        signaller.start();
        signaller.join();
        assertEquals(null, failure.get());
        assertTrue(b.waitForEvents(WAIT_MILLIS), "the event fd did not become readable after signal()");
        b.progress();
    }

    @Test
    void shouldReturnFromAwaitWhenSignalledFromAnotherThread() throws Exception {
        armFully(b);
        AtomicBoolean returned = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        Thread signaller = new Thread(() -> {
            // keeps signalling until await() returned, so no interleaving can lose the wake-up
            while (!returned.get()) {
                try {
                    b.signal();
                    Thread.sleep(5);
                } catch (Throwable t) {
                    failure.set(t);
                    return;
                }
            }
        }, "signaller");
        signaller.start();
        try {
            b.await();
        } finally {
            returned.set(true);
            signaller.join();
        }
        assertEquals(null, failure.get());
    }

    @Test
    void shouldMakeTheEventFdReadableWhenAMessageArrives() throws UcxException {
        MemorySegment target = arena.allocate(64);
        long receive = b.tagReceive(target, 21, -1L);
        armFully(b);
        assertFalse(b.waitForEvents(0));
        long send = aToB.tagSend(randomSegment(64, 13), 21);
        Progress.until(() -> a.status(send) != UcsStatus.INPROGRESS, () -> "send never completed", a);
        a.release(send);
        assertTrue(b.waitForEvents(WAIT_MILLIS), "no wake-up for an arriving message");
        assertEquals(64, Progress.receive(b, receive));
        assertArrayEquals(bytes(randomSegment(64, 13)), bytes(target));
    }

    // ---- memory mapping ----------------------------------------------------------------------

    @Test
    void shouldMapAndUnmapMemory() throws UcxException {
        MemorySegment memory = arena.allocate(1 << 20, 4096);
        UcxMemoryRegion region = context.map(memory);
        assertSame(memory, region.memory());
        region.close();
        assertDoesNotThrow(region::close, "unmapping twice is a no-op");
    }

    @Test
    void shouldTransferBetweenMappedBuffers() throws UcxException {
        int size = 256 << 10;
        MemorySegment source = arena.allocate(size, 4096);
        MemorySegment.copy(bytes(randomSegment(size, 14)), 0, source, ValueLayout.JAVA_BYTE, 0, size);
        MemorySegment target = arena.allocate(size, 4096);
        try (UcxMemoryRegion from = context.map(source); UcxMemoryRegion to = context.map(target)) {
            long receive = b.tagReceive(to.memory(), 31, -1L);
            assertEquals(UcsStatus.OK, Progress.complete(a, aToB.tagSend(from.memory(), 31), b));
            assertEquals(size, Progress.receive(b, receive, a));
            assertArrayEquals(bytes(source), bytes(target));
        }
    }

    @Test
    void shouldUnmapLeftoverRegionsWhenTheContextCloses() throws UcxException {
        UcxMemoryRegion region = context.map(arena.allocate(64 << 10, 4096));
        context.close();
        assertDoesNotThrow(region::close, "already unmapped by the context");
    }
}
