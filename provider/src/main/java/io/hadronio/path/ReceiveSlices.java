package io.hadronio.path;

import io.hadronio.worker.WorkerGroup;

import static io.hadronio.path.Requests.NONE;
import static io.hadronio.path.WireFormat.BULK_MIN;
import static io.hadronio.path.WireFormat.CREDIT_WANTS_BULK;
import static io.hadronio.path.WireFormat.KIND_DATA;
import static io.hadronio.path.WireFormat.TAG_MASK;
import static io.hadronio.path.WireFormat.bulkTag;
import static io.hadronio.path.WireFormat.tag;

import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxEndpoint;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The receive side of a {@link Connection}: its pre-posted receive slices, the bulk messages it
 * receives into the reader's buffer or a slice, and the credits it returns to the peer (see
 * Connection, Flow control and Bulk messages).
 *
 * <p>Message {@code k} lands in slice {@code k % sliceCount}; the reader copies the head slice
 * out, reposts it, and reports what it consumed with a CREDIT message every quarter of the
 * writer's window, in messages or in bytes ({@link #batchDue}).
 *
 * <p>Guarding: every field but the finals is the reader's, under the worker group's lock (a read
 * holds it, and so do the control thread's flush, discard and release and a waiter's readiness
 * look). {@link #useEndpoint} sets the endpoint fields once under that lock; before it there is no
 * endpoint and no credit is sent.
 */
final class ReceiveSlices {
    // bulk messages received straight into the reader's buffer, and through a slice (diagnostics, tests)
    private static final AtomicLong BULK_DIRECT = new AtomicLong();
    private static final AtomicLong BULK_STAGED = new AtomicLong();
    // how long a read waits, progressing, for a bulk message's bytes to land in the application's
    // buffer before it takes them through its own slice instead, where it may sleep (a sender whose
    // process is descheduled before its rendezvous header left). The fetch itself takes ~13 us for
    // 64 KiB here (2-core machine, 64 KiB ping-pong: 21,500 of them, none done inside the receive
    // call); with 20 us, 28 of 21,500 fell back, with 1 ms, 2-7
    private static final long BULK_DIRECT_WAIT_NANOS = 200_000;
    // a destination fewer than this many bytes past a page boundary (but not on it) is slow to copy into (aliasProne)
    static final int ALIAS_WINDOW = 32;
    // bulkAddress: no direct landing (a direct buffer's address is never 0)
    private static final long NO_BULK = 0;
    // CREDIT messages that may be in flight at once (each with its own word)
    static final int CREDIT_SLOTS = 4;

    private final WorkerGroup group;
    private final UcxWorker worker;
    // asks the control loop to send a credit that could not go now
    private final SendWatch watch;
    // our id: the peer puts it in the tags it sends us
    private final int localId;
    // what our receives carry, so that their completion names the connection (WorkerGroup.attach)
    private final int token;
    // the connection's completions: a head receive found in progress is not asked again until one came
    private final Completions completions;

    private final int sliceSize;
    private final int sliceCount;
    // consumed messages, or bytes, that make a credit due: a quarter of the writer's window in either (see batchDue)
    private final int messageBatch;
    private final long byteBatch;
    // where the slices lie (area); told of large messages, which move it into huge pages
    private final ConnectionMemory memory;
    private final MemorySegment area;
    private final ByteBuffer view;
    private final long[] requests;
    // a slice's receive that completed and was taken, given back to UCX when the slice is posted again
    private final long[] finished;
    // length of a slice's message when its receive completed inside tagReceive, else -1
    private final int[] immediate;
    // the slice consumed last, -1 if none: posted again at the next drain, not on the way back to
    // the application (see recycleHead)
    private int deferredSlice = -1;
    private int head;             // slice index of the next message
    private long consumed;        // DATA messages fully consumed
    private int headOffset;       // bytes consumed of the head message
    private int headLength = -1;  // length of the head message, -1 while not received
    // completions when the head's receive was last found in progress (Completions.NEVER: since it was posted, not)
    private long headInProgressAt = Completions.NEVER;
    private long creditsReported;
    // bytes of the DATA messages consumed (bulk ones' bytes too), and of those reported with a credit
    private long consumedBytes;
    private long bytesReported;
    // the last read read into a buffer that takes bulk messages (reported with the credits)
    private boolean wantsBulk;
    private final MemorySegment creditOut;
    private final long[] creditOutRequests = new long[CREDIT_SLOTS];
    // 1 when the endpoint's large messages move by a process-to-process copy, 0 when not, -1 not known yet
    private int bulkInPlace = -1;

    // set by useEndpoint: the endpoint credits go out on, their tag, and whether the peer is on this very worker
    private UcxEndpoint endpoint;
    private long creditTag;
    private boolean selfLoop;

    /**
     * Posts the receive of every slice of {@code area} ({@code sliceCount x sliceSize} bytes);
     * {@code creditOut} holds the words of {@link #CREDIT_SLOTS} CREDIT messages. Under the lock.
     */
    ReceiveSlices(WorkerGroup group, SendWatch watch, Completions completions, int localId, int token,
                  ConnectionMemory memory, MemorySegment area, int sliceSize, int sliceCount, MemorySegment creditOut) throws UcxException {
        this.group = group;
        this.worker = group.worker();
        this.watch = watch;
        this.completions = completions;
        this.localId = localId;
        this.token = token;
        this.sliceSize = sliceSize;
        this.sliceCount = sliceCount;
        int quarter = Math.max(1, sliceCount / 4);
        this.messageBatch = sliceCount >= 4 ? SendSlots.MESSAGES_PER_SLICE * sliceCount / 4 : 1;
        this.byteBatch = (long) quarter * sliceSize;
        this.memory = memory;
        this.area = area;
        this.view = area.asByteBuffer();
        this.requests = new long[sliceCount];
        this.finished = new long[sliceCount];
        java.util.Arrays.fill(finished, NONE);
        this.immediate = new int[sliceCount];
        java.util.Arrays.fill(immediate, -1);
        this.creditOut = creditOut;
        java.util.Arrays.fill(creditOutRequests, NONE);
        for (int i = 0; i < sliceCount; i++) {
            postSlice(i);
        }
    }

    /** Bulk messages received straight into a reader's buffer in this JVM so far. */
    static long bulkReceivedDirect() {
        return BULK_DIRECT.get();
    }

    /** Bulk messages received through a slice (a reader's buffer could not take them, or a close drained them). */
    static long bulkReceivedStaged() {
        return BULK_STAGED.get();
    }

    /** The endpoint to the peer is made: credits go out on it, tagged with the peer's id. Under the lock. */
    void useEndpoint(UcxEndpoint endpoint, int peerId, boolean selfLoop) {
        this.endpoint = endpoint;
        this.creditTag = tag(peerId, WireFormat.KIND_CREDIT);
        this.selfLoop = selfLoop;
    }

    /** Posts the receive of a slice; a message already waiting may complete it at once. */
    private void postSlice(int slice) throws UcxException {
        postReceive(slice, tag(localId, KIND_DATA));
    }

    /** Posts a receive of {@code tag} into {@code slice}; one that completes inside the call records its length. */
    private void postReceive(int slice, long tag) throws UcxException {
        long done = finished[slice];
        if (done != NONE) {
            finished[slice] = NONE;
            worker.release(done);
        }
        long request = worker.tagReceive(area.address() + (long) slice * sliceSize, sliceSize, tag, TAG_MASK, token);
        if (request == UcxWorker.COMPLETED) {
            requests[slice] = NONE;
            immediate[slice] = (int) worker.receivedLength();
        } else {
            requests[slice] = request;
            immediate[slice] = -1;
        }
        if (slice == head) {
            // a new receive (its completion may even have been reported inside the call): asked at the next look
            headInProgressAt = Completions.NEVER;
        }
    }

    /** DATA messages fully consumed so far. Under the lock. */
    long consumed() {
        return consumed;
    }

    /** Whether the head message has arrived and is being read (its length is known). Under the lock. */
    boolean headArrived() {
        return headLength >= 0;
    }

    /**
     * Whether the head slice's receive has ended (or completed inside the call that posted it):
     * a reader may find its message. A message that arrived is taken at once (its length noted,
     * the request given back), so that the read that follows finds it without asking UCX again;
     * a failed receive is left for that read to report. The status is asked only when one of the
     * connection's requests completed since the last look ({@link Completions}). Under the lock.
     */
    boolean headEnded() {
        long request = requests[head];
        if (request == NONE) {
            return true;
        }
        if (!completions.since(headInProgressAt)) {
            return false;
        }
        int status = worker.receiveStatus(request);
        if (status == UcsStatus.INPROGRESS) {
            headInProgressAt = completions.count();
            return false;
        }
        if (status == UcsStatus.OK) {
            takeHead(request);
        }
        return true;
    }

    /**
     * Takes and drops the DATA messages that arrived, up to {@code upTo} consumed in all (all
     * that arrived while {@code upTo} is -1), bulk ones with their bytes. True once that many
     * were consumed; false while the next has not arrived. Under the lock.
     */
    boolean discard(long upTo) throws IOException {
        while (upTo < 0 || consumed < upTo) {
            if (headLength < 0 && !headReceived()) {
                return false;
            }
            if (headLength == 0) {
                // a bulk message's place: its bytes too, or the peer's send never completes
                postBulk(head);
                headLength = -1;
                if (!headReceived()) {
                    return false;
                }
            }
            recycleHead(headLength);
        }
        return true;
    }

    /**
     * The bytes of the head message not read yet, if it is there; 0 while it is not, or while it
     * is a bulk message's place (its bytes are counted once they are in a slice). Under the lock.
     */
    int available() throws IOException {
        if (headLength < 0 && !headReceived()) {
            return 0;
        }
        return headLength == 0 ? 0 : headLength - headOffset;
    }

    /**
     * Copies received bytes into {@code dsts[offset .. offset + length)}, as many as are there,
     * and returns credits when a batch was consumed. Under the lock.
     *
     * @return bytes copied, 0 when none is there
     */
    long drain(ByteBuffer[] dsts, int offset, int length) throws IOException {
        repostDeferred();
        final int end = offset + length;
        final ByteBuffer view = this.view;
        long total = 0;
        int i = offset;
        boolean first = true;
        while (true) {
            while (i < end && !dsts[i].hasRemaining()) {
                i++;
            }
            if (i >= end) {
                break;
            }
            if (first) {
                // what this reader reads into decides whether bulk messages pay (told with the credits)
                first = false;
                wantsBulk = bulkAddress(dsts[i]) != NO_BULK;
            }
            if (headLength < 0 && !headReceived()) {
                break;
            }
            ByteBuffer dst = dsts[i];
            if (headLength == 0) {
                // a bulk message's place: its bytes straight into a direct buffer that holds any
                // message, else through our slice like any other message
                long direct = receiveBulkInto(dst);
                if (direct > 0) {
                    total += direct;
                    continue;
                }
                postBulk(head);
                headLength = -1;
                if (!headReceived()) {
                    break;
                }
            }
            int n = Math.min(headLength - headOffset, dst.remaining());
            int pos = dst.position();
            dst.put(pos, view, head * sliceSize + headOffset, n);
            dst.position(pos + n);
            headOffset += n;
            total += n;
            if (headOffset == headLength) {
                recycleHead(headLength);
            }
        }
        if (total > 0) {
            returnCredits(false);
        }
        return total;
    }

    /**
     * The head is a bulk message's place: receives its bytes into {@code dst} when that is a
     * direct buffer with room for any message and UCX delivers them within
     * {@link #BULK_DIRECT_WAIT_NANOS} (over shared memory our own progress fetches them: one copy,
     * from the sender's slot into the application's buffer, where a slice costs a second). Returns the
     * bytes taken (the message consumed), or 0 when the caller should take them through the slice.
     */
    private long receiveBulkInto(ByteBuffer dst) throws IOException {
        long address = bulkAddress(dst);
        if (address == NO_BULK) {
            return 0;
        }
        int pos = dst.position();
        long request = worker.tagReceive(address, sliceSize, bulkTag(localId, consumed), TAG_MASK);
        long length;
        if (request == UcxWorker.COMPLETED) {
            length = worker.receivedLength();
        } else {
            int status = worker.receiveStatus(request);
            long deadline = System.nanoTime() + BULK_DIRECT_WAIT_NANOS;
            while (status == UcsStatus.INPROGRESS && System.nanoTime() - deadline < 0) {
                group.progressLocked();
                status = worker.receiveStatus(request);
            }
            if (status == UcsStatus.INPROGRESS) {
                // the application's buffer must not be written after this read returns: cancel, and
                // wait until UCX let go of it (a transfer already under way finishes, then counts)
                worker.cancel(request);
                while ((status = worker.receiveStatus(request)) == UcsStatus.INPROGRESS) {
                    group.progressLocked();
                }
            }
            length = worker.receivedLength();
            worker.release(request);
            if (status == UcsStatus.ERR_CANCELED) {
                return 0;
            }
            if (status != UcsStatus.OK) {
                throw new IOException("UCX receive failed: " + UcsStatus.describe(status));
            }
        }
        if (length <= 0) {
            throw new java.net.ProtocolException("an empty bulk message");
        }
        dst.position(pos + (int) length);
        recycleHead((int) length);
        BULK_DIRECT.incrementAndGet();
        return length;
    }

    /**
     * Where a bulk message's bytes land in {@code dst} (its position's address), or
     * {@link #NO_BULK} when they cannot land there directly: the buffer must be direct, writable,
     * with room for any message, on an endpoint whose large messages move by a process-to-process
     * copy (cma, knem, xpmem), which finishes inside the receive (elsewhere, a NIC or tcp, it would
     * take a transfer the read has to wait for), and not start just past a page boundary
     * ({@link #aliasProne}).
     */
    private long bulkAddress(ByteBuffer dst) {
        if (!dst.isDirect() || dst.isReadOnly() || dst.remaining() < sliceSize || !bulkCopiesInPlace()) {
            return NO_BULK;
        }
        long address = MemorySegment.ofBuffer(dst).address();
        return aliasProne(address) ? NO_BULK : address;
    }

    /**
     * Whether the kernel's copy into {@code address} from a page-aligned source (a sender's send
     * slot) is slow: its offset in a page is 1 to {@link #ALIAS_WINDOW} - 1 bytes, so each load of
     * the source falls on the page offset of a store to the destination a few bytes before it.
     * The copy of {@code process_vm_readv} (cma) into such a buffer ran at under half the speed:
     * 1.7-2.0 GB/s of 64-KiB chunks into a buffer 8, 16 or 24 bytes past a page boundary, 3.0-4.4
     * GB/s at 0 and from 32 on (docs/repro/cma-pipeline.c, docs/benchmarks/patterns.md). And
     * {@code ByteBuffer.allocateDirect} of 128 KiB or more gives an address 16 bytes past one
     * (glibc's {@code malloc} header): a fetch into such a buffer ran at 1.2-1.9 GB/s. Its bytes
     * go through a slice instead, whose copy out with Java's (vector) copy does not pay it.
     */
    static boolean aliasProne(long address) {
        long inPage = address & 4095;
        return inPage != 0 && inPage < ALIAS_WINDOW;
    }

    private boolean bulkCopiesInPlace() {
        int known = bulkInPlace;
        if (known < 0) {
            // once, from the endpoint's lanes (under the lock)
            java.util.Set<String> t = endpoint == null || !endpoint.isOpen() ? java.util.Set.of() : endpoint.transports();
            known = t.contains("cma") || t.contains("knem") || t.contains("xpmem") ? 1 : 0;
            bulkInPlace = known;
        }
        return known == 1;
    }

    /** Posts the receive of the head bulk message's bytes into its slice (after its empty place arrived there). */
    private void postBulk(int slice) throws UcxException {
        BULK_STAGED.incrementAndGet();
        postReceive(slice, bulkTag(localId, consumed));
    }

    /**
     * Whether the head message is there (its length then known), asking UCX only when one of the
     * connection's requests completed since the last look ({@link Completions}).
     *
     * @throws IOException when the head's receive failed
     */
    private boolean headReceived() throws IOException {
        long request = requests[head];
        if (request == NONE) {
            // completed inside tagReceive
            headLength = immediate[head];
            immediate[head] = -1;
            headOffset = 0;
            if (headLength == 0 || headLength >= BULK_MIN) {
                memory.largeMessage();
            }
            return headLength >= 0;
        }
        if (!completions.since(headInProgressAt)) {
            return false;
        }
        int status = worker.receiveStatus(request);
        if (status == UcsStatus.INPROGRESS) {
            headInProgressAt = completions.count();
            return false;
        }
        if (status != UcsStatus.OK) {
            worker.release(request);
            requests[head] = NONE;
            throw new IOException("UCX receive failed: " + UcsStatus.describe(status));
        }
        takeHead(request);
        return true;
    }

    /**
     * The head's receive completed with {@code OK} (its status just asked): its message becomes the
     * head message. The request goes back to UCX when the slice is posted again, off the round trip's path.
     */
    private void takeHead(long request) {
        long received = worker.receivedLength();
        finished[head] = request;
        requests[head] = NONE;
        headLength = (int) received;
        headOffset = 0;
        // a large message, or an empty one in a bulk message's place: the areas into huge pages (once)
        if (headLength == 0 || headLength >= BULK_MIN) {
            memory.largeMessage();
        }
    }

    /**
     * The head message ({@code length} bytes, a bulk message's included) is consumed: its slice is
     * posted again at the next drain ({@link #repostDeferred}), or now if another consumed slice
     * still waits for that (slices are posted in ring order: UCX matches equal tags in the order
     * they were posted). A ping-pong's next drain comes after the application's answer went out,
     * so the {@code ucp_tag_recv_nbx} (and the old request's free) leave the round trip's path,
     * as raw UCX's benchmark keeps them off it. A message the peer sends into the slice meanwhile
     * waits in UCX, as any early one does; with one slice there is nothing to defer.
     */
    private void recycleHead(int length) throws UcxException {
        repostDeferred();
        if (sliceCount > 1) {
            deferredSlice = head;
        } else {
            postSlice(head);
        }
        head = head + 1 == sliceCount ? 0 : head + 1;
        consumed++;
        consumedBytes += length;
        headLength = -1;
        headOffset = 0;
        headInProgressAt = Completions.NEVER;
    }

    /** Posts the slice consumed last again, if its post was deferred ({@link #recycleHead}). Under the lock. */
    private void repostDeferred() throws UcxException {
        int slice = deferredSlice;
        if (slice >= 0) {
            deferredSlice = -1;
            postSlice(slice);
        }
    }

    /**
     * Sends a CREDIT message when a batch (or, if forced, anything) was consumed unreported
     * ({@link #batchDue}). A credit that cannot go now (all credit slots still in flight), or that UCX did
     * not finish inside the call, is handed to the control loop ({@link SendWatch}): the reader
     * that consumed the messages may read no more until the peer sends again, and the peer may
     * wait for exactly this credit: left to the next read, it would never go, and both sides
     * would wait for ever (regression:
     * CreditReturnTest#shouldReturnEveryCreditThatCouldNotGoWhenItWasDue). Under the lock.
     */
    void returnCredits(boolean force) throws UcxException {
        if (consumed == creditsReported || (!force && !batchDue()) || endpoint == null) {
            return;
        }
        for (int k = 0; k < CREDIT_SLOTS; k++) {
            long request = creditOutRequests[k];
            if (request != NONE) {
                int status = worker.status(request);
                if (status == UcsStatus.INPROGRESS) {
                    continue;
                }
                worker.release(request);
                creditOutRequests[k] = NONE;
            }
            creditOut.set(ValueLayout.JAVA_LONG, 8L * k, wantsBulk ? consumed | CREDIT_WANTS_BULK : consumed);
            long sent = endpoint.tagSend(creditOut.address() + 8L * k, 8, creditTag);
            if (selfLoop) {
                group.wakeOthers();
            }
            creditsReported = consumed;
            bytesReported = consumedBytes;
            if (sent == UcxWorker.COMPLETED) {
                creditOutRequests[k] = NONE;
            } else {
                creditOutRequests[k] = sent;
                watch.watchSends();
            }
            return;
        }
        // all credit slots busy: the control loop retries (the count is cumulative)
        watch.watchSends();
    }

    /**
     * Whether the unreported consumption is worth a CREDIT message: a quarter of the writer's
     * window, in messages ({@code MESSAGES_PER_SLICE} per slice) or in bytes (the slices). A credit
     * costs a send here and a receive in the writer's worker; with a quarter of the slices, as
     * before, an 8-byte ping-pong sent one every second message each way, on the round trip's
     * path. A writer runs out of credits only when a quarter of either bound is unreported, so a
     * reader that consumed everything always owes it a batch. With fewer than four slices every
     * message is reported, as before: a writer with two slices has one credit left as soon as a
     * message is unconsumed, and coalesces there.
     */
    private boolean batchDue() {
        return consumed - creditsReported >= messageBatch || consumedBytes - bytesReported >= byteBatch;
    }

    /**
     * Whether the peer still lacks a credit it is owed: a batch consumed and not reported, or a
     * CREDIT message that UCX has not finished sending (it leaves only while we progress). Under the lock.
     */
    boolean creditsOwed() {
        return batchDue() || Requests.anyInFlight(worker, creditOutRequests);
    }

    /**
     * Whether every CREDIT message left (those that did are given back to UCX). A credit still
     * queued in UCX (the peer's FIFO full: many connections closing at once) needs our progress
     * to leave; released now, it would keep this connection's memory and its endpoint's close
     * waiting for a progress that an idle worker never makes. Under the lock.
     */
    boolean creditsSent() {
        for (int k = 0; k < CREDIT_SLOTS; k++) {
            if (creditOutRequests[k] != NONE) {
                if (worker.status(creditOutRequests[k]) == UcsStatus.INPROGRESS) {
                    return false;
                }
                worker.release(creditOutRequests[k]);
                creditOutRequests[k] = NONE;
            }
        }
        return true;
    }

    /** For release: cancels the posted receives (they complete in the next progress). Under the lock. */
    void cancelReceives() {
        deferredSlice = -1;
        for (int i = 0; i < requests.length; i++) {
            if (requests[i] != NONE) {
                worker.cancel(requests[i]);
            }
        }
    }

    /** For release, after {@link #cancelReceives} and a progress: the receives still in flight go to {@code memory}. */
    void keepReceivesInFlight(ConnectionMemory memory) {
        for (int i = 0; i < requests.length; i++) {
            memory.keepIfInFlight(worker, requests[i]);
            requests[i] = NONE;
            // taken, so ended: given back
            memory.keepIfInFlight(worker, finished[i]);
            finished[i] = NONE;
        }
    }

    /** For release: the CREDIT messages still in flight go to {@code memory}. */
    void keepCreditsInFlight(ConnectionMemory memory) {
        for (int k = 0; k < CREDIT_SLOTS; k++) {
            memory.keepIfInFlight(worker, creditOutRequests[k]);
            creditOutRequests[k] = NONE;
        }
    }
}
