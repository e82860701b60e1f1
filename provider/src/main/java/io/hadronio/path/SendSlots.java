package io.hadronio.path;

import io.hadronio.worker.WorkerGroup;

import static io.hadronio.path.Requests.NONE;
import static io.hadronio.path.WireFormat.BULK_MIN;
import static io.hadronio.path.WireFormat.CREDIT_WANTS_BULK;
import static io.hadronio.path.WireFormat.KIND_CREDIT;
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

/**
 * The send side of a {@link Connection}: its send slots, the messages that wait in them for a
 * credit, and the credits the peer returns (see Connection, Flow control).
 *
 * <h2>Send buffer</h2>
 * A write copies its bytes into send slots, message {@code m} into slot {@code (m - base) % slots},
 * {@code base} moving to the next message whenever no slot holds a message (see {@link #slotOf}). There
 * are at least as many slots as the peer has slices, and as many more as
 * {@code hadronio.send.buffer} bytes fill: when the peer has no room, messages wait in their
 * slots, the last one taking more bytes until it is full, and go out in order as credits come
 * (only a non-blocking write of less than a slice leaves more than one, see {@link #write}).
 * So a non-blocking write takes about as much ahead of a slow reader as the kernel's send buffer would, and
 * an application that drops what a write does not take (JGroups' TCP_NIO2 keeps five messages,
 * then drops until retransmission) does not lose it. With one slot per peer slice, a full
 * window left one slice's worth: JGroups' multicast on three unpinned members ran at 0.2-0.4x
 * the JDK's, with hundreds of partial writes per run (docs/benchmarks/apps.md).
 *
 * <h2>Expedited sends</h2>
 * Over shared memory UCX sends a message of more than ~8 KiB by rendezvous: it tells the peer,
 * the peer's progress fetches the bytes from our slot (cma) and acknowledges, and only then is the
 * slot free. For a message that finds the pipe idle - a request, an answer - that is a round trip
 * inside every message: a blocking 16-KiB ping-pong had its p50 at 14.8 us and its p99 at 96 us,
 * 6.4 and 18 us with the message copied out at once (eager); 64 KiB 17.9 and 78 against 12.9 and
 * 23 (docs/benchmarks/blocking.md, "Mid-size round trips"). So a message goes expedited
 * ({@code UCP_OP_ATTR_FLAG_FAST_CMPL}: UCX copies it into the peer's shared memory inside the send,
 * up to 256 KiB) when it answers: our reader consumed a message of the peer's since our last
 * message went, and the peer has not reported as much as {@link #EXPEDITE_WINDOW_SHARE a quarter}
 * of its window unconsumed (credits come back every quarter). A writer that sends message after
 * message with nothing coming back, or that runs further ahead, is streaming, and its messages go
 * by rendezvous as before: the peer's fetch is its core's copy, where eager would put both copies
 * (into the slot, into the peer's memory) on the writer's core (blocking 64-KiB streams ran at
 * 5.7-6.6 GB/s all eager against 7.8-11 by rendezvous). An expedited bulk message that arrives before
 * its reader asks for it waits in UCX's receive buffers (shared memory) until the read: at most a
 * quarter window and one message per connection.
 *
 * <p>Guarding: every field but the finals is the writer's, under the worker group's lock (a write
 * holds it, and so do a read's and the control thread's flush, a close's last sends and a
 * waiter's readiness look). {@link #connect} sets the peer's geometry and the slots once under
 * that lock, and {@link #useEndpoint} the endpoint; before them the slots are null and nothing is sent.
 */
final class SendSlots {
    // unconsumed messages a sender may have per receive slice of its peer (see Flow control):
    // with 8 slices, gRPC's 32 calls in flight ran at 0.90x the JDK's rate, with 32 at 1.02x
    // (docs/benchmarks/apps.md)
    static final int MESSAGES_PER_SLICE = 4;
    // most send slots a connection has, whatever hadronio.send.buffer says (small slices)
    static final int MAX_SLOTS = 1024;
    // with this many credits or fewer, small writes are coalesced instead of sent one by one: the
    // receiver is behind, and one message per write would only make it fall further back. One, the
    // last credit, is kept for the coalesced message: with half the slices (4 of 8), requests of a
    // pipelined protocol (gRPC, 4 calls in flight: 2-3 messages each way per call) were held back
    // for a credit round trip whenever 4 messages were unconsumed, and its median call took ~1.5x
    // as long; with none, a stream of 8-byte writes spent every credit on one 8-byte message and
    // ran at a fifth of its rate (docs/benchmarks/grpc.md)
    private static final int COALESCE_BELOW = 1;
    // a message goes expedited while the bytes the peer has not reported consumed are under this
    // share of its window (see Expedited sends): a quarter, the credits' own batch (ReceiveSlices)
    static final int EXPEDITE_WINDOW_SHARE = 4;

