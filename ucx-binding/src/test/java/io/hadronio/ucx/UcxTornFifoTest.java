package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * A sender that dies after taking an element of a worker's shared-memory receive FIFO
 * and before marking it written (docs/crash-isolation.md, "a worker that stops
 * delivering after early kills"): UCX 1.13 then delivers nothing more over {@code sysv}
 * to that worker, from anyone. Here the dying sender is simulated in one process — the
 * test takes the element itself ({@link SysvReceiveFifo#takeElement}) and never writes
 * it — and a second worker's message queues behind it. {@link UcxWorker#reportDeadPeer}
 * must get it delivered once the grace period has passed, and not before. The same with
 * a real sender killed inside UCX's write: {@link UcxPeerCrashTest}'s {@code tear} case.
 */
class UcxTornFifoTest {
    private static final long TAG = 0x746f_726e_0000_0001L;

    private static UcxContext open() throws UcxException {
        return UcxContext.builder().features(Feature.TAG).name("torn-fifo-test")
                .peerFailureDetection(Duration.ofMillis(100)).open();
    }

    @Test
    void shouldFindEachWorkersOwnReceiveFifo() throws UcxException {
        try (UcxContext context = open()) {
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            assertNotNull(a.receiveFifo(), "no sysv FIFO found for a new worker (see the DEBUG log of UcxWorker)");
            assertNotNull(b.receiveFifo());
            assertTrue(a.receiveFifo().shmid() != b.receiveFifo().shmid());
            assertEquals(0, a.receiveFifo().head());
            assertArrayEquals(new long[0], a.receiveFifo().unwritten());
        }
    }

    @Test
    void shouldDeliverAgainOnceTheElementOfADeadSenderIsCompleted() throws Exception {
        try (UcxContext context = open(); Arena arena = Arena.ofConfined()) {
            UcxWorker receiver = context.newWorker(ThreadMode.SINGLE, "receiver");
            UcxWorker sender = context.newWorker(ThreadMode.SINGLE, "sender");
            UcxEndpoint endpoint = connected(receiver, sender, arena);
            SysvReceiveFifo fifo = receiver.receiveFifo();

            long torn = fifo.takeElement(); // a sender killed right after taking it
            MemorySegment in = arena.allocate(8);
            MemorySegment out = arena.allocate(8).fill((byte) 0x5A);
            long receive = receiver.tagReceive(in, TAG, -1L);
            assertEquals(UcsStatus.OK, Progress.complete(sender, endpoint.tagSend(out, TAG), receiver));
            progressFor(Duration.ofMillis(300), receiver, sender);
            assertEquals(UcsStatus.INPROGRESS, receiver.receiveStatus(receive), "not stuck behind the taken element");
            assertArrayEquals(new long[] {torn}, fifo.unwritten());

            receiver.reportDeadPeer();
            long reported = System.nanoTime();
            progressFor(Duration.ofMillis(500), receiver, sender);
            assertEquals(UcsStatus.INPROGRESS, receiver.receiveStatus(receive), "completed before the grace period");
            assertEquals(0, receiver.tornElementsCompleted());

            assertEquals(8, Progress.receive(receiver, receive, sender));
            assertTrue(System.nanoTime() - reported >= UcxWorker.TORN_ELEMENT_GRACE_NANOS);
            assertEquals(-1, in.mismatch(out));
            assertEquals(1, receiver.tornElementsCompleted());
            assertArrayEquals(new long[0], fifo.unwritten());

            // and the FIFO works on: a full lap of it and more
            for (int i = 0; i < 3 * fifo.fifoSize(); i++) {
                in.fill((byte) 0);
                out.set(ValueLayout.JAVA_LONG, 0, i);
                long r = receiver.tagReceive(in, TAG, -1L);
                assertEquals(UcsStatus.OK, Progress.complete(sender, endpoint.tagSend(out, TAG), receiver));
                assertEquals(8, Progress.receive(receiver, r, sender));
                assertEquals(i, in.get(ValueLayout.JAVA_LONG, 0));
            }
            assertEquals(1, receiver.tornElementsCompleted());
        }
    }

    @Test
    void shouldLeaveAnElementThatItsSenderFinishesWithinTheGracePeriod() throws Exception {
        try (UcxContext context = open(); Arena arena = Arena.ofConfined()) {
            UcxWorker receiver = context.newWorker(ThreadMode.SINGLE, "receiver");
            UcxWorker sender = context.newWorker(ThreadMode.SINGLE, "sender");
            UcxEndpoint endpoint = connected(receiver, sender, arena);
            SysvReceiveFifo fifo = receiver.receiveFifo();

            long slow = fifo.takeElement(); // a live sender, in the middle of writing
            receiver.reportDeadPeer(); // while another peer is reported dead
            progressFor(Duration.ofMillis(200), receiver, sender);
            fifo.complete(slow); // the live sender finishes (with a message UCX drops)
            progressFor(Duration.ofNanos(UcxWorker.TORN_ELEMENT_GRACE_NANOS + TimeUnit.MILLISECONDS.toNanos(200)),
                    receiver, sender);
            assertEquals(0, receiver.tornElementsCompleted(), "completed an element its sender had written");

            MemorySegment in = arena.allocate(8);
            long receive = receiver.tagReceive(in, TAG, -1L);
            assertEquals(UcsStatus.OK, Progress.complete(sender, endpoint.tagSend(arena.allocate(8), TAG), receiver));
            assertEquals(8, Progress.receive(receiver, receive, sender));
        }
    }

    @Test
    void shouldIgnoreAReportWhenNothingIsUnwritten() throws Exception {
        try (UcxContext context = open(); Arena arena = Arena.ofConfined()) {
            UcxWorker receiver = context.newWorker(ThreadMode.SINGLE, "receiver");
            UcxWorker sender = context.newWorker(ThreadMode.SINGLE, "sender");
            UcxEndpoint endpoint = connected(receiver, sender, arena);
            receiver.reportDeadPeer();
            MemorySegment in = arena.allocate(8);
            long receive = receiver.tagReceive(in, TAG, -1L);
            assertEquals(UcsStatus.OK, Progress.complete(sender, endpoint.tagSend(arena.allocate(8), TAG), receiver));
            assertEquals(8, Progress.receive(receiver, receive, sender));
            assertEquals(0, receiver.tornElementsCompleted());
        }
    }

    /** An endpoint from sender to receiver over sysv, wired up by one message. */
    private static UcxEndpoint connected(UcxWorker receiver, UcxWorker sender, Arena arena) throws UcxException {
        assumeTrue(receiver.receiveFifo() != null, "no sysv FIFO on this system");
        UcxEndpoint endpoint = sender.connect(receiver.address(), ErrorMode.PEER, (ep, status) -> { });
        assumeTrue(endpoint.transports().contains("sysv"), endpoint::info);
        MemorySegment hello = arena.allocate(8);
        long receive = receiver.tagReceive(hello, TAG - 1, -1L);
        assertEquals(UcsStatus.OK, Progress.complete(sender, endpoint.tagSend(hello, TAG - 1), receiver));
        Progress.receive(receiver, receive, sender);
        return endpoint;
    }

    private static void progressFor(Duration duration, UcxWorker... workers) {
        long end = System.nanoTime() + duration.toNanos();
        while (System.nanoTime() - end < 0) {
            for (UcxWorker w : workers) {
                w.progress();
            }
        }
    }
}
