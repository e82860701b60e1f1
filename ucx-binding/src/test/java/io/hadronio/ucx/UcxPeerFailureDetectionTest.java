package io.hadronio.ucx;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * {@link UcxContext.Builder#peerFailureDetection}: endpoints in {@link ErrorMode#PEER}
 * keep the transports of error mode NONE, large messages still travel, and a forced
 * close fails what is outstanding. (That a killed peer is seen as an error, and does not
 * abort this process, is {@link UcxPeerCrashTest}: it takes a second JVM.)
 */
class UcxPeerFailureDetectionTest {
    private static final Set<String> SHARED_MEMORY = Set.of("sysv", "posix", "cma", "xpmem", "knem");

    private static UcxContext open(boolean peerFailureDetection) throws UcxException {
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG).name("peer-failure-detection-test");
        if (peerFailureDetection) {
            builder.peerFailureDetection(Duration.ofMillis(100));
        }
        return builder.open();
    }

    @Test
    void shouldGiveAPeerEndpointTheSameTransportsAsAnEndpointWithoutErrorHandling() throws UcxException {
        try (UcxContext context = open(true)) {
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            Set<String> none = a.connect(b.address(), ErrorMode.NONE).transports();
            UcxEndpoint peer = a.connect(b.address(), ErrorMode.PEER);
            assertTrue(none.stream().anyMatch(SHARED_MEMORY::contains), none::toString);
            if (NativeEnvironment.get(UcxContext.CMA_MEMORY_INVALIDATE).equalsIgnoreCase("y")) {
                // cma included, where the system offers it (process_vm_readv allowed between the processes)
                assertEquals(none, peer.transports(), peer::info);
            } else {
                // the user's UCX_CMA_MEMORY_INVALIDATE=n: shared memory without cma
                assertFalse(peer.transports().contains("cma"), peer::info);
            }
            assertFalse(peer.transports().contains("tcp"), peer::info);
        }
    }

    @Test
    void shouldRunAPeerEndpointOverTcpWithoutIt() throws UcxException {
        // what finding 1 of the design brief saw: sysv/posix offer no peer-failure handling by default,
        // so messages go over tcp (once UCX_CMA_MEMORY_INVALIDATE=y is in the environment, which
        // another test's context may have set in this JVM, rendezvous data may take cma beside it)
        try (UcxContext context = open(false)) {
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            UcxEndpoint peer = a.connect(b.address(), ErrorMode.PEER);
            Set<String> transports = peer.transports();
            assertTrue(transports.contains("tcp"), peer::info);
            assertFalse(transports.contains("sysv") || transports.contains("posix"), peer::info);
        }
    }

    @Test
    void shouldReportTheConfigurationItMade() throws UcxException {
        try (UcxContext context = open(true)) {
            assertEquals("y", context.config().get("MM_ERROR_HANDLING"));
            assertEquals("100000us", context.config().get("KEEPALIVE_INTERVAL"));
            assertEquals(Duration.ofMillis(100), context.peerFailureDetection());
            assertEquals(NativeEnvironment.get(UcxContext.CMA_MEMORY_INVALIDATE).equalsIgnoreCase("y"),
                    context.cmaWithPeerErrorHandling());
        }
        try (UcxContext context = open(false)) {
            assertNull(context.peerFailureDetection());
            assertFalse(context.config().containsKey("MM_ERROR_HANDLING"));
        }
    }

    @Test
    void shouldNameTheSettingsBothEndsMustShare() throws UcxException {
        try (UcxContext context = open(true)) {
            assertEquals("none", context.endpointProfile(ErrorMode.NONE));
            String cma = context.cmaWithPeerErrorHandling() ? "+cma" : "";
            assertEquals("peer+mm" + cma, context.endpointProfile(ErrorMode.PEER));
        }
        try (UcxContext context = UcxContext.builder().config("MM_ERROR_HANDLING", "n").open()) {
            assertEquals("none", context.endpointProfile(ErrorMode.NONE));
            assertTrue(context.endpointProfile(ErrorMode.PEER).matches("peer(\\+cma)?"),
                    context.endpointProfile(ErrorMode.PEER));
        }
    }

    @Test
    void shouldTellEndsWithAnotherSharedMemoryGeometryApart() throws UcxException {
        // a sender lays messages out in the receiver's FIFO with its own sizes: ends that differ must not connect
        String base;
        try (UcxContext context = open(true)) {
            base = context.endpointProfile(ErrorMode.PEER);
            assertFalse(base.contains("#"), base);
        }
        String fifo;
        try (UcxContext context = UcxContext.builder().peerFailureDetection(Duration.ofMillis(100))
                .config("MM_FIFO_SIZE", "128").open()) {
            fifo = context.endpointProfile(ErrorMode.PEER);
            assertTrue(fifo.startsWith(base + "+mm#"), fifo);
            assertTrue(context.endpointProfile(ErrorMode.NONE).startsWith("none+mm#"));
        }
        try (UcxContext context = UcxContext.builder().peerFailureDetection(Duration.ofMillis(100))
                .config("MM_FIFO_SIZE", "128").open()) {
            assertEquals(fifo, context.endpointProfile(ErrorMode.PEER), "the same geometry, the same profile");
        }
        try (UcxContext context = UcxContext.builder().peerFailureDetection(Duration.ofMillis(100))
                .config("MM_FIFO_SIZE", "256").open()) {
            String other = context.endpointProfile(ErrorMode.PEER);
            assertNotEquals(fifo, other);
            assertTrue(other.length() <= 64, other);
        }
        try (UcxContext context = UcxContext.builder().peerFailureDetection(Duration.ofMillis(100))
                .config("SYSV_SEG_SIZE", "16k").open()) {
            assertNotEquals(base, context.endpointProfile(ErrorMode.PEER));
        }
    }

    @Test
    void shouldRefuseAKeepaliveIntervalBelowOneMillisecondButZero() throws UcxException {
        assertThrows(IllegalArgumentException.class,
                () -> UcxContext.builder().peerFailureDetection(Duration.ofNanos(999_999)));
        assertThrows(IllegalArgumentException.class,
                () -> UcxContext.builder().peerFailureDetection(Duration.ofMillis(-1)));
        try (UcxContext context = UcxContext.builder().peerFailureDetection(Duration.ZERO).open()) {
            assertEquals("inf", context.config().get("KEEPALIVE_INTERVAL"), "zero: no keepalive");
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            UcxEndpoint peer = a.connect(b.address(), ErrorMode.PEER);
            assertFalse(peer.transports().contains("tcp"), peer::info);
        }
    }

    @Test
    void shouldSetAnEnvironmentVariableOnlyWhenItIsAbsent() {
        String name = "HADRONIO_TEST_" + UUID.randomUUID().toString().replace('-', '_').toUpperCase();
        assertNull(NativeEnvironment.get(name));
        assertEquals("first", NativeEnvironment.setIfAbsent(name, "first"));
        assertEquals("first", NativeEnvironment.get(name));
        assertEquals("first", NativeEnvironment.setIfAbsent(name, "second"), "a value that is set is never changed");
        assertEquals("first", NativeEnvironment.get(name));
    }

    @Test
    void shouldCarryEagerAndRendezvousMessagesOnAPeerEndpoint() throws UcxException {
        try (UcxContext context = open(true); Arena arena = Arena.ofShared()) {
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            List<Integer> failures = new ArrayList<>();
            UcxEndpoint aToB = a.connect(b.address(), ErrorMode.PEER, (ep, status) -> failures.add(status));
            MemorySegment reference = UcxCrashPeer.reference(arena, 4 << 20);
            MemorySegment source = arena.allocate(4 << 20);
            MemorySegment target = arena.allocate(4 << 20);
            long sequence = 1;
            for (int size : new int[] {0, 8, 4096, 65536, 1 << 20, 4 << 20}) {
                MemorySegment.copy(reference, 0, source, 0, size);
                UcxCrashPeer.stamp(source.asSlice(0, size), sequence);
                target.fill((byte) 0);
                long receive = b.tagReceive(target.asSlice(0, size), 7, -1L);
                assertEquals(UcsStatus.OK, Progress.complete(a, aToB.tagSend(source.asSlice(0, size), 7), b));
                assertEquals(size, Progress.receive(b, receive, a));
                assertTrue(UcxCrashPeer.check(target.asSlice(0, size), sequence, reference), "message of " + size + " B");
                sequence++;
            }
            assertTrue(failures.isEmpty(), failures::toString);
            assertEquals(0, a.outstandingRequests());
            assertEquals(0, b.outstandingRequests());
        }
    }

    @Test
    void shouldFailOutstandingSendsWhenAPeerEndpointIsForceClosed() throws UcxException {
        // what a provider does when its TCP control connection reports the peer gone
        try (UcxContext context = open(true); Arena arena = Arena.ofShared()) {
            UcxWorker a = context.newWorker(ThreadMode.SINGLE, "a");
            UcxWorker b = context.newWorker(ThreadMode.SINGLE, "b");
            UcxEndpoint aToB = a.connect(b.address(), ErrorMode.PEER);
            MemorySegment big = arena.allocate(4 << 20);
            // rendezvous: cannot complete, b never posts a receive
            List<Long> sends = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sends.add(aToB.tagSend(big, 9));
            }
            for (int i = 0; i < 100; i++) {
                a.progress();
                b.progress();
            }
            for (long send : sends) {
                assertEquals(UcsStatus.INPROGRESS, a.status(send));
            }
            long close = aToB.closeNonBlocking(true);
            for (long send : sends) {
                int status = Progress.complete(a, send);
                assertTrue(UcsStatus.isError(status), () -> "a send outstanding at the forced close: " + status);
            }
            Progress.complete(a, close);
            assertFalse(aToB.isOpen());
            assertEquals(0, a.outstandingRequests());
        }
    }
}