    private final WorkerGroup group;
    private final UcxWorker worker;
    // asks the control loop to send what waits here when nobody else calls in
    private final SendWatch watch;
    // where the slots are allocated (at connect)
    private final ConnectionMemory memory;
    // our id: the peer's credits carry it
    private final int localId;
    // what our data sends carry, so that their completion names the connection (WorkerGroup.attach)
    private final int token;
    // the connection's completions: a credit receive found in progress is not asked again until one came
    private final Completions completions;
    // hadronio.send.buffer: bytes of send slots, at least one per receive slice of the peer
    private final long sendBufferBytes;

    private int remoteId;
    private int sliceSize;        // the peer's receive slices
    private int sliceCount;
    // our send slots (see Send buffer): message m is copied into slot (m - slotBase) % slots
    private int slots;
    // the message in slot 0; moved on to the next message while no slot holds one (see slotOf)
    private long slotBase;
    // slots whose send UCX has not given back yet (requests[slot] != NONE)
    private int inFlight;
    // the highest slot a message was sent from, and the last one's (tests: how much of the area
    // a connection touched)
    private int highestSlot = -1;
    private int lastSlot = -1;
    private MemorySegment area;
    private ByteBuffer view;
    private long[] requests;
    private long sent;            // DATA messages posted
    // messages filled but not posted, waiting for a credit: sent .. sent + queued - 1, in their
    // slots; all full slices but the last, which holds tailLength bytes (see Send buffer)
    private int queued;
    private int tailLength;
    // most messages that may wait: every slot for a non-blocking write, one for a blocking write
    // (set by each write; see write)
    private int queueLimit = 1;
    private long heldBack;        // small writes that waited for a credit (see heldBackWrites)
    private long expedited;       // DATA messages sent expedited (see expeditedSends)
    // the peer's messages our reader had consumed at this write (readerProgress), and at our last
    // message's post: equal, nothing came from the peer in between (see Expedited sends)
    private long readerConsumed;
    private long readerConsumedAtLastPost = -1;
    private int coalesceBelow;
    private long peerConsumed;    // from CREDIT messages
    private boolean peerWantsBulk; // from CREDIT messages: send messages of BULK_MIN or more as bulk
    private int window;           // unconsumed messages allowed
    private int[] lengths;        // length of message k at k % window while unconsumed
    private long unconsumedBytes; // bytes of the messages sent and not consumed yet
    private long byteWindow;      // unconsumed bytes allowed: the peer's slices
    private final MemorySegment creditIn;
    private long creditInRequest = NONE;
    // completions when the credit receive was last found in progress (Completions.NEVER: since it was posted, not)
    private long creditInProgressAt = Completions.NEVER;
    private UcxEndpoint endpoint;
    // both ends on this very worker: whoever waits for our message must be woken by us (see Connection.connect)
    private boolean selfLoop;
    private long dataTag;

    /** Posts the receive of the peer's first CREDIT message into {@code creditIn} (8 bytes). Under the lock. */
    SendSlots(WorkerGroup group, SendWatch watch, Completions completions, ConnectionMemory memory, int localId,
              int token, MemorySegment creditIn, long sendBufferBytes) throws UcxException {
        this.group = group;
        this.worker = group.worker();
        this.watch = watch;
        this.completions = completions;
        this.memory = memory;
        this.localId = localId;
        this.token = token;
        this.creditIn = creditIn;
        this.sendBufferBytes = sendBufferBytes;
        creditInRequest = worker.tagReceive(creditIn.address(), 8, tag(localId, KIND_CREDIT), TAG_MASK, token);
    }

    /** The peer's id and receive geometry are known: allocates the slots. Under the lock. */
    void connect(int peerId, int peerSliceSize, int peerSliceCount) {
        this.remoteId = peerId;
        this.sliceSize = peerSliceSize;
        this.sliceCount = peerSliceCount;
        this.slots = slotsFor(sendBufferBytes, peerSliceSize, peerSliceCount);
        this.area = memory.area((long) peerSliceSize * slots);
        this.view = area.asByteBuffer();
        this.requests = new long[slots];
        this.window = MESSAGES_PER_SLICE * peerSliceCount;
        this.lengths = new int[window];
        this.byteWindow = (long) peerSliceSize * peerSliceCount;
        this.coalesceBelow = Math.min(COALESCE_BELOW, peerSliceCount - 1);
        java.util.Arrays.fill(requests, NONE);
        this.dataTag = tag(peerId, KIND_DATA);
    }

    /** The endpoint to the peer is made (after {@link #connect}): DATA messages go out on it. Under the lock. */
    void useEndpoint(UcxEndpoint endpoint, boolean selfLoop) {
        this.endpoint = endpoint;
        this.selfLoop = selfLoop;
    }

    /**
     * Send slots for a peer with {@code peerSliceCount} slices of {@code peerSliceSize} bytes:
     * as many as {@code sendBufferBytes} fill, at least one per slice of the peer (then a full
     * window leaves none to wait in), at most {@link #MAX_SLOTS}.
     */
    static int slotsFor(long sendBufferBytes, int peerSliceSize, int peerSliceCount) {
        long slots = (sendBufferBytes + peerSliceSize - 1) / peerSliceSize;
        return (int) Math.max(peerSliceCount, Math.min(slots, MAX_SLOTS));
    }

    /**
     * How many of the peer's messages our reader has consumed, before a write: a message that
     * follows one from the peer may go expedited (see Expedited sends). Under the lock.
     */
    void readerProgress(long consumed) {
        readerConsumed = consumed;
    }

    /**
     * How many messages the next write may leave waiting ({@link #write}): every slot for a
     * write that may use the send buffer ({@code buffered}) and holds less than a slice, else
     * one. Under the lock.
     */
    void limitQueueFor(ByteBuffer[] srcs, int offset, int length, boolean buffered) {
        queueLimit = buffered && remainingBelow(srcs, offset, length, sliceSize) ? slots : 1;
    }

    /**
     * Takes as many bytes as credits allow (copying them into send slots and posting
     * them), without waiting; at most the number of messages {@link #limitQueueFor} allowed
     * wait in their slots.
     *
     * A non-blocking write of less than a slice may leave messages waiting in every send slot
     * (the send buffer): a protocol that writes each message whole (JGroups, RPC frameworks) may
     * not take a short write well. Any other write leaves one waiting at most: a blocking one
     * then waits for credits, so nothing it was given can be dropped, and a stream of large
     * writes takes what the peer has room for. A sender that ran the send buffer
     * ahead of its reader streamed 1 MiB writes 10-25 % slower, its slots cold in the cache by the
     * time the reader fetched them (docs/benchmarks/apps.md, "The send buffer"). Under the lock.
     *
     * @return bytes taken, 0 when the peer has no room (back-pressure)
     */
    long write(ByteBuffer[] srcs, int offset, int length) throws IOException {
        final int end = offset + length;
        final int sliceSize = this.sliceSize;
        long total = 0;
        int i = offset;
        while (true) {
            while (i < end && !srcs[i].hasRemaining()) {
                i++;
            }
            if (i >= end) {
                break;
            }
            // Refresh the peer's credits before holding bytes back, not only at zero: with a
            // stale count a ping-pong writer holds every ~4th message for a credit the peer has
            // long returned (8 B round trip p90 8 us instead of 1.2 us; regression:
            // CreditRefreshTest#shouldNotHoldBackPingPongWrites). One request-status downcall.
            if (credits() <= coalesceBelow) {
                pollCredits();
                if (credits() == 0) {
                    group.progressLocked();
                    pollCredits();
                }
            }
            if (queued > 0) {
                if (headMayGo()) {
                    postHead();
                    continue;
                }
                // the peer is behind: fill the last waiting message, then the next free slot
                // (coalescing only under back-pressure)
                if (tailLength < sliceSize) {
                    int tail = slotOf(sent + queued - 1);
                    int filled = gather(srcs, i, end, tail * sliceSize + tailLength, sliceSize - tailLength);
                    tailLength += filled;
                    total += filled;
                    continue;
                }
                int next = nextSlot();
                if (queued < queueLimit && slotFree(next)) {
                    // filled in the same step: a waiting message is never empty (an empty DATA
                    // message means a bulk message to the reader)
                    tailLength = gather(srcs, i, end, next * sliceSize, sliceSize);
                    queued++;
                    total += tailLength;
                    continue;
                }
                break;
            }
            if (inFlight == 1) {
                // the last message's send may have finished (one UCX did not finish inside its call)
                releaseIfDone(slotOf(sent - 1));
            }
            if (inFlight == 0) {
                // no slot holds a message: the next one starts again at slot 0 (see slotOf)
                slotBase = sent;
            }
            int slot = slotOf(sent);
            if (!slotFree(slot)) {
                break;
            }
            int filled = gather(srcs, i, end, slot * sliceSize, sliceSize);
            total += filled;
            if (credits() > coalesceBelow || (filled == sliceSize && credits() > 0)) {
                post(slot, filled);
            } else {
                // the peer has no free slice: the bytes wait in their slot and go out with the next credit
                queued = 1;
                tailLength = filled;
                heldBack++;
                watch.watchSends();
            }
        }
        return total;
    }

    /** Whether the buffers hold fewer than {@code limit} bytes. */
    private static boolean remainingBelow(ByteBuffer[] srcs, int offset, int length, int limit) {
        long n = 0;
        for (int i = offset; i < offset + length; i++) {
            n += srcs[i].remaining();
            if (n >= limit) {
                return false;
            }
        }
        return true;
    }

    /** Copies up to {@code room} bytes from the buffers into the send area at {@code at}. */
    private int gather(ByteBuffer[] srcs, int from, int end, int at, int room) {
        final ByteBuffer view = this.view;
        int filled = 0;
        for (int j = from; j < end && filled < room; j++) {
            ByteBuffer src = srcs[j];
            int n = Math.min(src.remaining(), room - filled);
            if (n > 0) {
                int pos = src.position();
                view.put(at + filled, src, pos, n);
                src.position(pos + n);
                filled += n;
            }
        }
        return filled;
    }

    /**
     * Whether the first waiting message goes now: a full one with any credit, the last (still
     * filling) only while more than {@code coalesceBelow} are left. Needs the lock.
     */
    private boolean headMayGo() {
        return queued > 1 || tailLength == sliceSize ? credits() > 0 : credits() > coalesceBelow;
    }

    /** Posts the first message that waited for a credit. Needs a credit and the lock. */
    private void postHead() throws UcxException {
        assert group.lock.isHeldByCurrentThread() && queued > 0 && tailLength > 0 && credits() > 0;
        post(slotOf(sent), queued > 1 ? sliceSize : tailLength);
        if (--queued == 0) {
            tailLength = 0;
        }
    }

    /**
     * Sends the {@code length} bytes of send slot {@code slot} as the next DATA message; one
     * UCX did not finish inside the call is handed to the control loop ({@link SendWatch}).
     * Needs a credit and the lock.
     */
    private void post(int slot, int length) throws UcxException {
        long address = area.address() + (long) slot * sliceSize;
        long request;
        if (length >= BULK_MIN) {
            // the areas into huge pages, the first time
            memory.largeMessage();
        }
        boolean expedite = expedite();
        if (expedite) {
            expedited++;
        }
        readerConsumedAtLastPost = readerConsumed;
        if (length >= BULK_MIN && peerWantsBulk) {
            // an empty DATA message holds the bulk message's place among the others; its bytes follow
            // under their own tag (both in order on the endpoint), for the reader to receive where it wants
            long header = endpoint.tagSend(address, 0, dataTag);
            if (header != UcxWorker.COMPLETED) {
                // no buffer: UCX finishes it alone
                worker.release(header);
            }
            request = endpoint.tagSend(address, length, bulkTag(remoteId, sent), token, expedite);
        } else {
            request = endpoint.tagSend(address, length, dataTag, token, expedite);
        }
        if (selfLoop) {
            group.wakeOthers();
        }
        if (slot > highestSlot) {
            highestSlot = slot;
        }
        lastSlot = slot;
        lengths[(int) (sent % window)] = length;
        unconsumedBytes += length;
        sent++;
        if (request == UcxWorker.COMPLETED) {
            requests[slot] = NONE;
        } else {
            requests[slot] = request;
            inFlight++;
            watch.watchSends();
        }
    }

    /**
     * Whether the next message goes expedited (see Expedited sends). The view of what the peer
     * consumed is refreshed before saying no: a writer refreshes its credits only when they run
     * low, and a stale count kept a 64-KiB request/response off the fast way for 52 of 64
     * messages (regression: ExpeditedSendTest). Refreshing asks UCX only when one of the
     * connection's requests completed since the credit receive was last found in progress.
     */
    private boolean expedite() throws UcxException {
        if (readerConsumed == readerConsumedAtLastPost) {
            // nothing came from the peer since our last message: a stream, not an answer
            return false;
        }
        long limit = byteWindow / EXPEDITE_WINDOW_SHARE;
        if (unconsumedBytes < limit) {
            return true;
        }
        pollCredits();
        return unconsumedBytes < limit;
    }

    /**
     * A posted DATA send has not completed (under the lock). It only looks: the writer that
     * next uses the slot releases the request and sees how it ended.
     */
    boolean sendsInFlight() {
        // inFlight counts the slots that hold a request: none, and there is nothing to ask UCX
        return inFlight > 0 && Requests.anyInFlight(worker, requests);
    }

    /** Whether bytes wait in their slots for a credit. Under the lock. */
    boolean holdsBytes() {
        return queued > 0;
    }

    /** Sends the waiting messages that credits have come in for. Needs the lock. */
    void flushPending() throws UcxException {
        if (queued > 0) {
            pollCredits();
            while (queued > 0 && credits() > 0) {
                postHead();
            }
        }
    }

    /**
     * The peer closed: bytes held back for a credit are dropped. Returns how many DATA
     * messages were posted. Under the lock.
     */
    long dropQueued() {
        queued = 0;
        tailLength = 0;
        return sent;
    }

    /** Room for this many more full-slice messages: under both the message and the byte bound. */
    private int credits() {
        int messages = window - (int) (sent - peerConsumed);
        int slices = (int) ((byteWindow - unconsumedBytes) / sliceSize);
        return Math.min(messages, slices);
    }

    /**
     * Takes the CREDIT messages that arrived; asks UCX only when one of the connection's requests
     * completed since the credit receive was last found in progress ({@link Completions}). Under the lock.
     */
    void pollCredits() throws UcxException {
        while (creditInRequest != NONE) {
            if (!completions.since(creditInProgressAt)) {
                return;
            }
            int status = worker.receiveStatus(creditInRequest);
            if (status == UcsStatus.INPROGRESS) {
                creditInProgressAt = completions.count();
                return;
            }
            worker.release(creditInRequest);
            creditInRequest = NONE;
            if (status != UcsStatus.OK) {
                return;
            }
            long word = creditIn.get(ValueLayout.JAVA_LONG, 0);
            long consumed = word & ~CREDIT_WANTS_BULK;
            if (consumed > peerConsumed && consumed <= sent) {
                peerWantsBulk = (word & CREDIT_WANTS_BULK) != 0;
                for (long k = peerConsumed; k < consumed; k++) {
                    unconsumedBytes -= lengths[(int) (k % window)];
                }
                peerConsumed = consumed;
            }
            // COMPLETED (0) when another credit message was already waiting: loop and take it
            creditInRequest = worker.tagReceive(creditIn.address(), 8, tag(localId, KIND_CREDIT), TAG_MASK, token);
            creditInProgressAt = Completions.NEVER;
        }
    }

    private boolean slotFree(int slot) throws IOException {
        long request = requests[slot];
        if (request == NONE) {
            return true;
        }
        int status = worker.status(request);
        if (status == UcsStatus.INPROGRESS) {
            group.progressLocked();
            status = worker.status(request);
            if (status == UcsStatus.INPROGRESS) {
                return false;
            }
        }
        release(slot, request, status);
        return true;
    }

    /** Gives the send in {@code slot} back to UCX if it finished; no progress, one status call. */
    private void releaseIfDone(int slot) throws IOException {
        long request = requests[slot];
        if (request != NONE) {
            int status = worker.status(request);
            if (status != UcsStatus.INPROGRESS) {
                release(slot, request, status);
            }
        }
    }

    /** Gives {@code slot}'s finished send back to UCX; a failed one fails the write. */
    private void release(int slot, long request, int status) throws IOException {
        worker.release(request);
        requests[slot] = NONE;
        inFlight--;
        if (status != UcsStatus.OK) {
            throw new IOException("UCX send failed: " + UcsStatus.describe(status));
        }
    }

    /** DATA messages (bulk ones' bytes included) sent expedited (see Expedited sends). Under the lock. */
    long expeditedSends() {
        return expedited;
    }

    /** Writes whose bytes waited for a credit instead of leaving at once. Under the lock. */
    long heldBackWrites() {
        return heldBack;
    }

    /** DATA messages the peer has reported taken (its credits), as last polled. Under the lock. */
    long messagesTaken() {
        return peerConsumed;
    }

    /** The highest slot a message was sent from, -1 before the first. Under the lock. */
    int highestSlotUsed() {
        return highestSlot;
    }

    /** The slot the last message was sent from, -1 before the first. Under the lock. */
    int lastSlotUsed() {
        return lastSlot;
    }

    /** DATA messages posted so far. Under the lock. */
    long messagesSent() {
        return sent;
    }

    /**
     * True when every posted DATA send completed locally (each is given back to UCX), after
     * sending what credits allow; false while bytes still wait for a credit. Under the lock.
     */
    boolean sendsDone() throws UcxException {
        if (requests == null) {
            return true;
        }
        flushPending();
        if (queued > 0) {
            return false;
        }
        for (int slot = 0; slot < requests.length; slot++) {
            if (requests[slot] != NONE) {
                int status = worker.status(requests[slot]);
                if (status == UcsStatus.INPROGRESS) {
                    return false;
                }
                worker.release(requests[slot]);
                requests[slot] = NONE;
                inFlight--;
            }
        }
        return true;
    }

    /**
     * A writer is worth waking when what it waits for may have come: a credit, when its bytes
     * wait for one, else the completion of the send that holds its next slot (what
     * {@link #isReady} judges). Looks only: request status, no release. Under the lock.
     */
    boolean mayBeReady() {
        if (requests == null) {
            return true;
        }
        if (queued > 0) {
            // a partly filled waiting message takes more bytes, so does a free slot after it; else
            // they wait for a credit
            if (tailLength < sliceSize || credits() > 0 || creditReceiveEnded()) {
                return true;
            }
            return queued < queueLimit && Requests.done(worker, requests[nextSlot()]);
        }
        // else a write takes bytes exactly when the next slot's send completed (see isReady)
        return Requests.done(worker, requests[slotOf(sent)]);
    }

    /** Whether the credit receive has ended (looks only; asks UCX as {@link #pollCredits} does). Under the lock. */
    private boolean creditReceiveEnded() {
        if (creditInRequest == NONE) {
            return true;
        }
        if (!completions.since(creditInProgressAt)) {
            return false;
        }
        if (worker.receiveStatus(creditInRequest) == UcsStatus.INPROGRESS) {
            creditInProgressAt = completions.count();
            return false;
        }
        return true;
    }

    /** Whether a write would take bytes now (polls credits, may release a finished send). Under the lock. */
    boolean isReady() throws IOException {
        pollCredits();
        if (queued > 0) {
            return tailLength < sliceSize || credits() > 0
                    || (queued < queueLimit && slotFree(nextSlot()));
        }
        // with or without a credit, a write takes bytes exactly when the next slot is free
        // (without one they wait there for it); a credit alone does not free the slot
        return slotFree(slotOf(sent));
    }

    /** The slot of the next message to start: after the posted and the waiting ones. */
    private int nextSlot() {
        return slotOf(sent + queued);
    }

    /**
     * The slot of message {@code m}. Messages take the slots in turn from {@link #slotBase}, which
     * a write moves to its first message whenever no slot holds one (nothing waits, every send
     * was given back): then any slot would do, and slot 0 again keeps a connection of one message
     * at a time on the first page of its send area. Taking the next slot in turn instead wrote the
     * first page of every slot over time: up to 32 pages (128 KiB) per connection of small
     * messages, 128 MB for 1,000 connections (docs/benchmarks/memory.md).
     */
    private int slotOf(long m) {
        return (int) ((m - slotBase) % slots);
    }

    /** For release: cancels the receive of the peer's next CREDIT message. Under the lock. */
    void cancelCreditReceive() {
        if (creditInRequest != NONE) {
            worker.cancel(creditInRequest);
        }
    }

    /** For release, after {@link #cancelCreditReceive} and a progress: a credit receive still in flight goes to {@code memory}. */
    void keepCreditReceiveInFlight(ConnectionMemory memory) {
        memory.keepIfInFlight(worker, creditInRequest);
        creditInRequest = NONE;
    }

    /** For release: the DATA sends still in flight go to {@code memory}. */
    void keepSendsInFlight(ConnectionMemory memory) {
        if (requests != null) {
            for (int i = 0; i < requests.length; i++) {
                memory.keepIfInFlight(worker, requests[i]);
                requests[i] = NONE;
            }
            inFlight = 0;
        }
    }
}
