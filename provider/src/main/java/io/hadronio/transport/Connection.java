package io.hadronio.transport;

import io.hadronio.platform.HugePagePool;
import io.hadronio.ucx.ErrorMode;
import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxEndpoint;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The UCX half of one accelerated connection: its endpoint, its pre-posted receive
 * slices, its send slots, and credit-based flow control.
 *
 * <h2>Wire protocol (UCX tags)</h2>
 * <pre>
 *  63            32 31    24 23          0
 * +----------------+--------+-------------+
 * | receiver's id  |  kind  |      0      |
 * +----------------+--------+-------------+
 * </pre>
 * Each side picks a 32-bit id on its worker and tells the peer in the handshake; the
 * peer stamps it on everything it sends, so one worker serves many connections.
 * {@code DATA} messages carry 1 .. sliceSize application bytes; {@code CREDIT}
 * messages carry a little-endian {@code long}: how many DATA messages the receiver has
 * consumed so far (cumulative, so a lost race between two credit messages is harmless).
 *
 * <h2>Flow control</h2>
 * The receiver posts {@code sliceCount} receives of {@code sliceSize} bytes. UCX
 * matches messages with equal tags in order, so message {@code k} lands in slice
 * {@code k % sliceCount}; one that arrives before its slice is posted waits in UCX (an
 * eager message with its bytes, a rendezvous as a header whose bytes stay with the
 * sender) and lands when the reader reposts the slice. The sender may have at most
 * {@code MESSAGES_PER_SLICE x sliceCount} messages and {@code sliceCount x sliceSize}
 * bytes unconsumed; one credit is room for one more full slice under both bounds. So
 * small messages of a pipelined protocol (gRPC's calls) are not held back after
 * {@code sliceCount} of them, and a stream of full slices runs exactly as with one
 * message per slice. The reader reposts a slice when it has copied it out, and returns
 * credits every quarter of the slices. Memory per connection is thus bounded whatever
 * the application does: sliceCount x sliceSize each way in our slices, and at most as
 * many bytes again of early eager messages in UCX. End-of-stream and close travel on the
 * TCP control connection, carrying the number of DATA messages sent, so nothing sent
 * before them is lost.
 *
 * <h2>Send buffer</h2>
 * A write copies its bytes into send slots, message {@code m} into slot {@code m % slots}. There
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
 * <h2>Bulk messages</h2>
 * A slice costs the receiving core a second copy of every byte (UCX fetches a large message
 * into the slice, the read copies it out), which bounds 64 KiB streaming well below UCX's own
 * rate. So when the reader reads into direct buffers with room for any message, on an endpoint
 * whose large messages move by a process-to-process copy (cma), it says so with its credits
 * ({@link #CREDIT_WANTS_BULK}), and the sender sends each message of {@link #BULK_MIN} bytes or
 * more as a bulk message: an empty DATA message in the message's place (it lands in the slice
 * like any other, so order, credits and readiness stay as they are), then the bytes under the
 * tag {@code (receiver's id, BULK, message index & 0xffffff)}. They wait in UCX (a rendezvous:
 * only a header, the bytes stay in the sender's slot) until the read that reaches the empty
 * message receives them - into the application's buffer when it takes the whole message (one
 * copy), else into the slice. A close that drains the peer's messages receives the
 * bytes of bulk ones too. Both ends announce the protocol in their endpoint profile
 * ({@code +bulk}); a peer without it stays on TCP.
 *
 * <p>All methods that touch UCX run under the group's lock. Reads are called under the
 * channel's read lock, writes under its write lock.
 */
public final class Connection implements WorkerGroup.Readiness, UcxHalf {
    public static final int OP_READ = 1;
    public static final int OP_WRITE = 4;

    static final int KIND_DATA = 1;
    static final int KIND_CREDIT = 2;
    // the bytes of a bulk message (see Bulk messages); its index in the low 24 bits of the tag
    static final int KIND_BULK = 3;
    // a message at least this long goes as a bulk message: an empty DATA message in its place in the
    // stream, its bytes under their own tag, received where the reader wants them
    static final int BULK_MIN = 32 * 1024;
    private static final long BULK_INDEX_MASK = (1L << 24) - 1;
    // bulk messages received straight into the reader's buffer, and through a slice (diagnostics, tests)
    private static final AtomicLong BULK_DIRECT = new AtomicLong();
    private static final AtomicLong BULK_STAGED = new AtomicLong();
    // in a CREDIT message's count: the reader reads into buffers a bulk message can land in directly,
    // so the sender should use bulk messages (through a slice they cost an empty message more)
    static final long CREDIT_WANTS_BULK = 1L << 62;
    // how long a read waits, progressing, for a bulk message's bytes to land in the application's
    // buffer before it takes them through its own slice instead, where it may sleep (a sender whose
    // process is descheduled before its rendezvous header left). The fetch itself takes ~13 us for
    // 64 KiB here (2-core machine, 64 KiB ping-pong: 21,500 of them, none done inside the receive
    // call); with 20 us, 28 of 21,500 fell back, with 1 ms, 2-7
    private static final long BULK_DIRECT_WAIT_NANOS = 200_000;
    // the whole tag: senders leave the low 24 bits 0, and UCX hashes a receive by its tag only when
    // its mask is full; any other mask puts it on the worker's one wildcard list, which every
    // arriving message searches from the start (with 1,000 connections' 9,000 receives posted,
    // ~0.4 ms per message: docs/benchmarks/selector-scale.md)
    private static final long TAG_MASK = -1L;
    // no request in a slot (0 is UcxWorker.COMPLETED, a valid "done" handle)
    private static final long NONE = -1;
    private static final int CREDIT_SLOTS = 4;
    // unconsumed messages a sender may have per receive slice of its peer (see Flow control):
    // with 8 slices, gRPC's 32 calls in flight ran at 0.90x the JDK's rate, with 32 at 1.02x
    // (docs/benchmarks/apps.md)
    static final int MESSAGES_PER_SLICE = 4;
    // most send slots a connection has, whatever hadronio.send.buffer says (small slices)
    static final int MAX_SEND_SLOTS = 1024;

    // connections' memory (one Arena each: slices, slots, credit words) not freed yet in this JVM,
    // and its bytes: a diagnostic (UcxRuntime.resources), changed only at set-up and release
    private static final AtomicInteger MEMORY_LIVE = new AtomicInteger();
    private static final AtomicLong MEMORY_BYTES = new AtomicLong();
    // of those, the ones release() left allocated because UCX requests in flight may still use them,
    // each with what it found in flight and the lifecycle then (memoryRetainedBy, a diagnostic)
    private static final java.util.Map<Connection, String> RETAINED = new java.util.concurrent.ConcurrentHashMap<>();

    /** Bulk messages received straight into a reader's buffer in this JVM so far. */
    static long bulkReceivedDirect() {
        return BULK_DIRECT.get();
    }

    /** Bulk messages received through a slice (a reader's buffer could not take them, or a close drained them). */
    static long bulkReceivedStaged() {
        return BULK_STAGED.get();
    }

    static long tag(int id, int kind) {
        return ((long) id << 32) | ((long) kind << 24);
    }

    /** The tag of the bytes of bulk message {@code index} to the connection with id {@code id}. */
    static long bulkTag(int id, long index) {
        return tag(id, KIND_BULK) | (index & BULK_INDEX_MASK);
    }

    private final WorkerGroup group;
    // flushes bytes that wait for credits when nobody else calls in
    private final ConnectionControl control;
    private final UcxWorker worker;
    private final ReentrantLock lock;
    // where the receive and send areas come from (huge pages within a budget)
    private final HugePagePool areas;
    // memory of this connection: slices, slots, credit words; freed by release()
    private final Arena arena;
    // bytes allocated in it (counted in MEMORY_BYTES)
    private long memoryBytes;
    // our id: the peer puts it in the tags it sends us
    final int localId;
    // what our receives and data sends carry, so that their completion names us (WorkerGroup.attach)
    private final int token;

    // ---- receive side (reader thread, under lock) ----
    final int rxSliceSize;
    final int rxSliceCount;
    private final MemorySegment rxArea;
    private final ByteBuffer rxView;
    private final long[] rxRequests;
    // length of a slice's message when its receive completed inside tagReceive, else -1
    private final int[] rxImmediate;
    private int rxHead;           // slice index of the next message
    private long rxConsumed;      // DATA messages fully consumed
    private int rxOffset;         // bytes consumed of the head message
    private int rxLength = -1;    // length of the head message, -1 while not received
    private long rxCreditsReported;
    // the last read read into a buffer that takes bulk messages (reported with the credits)
    private boolean rxWantsBulk;
    private final MemorySegment creditOut;
    private final long[] creditOutRequests = new long[CREDIT_SLOTS];

    // ---- send side (writer thread, under lock) ----
    private int remoteId;
    private int txSliceSize;
    private int txSliceCount;     // the peer's receive slices
    // our send slots (see Send buffer): message m is copied into slot m % txSlots
    private int txSlots;
    private MemorySegment txArea;
    private ByteBuffer txView;
    private long[] txRequests;
    private long txSent;          // DATA messages posted
    // messages filled but not posted, waiting for a credit: txSent .. txSent + txQueued - 1, in their
    // slots; all full slices but the last, which holds txTailLength bytes (see Send buffer)
    private int txQueued;
    private int txTailLength;
    // most messages that may wait: every slot for a non-blocking write, one for a blocking write
    // (set by each write; see write)
    private int txQueueLimit = 1;
    private boolean pendingWatched; // the control loop is flushing this connection (see watchSends)
    private long heldBack;        // small writes that waited for a credit (see heldBackWrites)
    // with this many credits or fewer, small writes are coalesced instead of sent one by one: the
    // receiver is behind, and one message per write would only make it fall further back. One, the
    // last credit, is kept for the coalesced message: with half the slices (4 of 8), requests of a
    // pipelined protocol (gRPC, 4 calls in flight: 2-3 messages each way per call) were held back
    // for a credit round trip whenever 4 messages were unconsumed, and its median call took ~1.5x
    // as long; with none, a stream of 8-byte writes spent every credit on one 8-byte message and
    // ran at a fifth of its rate (docs/benchmarks/grpc.md)
    private static final int COALESCE_BELOW = 1;
    private int coalesceBelow;
    private long txPeerConsumed;  // from CREDIT messages
    private boolean txPeerWantsBulk; // from CREDIT messages: send messages of BULK_MIN or more as bulk
    private int txWindow;         // unconsumed messages allowed
    private int[] txLengths;      // length of message k at k % txWindow while unconsumed
    private long txUnconsumedBytes; // bytes of the messages sent and not consumed yet
    private long txByteWindow;    // unconsumed bytes allowed: the peer's slices
    private final MemorySegment creditIn;
    private long creditInRequest = NONE;
    // hadronio.send.buffer: bytes of send slots, at least one per receive slice of the peer
    private final long sendBufferBytes;
    private UcxEndpoint endpoint;
    // the endpoint to the peer's worker, shared with every other connection to it
    private WorkerGroup.PeerEndpoint peer;
    // the control connection ended without a close (see WorkerGroup.peerMayBeDead); under lock
    private boolean controlLost;
    // both ends on this very worker (UCX 'self'): a send completes the peer's receive inside
    // the call, with no event on the event fd, so whoever waits for it must be woken by us
    private boolean selfLoop;
    private long dataTag;
    private long creditTag;

    // requests release() found in flight (a send the peer has not taken yet, a receive mid-rendezvous):
    // kept until they end, and only then is the memory they use freed (freeIfDone); under lock
    private long[] inFlight = new long[4];
    private int inFlightCount;

    // whose state (end-of-stream, reset, close) this data path obeys; it keeps none of its own
    private final ConnectionLifecycle life;

    Connection(ConnectionLifecycle life, WorkerGroup group, ConnectionControl control, HugePagePool areas, int sliceSize,
               int sliceCount, long sendBufferBytes) throws UcxException {
        this.sendBufferBytes = sendBufferBytes;
        this.life = life;
        this.group = group;
        this.control = control;
        this.worker = group.worker();
        this.lock = group.lock;
        this.localId = group.newConnectionId();
        this.rxSliceSize = sliceSize;
        this.rxSliceCount = sliceCount;
        this.arena = Arena.ofShared();
        this.areas = areas;
        this.rxArea = areas.allocate((long) sliceSize * sliceCount, arena);
        this.rxView = rxArea.asByteBuffer();
        this.rxRequests = new long[sliceCount];
        this.rxImmediate = new int[sliceCount];
        java.util.Arrays.fill(rxImmediate, -1);
        this.creditOut = arena.allocate(8L * CREDIT_SLOTS, 8);
        this.creditIn = arena.allocate(8, 8);
        countMemory((long) sliceSize * sliceCount + 8L * CREDIT_SLOTS + 8);
        MEMORY_LIVE.incrementAndGet();
        java.util.Arrays.fill(creditOutRequests, NONE);
        lock.lock();
        try {
            this.token = group.attach(this);
            for (int i = 0; i < sliceCount; i++) {
                postSlice(i);
            }
            creditInRequest = worker.tagReceive(creditIn.address(), 8, tag(localId, KIND_CREDIT), TAG_MASK, token);
        } finally {
            lock.unlock();
        }
    }

    /**
     * One of our receives or data sends completed, failed or was cancelled (an upcall from
     * inside a call into the worker, under the group's lock: no call into the worker here):
     * a selector must look at this connection again.
     */
    void completionSeen() {
        life.readinessChanged();
    }

    /** Posts the receive of a slice; a message already waiting may complete it at once. */
    private void postSlice(int slice) throws UcxException {
        long request = worker.tagReceive(rxArea.address() + (long) slice * rxSliceSize, rxSliceSize,
                tag(localId, KIND_DATA), TAG_MASK, token);
        if (request == UcxWorker.COMPLETED) {
            rxRequests[slice] = NONE;
            rxImmediate[slice] = (int) worker.receivedLength();
        } else {
            rxRequests[slice] = request;
            rxImmediate[slice] = -1;
        }
    }

    /** Completes set-up once the peer's hello is known: its id, its receive geometry, its worker. */
    void connect(int peerId, int peerSliceSize, int peerSliceCount, byte[] peerWorkerAddress) throws UcxException {
        lock.lock();
        try {
            this.remoteId = peerId;
            this.txSliceSize = peerSliceSize;
            this.txSliceCount = peerSliceCount;
            this.txSlots = sendSlots(sendBufferBytes, peerSliceSize, peerSliceCount);
            this.txArea = areas.allocate((long) peerSliceSize * txSlots, arena);
            countMemory((long) peerSliceSize * txSlots);
            this.txView = txArea.asByteBuffer();
            this.txRequests = new long[txSlots];
            this.txWindow = MESSAGES_PER_SLICE * peerSliceCount;
            this.txLengths = new int[txWindow];
            this.txByteWindow = (long) peerSliceSize * peerSliceCount;
            this.coalesceBelow = Math.min(COALESCE_BELOW, peerSliceCount - 1);
            java.util.Arrays.fill(txRequests, NONE);
            this.dataTag = tag(peerId, KIND_DATA);
            this.creditTag = tag(peerId, KIND_CREDIT);
            // PEER: a peer that dies is reported (sends and receives complete with an error,
            // onPeerFailure runs) instead of aborting this process inside UCX; with the
            // context's peerFailureDetection it keeps shared memory (sysv + cma)
            this.peer = group.endpointTo(peerWorkerAddress, this);
            this.endpoint = peer.endpoint;
            this.selfLoop = java.util.Arrays.equals(peerWorkerAddress, group.address());
        } finally {
            lock.unlock();
        }
    }

    @Override
    public WorkerGroup group() {
        return group;
    }

    /**
     * Send slots for a peer with {@code peerSliceCount} slices of {@code peerSliceSize} bytes:
     * as many as {@code sendBufferBytes} fill, at least one per slice of the peer (then a full
     * window leaves none to wait in), at most {@link #MAX_SEND_SLOTS}.
     */
    static int sendSlots(long sendBufferBytes, int peerSliceSize, int peerSliceCount) {
        long slots = (sendBufferBytes + peerSliceSize - 1) / peerSliceSize;
        return (int) Math.max(peerSliceCount, Math.min(slots, MAX_SEND_SLOTS));
    }

    /** Transports of the endpoint, for logs and tests, e.g. [cma, sysv]. */
    @Override
    public String transports() {
        lock.lock();
        try {
            return endpoint == null || !endpoint.isOpen() ? "[]" : endpoint.transports().toString();
        } finally {
            lock.unlock();
        }
    }

    /**
     * True when UCX carries this connection over tcp only (no shared memory, no RDMA):
     * then the kernel's own TCP connection, which the JDK drives faster, is the better path.
     */
    boolean onlyTcp() {
        lock.lock();
        try {
            if (endpoint == null || !endpoint.isOpen()) {
                return false;
            }
            java.util.Set<String> t = endpoint.transports();
            return !t.isEmpty() && t.stream().allMatch(name -> name.startsWith("tcp"));
        } finally {
            lock.unlock();
        }
    }

    // ---- for the lifecycle and the control thread --------------------------------------------

    /**
     * For the control loop, after the peer nudged us: progress so that the peer's last
     * messages land in our slices while the application is not reading. True while
     * still needed (the peer's FIN has not arrived).
     */
    @Override
    public boolean progressForPeer() {
        if (life.state() == ConnectionLifecycle.CLOSED || life.isReset() && !life.inputOutlivesReset()
                || life.peerFinCount() >= 0) {
            return false;
        }
        lock.lock();
        try {
            if (!worker.isOpen()) {
                return false;
            }
            worker.progress();
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * For a closed connection's last wait ({@link ConnectionLifecycle}): progresses, and takes
     * and drops the DATA messages that arrived, so that the peer's sends complete and none of
     * them stays in UCX. True once {@code upTo} messages arrived (false while {@code upTo} is
     * not known, -1), or when nothing more can arrive.
     */
    @Override
    public boolean discardInput(long upTo) {
        lock.lock();
        try {
            if (!worker.isOpen() || endpoint == null) {
                return true;
            }
            group.progressLocked();
            while (upTo < 0 || rxConsumed < upTo) {
                if (rxLength < 0 && !headReceived()) {
                    return false;
                }
                if (rxLength == 0) {
                    // a bulk message's place: its bytes too, or the peer's send never completes
                    postBulk(rxHead);
                    rxLength = -1;
                    if (!headReceived()) {
                        return false;
                    }
                }
                recycleHead();
            }
            return true;
        } catch (IOException e) {
            // a receive failed: the peer is gone, nothing more arrives
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The peer closed: from here on no DATA message is posted (writes see the peer gone under
     * this lock), and bytes held back for a credit are dropped. Returns how many were posted.
     */
    @Override
    public long endOutput() {
        lock.lock();
        try {
            txQueued = 0;
            txTailLength = 0;
            return txSent;
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages fully consumed so far (a FIN may not announce fewer). */
    @Override
    public long messagesConsumed() {
        lock.lock();
        try {
            return rxConsumed;
        } finally {
            lock.unlock();
        }
    }

    /**
     * UCX's report that the peer failed, from inside a progress of our worker (an upcall:
     * no call into the worker here). The waiters are woken after that progress returns.
     */
    void onPeerFailure(int status) {
        life.onPeerFailure("UCX: peer failed (" + UcsStatus.describe(status) + ")");
        group.wakeAfterProgress();
    }

    /**
     * The control connection broke without an orderly close: the peer is gone. Its
     * endpoint is closed by force at once, so that sends UCX never reported (it misses a
     * peer that dies before its first rendezvous completed) complete now and nothing
     * waits for them.
     */
    @Override
    public void abortEndpoint() {
        lock.lock();
        try {
            controlLost = true;
            if (peer != null) {
                // when no connection to the peer is left in good standing, the peer died: the
                // group reports that to the worker and closes the shared endpoint by force
                group.peerMayBeDead(peer);
            } else if (worker.isOpen()) {
                // no endpoint to the peer (yet), but it may have had one to us: it may have died in
                // the middle of a write into our worker's shared-memory receive FIFO
                worker.reportDeadPeer();
            }
        } finally {
            lock.unlock();
        }
    }

    /** True once this connection's control connection ended without a close. Under lock. */
    boolean controlLost() {
        return controlLost;
    }

    // ---- read ----------------------------------------------------------------------------

    /**
     * Copies received bytes into the buffers, as many as are there (without waiting).
     *
     * @return bytes read (> 0), 0 when nothing is there yet, -1 at end-of-stream
     * @throws IOException when the connection was reset and nothing more is left to read
     */
    public long read(ByteBuffer[] dsts, int offset, int length) throws IOException {
        final ReentrantLock l = lock;
        WorkerGroup.acquire(l);
        try {
            flushPending();
            long n = drainLocked(dsts, offset, length);
            if (n == 0) {
                group.progressLocked();
                flushPending();
                n = drainLocked(dsts, offset, length);
            }
            if (n > 0) {
                return n;
            }
            if (hasRemaining(dsts, offset, length) && rxLength < 0) {
                long fin = life.peerFinCount();
                if (fin >= 0 && rxConsumed >= fin) {
                    return -1;
                }
                if (life.isReset() && !life.inputOutlivesReset()) {
                    throw life.resetException();
                }
            }
            return 0;
        } finally {
            l.unlock();
        }
    }

    /** True when any of {@code bufs[offset .. offset + length)} has room or bytes left. */
    public static boolean hasRemaining(ByteBuffer[] bufs, int offset, int length) {
        for (int i = offset; i < offset + length; i++) {
            if (bufs[i].hasRemaining()) {
                return true;
            }
        }
        return false;
    }

    private long drainLocked(ByteBuffer[] dsts, int offset, int length) throws IOException {
        final int end = offset + length;
        final ByteBuffer view = rxView;
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
                rxWantsBulk = takesBulk(dsts[i]);
            }
            if (rxLength < 0 && !headReceived()) {
                break;
            }
            ByteBuffer dst = dsts[i];
            if (rxLength == 0) {
                // a bulk message's place: its bytes straight into a direct buffer that holds any
                // message, else through our slice like any other message
                long direct = receiveBulkInto(dst);
                if (direct > 0) {
                    total += direct;
                    continue;
                }
                postBulk(rxHead);
                rxLength = -1;
                if (!headReceived()) {
                    break;
                }
            }
            int n = Math.min(rxLength - rxOffset, dst.remaining());
            int pos = dst.position();
            dst.put(pos, view, rxHead * rxSliceSize + rxOffset, n);
            dst.position(pos + n);
            rxOffset += n;
            total += n;
            if (rxOffset == rxLength) {
                recycleHead();
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
        if (!takesBulk(dst)) {
            return 0;
        }
        int pos = dst.position();
        long address = MemorySegment.ofBuffer(dst).address();
        long request = worker.tagReceive(address, rxSliceSize, bulkTag(localId, rxConsumed), TAG_MASK);
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
        recycleHead();
        BULK_DIRECT.incrementAndGet();
        return length;
    }

    /**
     * A buffer that a bulk message's bytes can land in directly: direct, writable, with room for
     * any message, on an endpoint whose large messages move by a process-to-process copy (cma,
     * knem, xpmem), which finishes inside the receive: elsewhere (a NIC, tcp) it would take a
     * transfer the read has to wait for.
     */
    private boolean takesBulk(ByteBuffer dst) {
        return dst.isDirect() && !dst.isReadOnly() && dst.remaining() >= rxSliceSize && bulkCopiesInPlace();
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

    // 1 when the endpoint's large messages move by a process-to-process copy, 0 when not, -1 not known yet
    private int bulkInPlace = -1;

    /** Posts the receive of the head bulk message's bytes into its slice (after its empty place arrived there). */
    private void postBulk(int slice) throws UcxException {
        BULK_STAGED.incrementAndGet();
        long request = worker.tagReceive(rxArea.address() + (long) slice * rxSliceSize, rxSliceSize,
                bulkTag(localId, rxConsumed), TAG_MASK, token);
        if (request == UcxWorker.COMPLETED) {
            rxRequests[slice] = NONE;
            rxImmediate[slice] = (int) worker.receivedLength();
        } else {
            rxRequests[slice] = request;
            rxImmediate[slice] = -1;
        }
    }

    private boolean headReceived() throws IOException {
        long request = rxRequests[rxHead];
        if (request == NONE) {
            // completed inside tagReceive
            rxLength = rxImmediate[rxHead];
            rxImmediate[rxHead] = -1;
            rxOffset = 0;
            return rxLength >= 0;
        }
        int status = worker.receiveStatus(request);
        if (status == UcsStatus.INPROGRESS) {
            return false;
        }
        long length = worker.receivedLength();
        worker.release(request);
        rxRequests[rxHead] = NONE;
        if (status != UcsStatus.OK) {
            throw new IOException("UCX receive failed: " + UcsStatus.describe(status));
        }
        rxLength = (int) length;
        rxOffset = 0;
        return true;
    }

    private void recycleHead() throws UcxException {
        postSlice(rxHead);
        rxHead = rxHead + 1 == rxSliceCount ? 0 : rxHead + 1;
        rxConsumed++;
        rxLength = -1;
        rxOffset = 0;
    }

    /**
     * Sends a CREDIT message when a quarter of the slices (or, if forced, any) were consumed
     * unreported. A credit that cannot go now (all credit slots still in flight), or that UCX did
     * not finish inside the call, is handed to the control loop ({@link #watchSends}): the reader
     * that consumed the messages may read no more until the peer sends again, and the peer may
     * wait for exactly this credit: left to the next read, it would never go, and both sides
     * would wait for ever (regression:
     * CreditReturnTest#shouldReturnEveryCreditThatCouldNotGoWhenItWasDue).
     */
    private void returnCredits(boolean force) throws UcxException {
        long unreported = rxConsumed - rxCreditsReported;
        if (unreported == 0 || (!force && unreported < creditBatch()) || endpoint == null) {
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
            creditOut.set(ValueLayout.JAVA_LONG, 8L * k, rxWantsBulk ? rxConsumed | CREDIT_WANTS_BULK : rxConsumed);
            long sent = endpoint.tagSend(creditOut.address() + 8L * k, 8, creditTag);
            if (selfLoop) {
                group.wakeOthers();
            }
            rxCreditsReported = rxConsumed;
            if (sent == UcxWorker.COMPLETED) {
                creditOutRequests[k] = NONE;
            } else {
                creditOutRequests[k] = sent;
                watchSends();
            }
            return;
        }
        // all credit slots busy: the control loop retries (the count is cumulative)
        watchSends();
    }

    /** Consumed messages the reader reports at once: a quarter of the slices. */
    private int creditBatch() {
        return Math.max(1, rxSliceCount / 4);
    }

    /**
     * Whether the peer still lacks a credit it is owed: a batch consumed and not reported, or a
     * CREDIT message that UCX has not finished sending (it leaves only while we progress).
     */
    private boolean creditsOwed() {
        return rxConsumed - rxCreditsReported >= creditBatch() || anyInFlight(creditOutRequests);
    }

    // ---- write ---------------------------------------------------------------------------

    /**
     * Takes as many bytes as credits allow (copying them into send slots and posting
     * them), without waiting.
     *
     * A non-blocking write of less than a slice may leave messages waiting in every send slot
     * (the send buffer): a protocol that writes each message whole (JGroups, RPC frameworks) may
     * not take a short write well. Any other write leaves one waiting at most: a blocking one
     * then waits for credits, so nothing it was given can be dropped, and a stream of large
     * writes takes what the peer has room for. A sender that ran the send buffer
     * ahead of its reader streamed 1 MiB writes 10-25 % slower, its slots cold in the cache by the
     * time the reader fetched them (docs/benchmarks/apps.md, "The send buffer").
     *
     * @param buffered whether this write may use the send buffer (a non-blocking channel's)
     * @return bytes taken, 0 when the peer has no room (back-pressure)
     * @throws IOException when the peer closed or the connection was reset
     */
    public long write(ByteBuffer[] srcs, int offset, int length, boolean buffered) throws IOException {
        final ReentrantLock l = lock;
        WorkerGroup.acquire(l);
        try {
            txQueueLimit = buffered && remainingBelow(srcs, offset, length, txSliceSize) ? txSlots : 1;
            if (life.peerLeft()) {
                return writeAfterPeerLeft(srcs, offset, length);
            }
            final int end = offset + length;
            final int sliceSize = txSliceSize;
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
                if (txQueued > 0) {
                    if (headMayGo()) {
                        postHead();
                        continue;
                    }
                    // the peer is behind: fill the last waiting message, then the next free slot
                    // (coalescing only under back-pressure)
                    if (txTailLength < sliceSize) {
                        int tail = (int) ((txSent + txQueued - 1) % txSlots);
                        int filled = gather(srcs, i, end, tail * sliceSize + txTailLength, sliceSize - txTailLength);
                        txTailLength += filled;
                        total += filled;
                        continue;
                    }
                    int next = nextSlot();
                    if (txQueued < txQueueLimit && slotFree(next)) {
                        // filled in the same step: a waiting message is never empty (an empty DATA
                        // message means a bulk message to the reader)
                        txTailLength = gather(srcs, i, end, next * sliceSize, sliceSize);
                        txQueued++;
                        total += txTailLength;
                        continue;
                    }
                    break;
                }
                int slot = (int) (txSent % txSlots);
                if (!slotFree(slot)) {
                    break;
                }
                int filled = gather(srcs, i, end, slot * sliceSize, sliceSize);
                total += filled;
                if (credits() > coalesceBelow || (filled == sliceSize && credits() > 0)) {
                    post(slot, filled);
                } else {
                    // the peer has no free slice: the bytes wait in their slot and go out with the next credit
                    txQueued = 1;
                    txTailLength = filled;
                    heldBack++;
                    watchSends();
                }
            }
            return total;
        } finally {
            l.unlock();
        }
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
        final ByteBuffer view = txView;
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
        return txQueued > 1 || txTailLength == txSliceSize ? credits() > 0 : credits() > coalesceBelow;
    }

    /** Posts the first message that waited for a credit. Needs a credit and the lock. */
    private void postHead() throws UcxException {
        assert lock.isHeldByCurrentThread() && txQueued > 0 && txTailLength > 0 && credits() > 0;
        post((int) (txSent % txSlots), txQueued > 1 ? txSliceSize : txTailLength);
        if (--txQueued == 0) {
            txTailLength = 0;
        }
    }

    /**
     * Sends the {@code length} bytes of send slot {@code slot} as the next DATA message; one
     * UCX did not finish inside the call is handed to the control loop ({@link #watchSends}).
     * Needs a credit and the lock.
     */
    private void post(int slot, int length) throws UcxException {
        long address = txArea.address() + (long) slot * txSliceSize;
        long request;
        if (length >= BULK_MIN && txPeerWantsBulk) {
            // an empty DATA message holds the bulk message's place among the others; its bytes follow
            // under their own tag (both in order on the endpoint), for the reader to receive where it wants
            long header = endpoint.tagSend(address, 0, dataTag);
            if (header != UcxWorker.COMPLETED) {
                // no buffer: UCX finishes it alone
                worker.release(header);
            }
            request = endpoint.tagSend(address, length, bulkTag(remoteId, txSent), token);
        } else {
            request = endpoint.tagSend(address, length, dataTag, token);
        }
        if (selfLoop) {
            group.wakeOthers();
        }
        txLengths[(int) (txSent % txWindow)] = length;
        txUnconsumedBytes += length;
        txSent++;
        if (request == UcxWorker.COMPLETED) {
            txRequests[slot] = NONE;
        } else {
            txRequests[slot] = request;
            watchSends();
        }
    }

    /**
     * Hands this connection to the control loop, unless it has it already: the loop
     * progresses our worker every millisecond until nothing that writes accepted is left to
     * send ({@link #flushFromControl}). A blocking write returns once it accepted the bytes,
     * and the application may not call in again, so two kinds of bytes need it: bytes that
     * wait here for a credit, and a message UCX did not finish inside the send call; so does a
     * credit we owe the peer ({@link #returnCredits}). Above
     * UCX's eager limit (about 8 KiB on shared memory with UCX 1.13) a message is a
     * rendezvous, and the peer cannot receive it until our worker progresses again (measured
     * between two workers: 8,193 bytes arrive without it, 8,300 never do, with either
     * rendezvous scheme). So a 64 KiB message reaches the peer even when its writer then waits
     * for the answer on the kernel socket, where nothing progresses the worker (an upgrading
     * connection with only its output on UCX; regression: QuietWriterTest,
     * UpgradeTest#shouldAnswerALargeMessageSentFromUcxToARawInput). Under the lock.
     */
    private void watchSends() {
        if (!pendingWatched) {
            pendingWatched = true;
            control.flushUntilSent(this);
        }
    }

    /**
     * A posted DATA send has not completed (under the lock). It only looks: the writer that
     * next uses the slot releases the request and sees how it ended.
     */
    boolean sendsInFlight() {
        return txRequests != null && anyInFlight(txRequests);
    }

    /** Whether a send among {@code requests} has not completed. Only looks; under the lock. */
    private boolean anyInFlight(long[] requests) {
        for (long request : requests) {
            if (!sendDone(request)) {
                return true;
            }
        }
        return false;
    }

    /** Sends the waiting messages that credits have come in for. Needs the lock. */
    private void flushPending() throws UcxException {
        if (txQueued > 0) {
            pollCredits();
            while (txQueued > 0 && credits() > 0) {
                postHead();
            }
        }
    }

    /**
     * For the control loop: progress, and send the waiting message once a credit came,
     * so that bytes a blocking write accepted leave even if the application calls in no
     * more ({@link #watchSends}). Returns true while bytes still wait or a send is in flight.
     */
    boolean flushFromControl() {
        lock.lock();
        try {
            if (life.state() >= ConnectionLifecycle.CLOSING || !worker.isOpen()) {
                // a closing connection's held-back bytes are sent by its close (sendsComplete)
                return false;
            }
            group.progressLocked();
            flushPending();
            returnCredits(false);
            return txQueued > 0 || sendsInFlight() || creditsOwed();
        } catch (UcxException | RuntimeException e) {
            return false;
        } finally {
            lock.unlock();
        }
    }

    /**
     * The control loop stops watching: true unless bytes are held back or a send is in
     * flight again (then it keeps watching). Under the lock, so a writer either sees the
     * watch still on or asks for a new one.
     */
    boolean endFlushWatch() {
        lock.lock();
        try {
            if (life.state() < ConnectionLifecycle.CLOSING && worker.isOpen()
                    && (txQueued > 0 || sendsInFlight() || creditsOwed())) {
                return false;
            }
            pendingWatched = false;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * A write after the peer closed, as the kernel answers it: an empty write takes
     * nothing and fails nothing; after an orderly close the first write is still taken
     * (the kernel sends it, and the peer answers with a reset) and only later ones fail.
     */
    private long writeAfterPeerLeft(ByteBuffer[] srcs, int offset, int length) throws IOException {
        if (!hasRemaining(srcs, offset, length)) {
            return 0;
        }
        if (life.takeLateWrite()) {
            long n = 0;
            for (int i = offset; i < offset + length; i++) {
                n += srcs[i].remaining();
                srcs[i].position(srcs[i].limit());
            }
            return n;
        }
        if (life.isReset()) {
            throw life.resetException();
        }
        throw new SocketException("Broken pipe (peer closed the connection)");
    }

    /** Room for this many more full-slice messages: under both the message and the byte bound. */
    private int credits() {
        int messages = txWindow - (int) (txSent - txPeerConsumed);
        int slices = (int) ((txByteWindow - txUnconsumedBytes) / txSliceSize);
        return Math.min(messages, slices);
    }

    private void pollCredits() throws UcxException {
        while (creditInRequest != NONE) {
            int status = worker.receiveStatus(creditInRequest);
            if (status == UcsStatus.INPROGRESS) {
                return;
            }
            worker.release(creditInRequest);
            creditInRequest = NONE;
            if (status != UcsStatus.OK) {
                return;
            }
            long word = creditIn.get(ValueLayout.JAVA_LONG, 0);
            long consumed = word & ~CREDIT_WANTS_BULK;
            if (consumed > txPeerConsumed && consumed <= txSent) {
                txPeerWantsBulk = (word & CREDIT_WANTS_BULK) != 0;
                for (long k = txPeerConsumed; k < consumed; k++) {
                    txUnconsumedBytes -= txLengths[(int) (k % txWindow)];
                }
                txPeerConsumed = consumed;
            }
            // COMPLETED (0) when another credit message was already waiting: loop and take it
            creditInRequest = worker.tagReceive(creditIn.address(), 8, tag(localId, KIND_CREDIT), TAG_MASK, token);
        }
    }

    private boolean slotFree(int slot) throws IOException {
        long request = txRequests[slot];
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
        worker.release(request);
        txRequests[slot] = NONE;
        if (status != UcsStatus.OK) {
            throw new IOException("UCX send failed: " + UcsStatus.describe(status));
        }
        return true;
    }

    /** Writes whose bytes waited for a credit instead of leaving at once (for tests). */
    long heldBackWrites() {
        lock.lock();
        try {
            return heldBack;
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages the peer has reported taken (its credits), as last polled ({@link #sendsComplete} polls). */
    @Override
    public long messagesTaken() {
        lock.lock();
        try {
            return txPeerConsumed;
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages posted so far (what an end-of-stream mark announces). */
    @Override
    public long messagesSent() {
        lock.lock();
        try {
            return txSent;
        } finally {
            lock.unlock();
        }
    }

    /**
     * True when every posted send completed locally, so closing loses nothing: the DATA
     * messages and the CREDIT messages (the last of which is sent here). Progresses once.
     */
    @Override
    public boolean sendsComplete() throws IOException {
        lock.lock();
        try {
            if (!worker.isOpen()) {
                return true;
            }
            group.progressLocked();
            pollCredits();
            returnCredits(true);
            // a credit still queued in UCX (the peer's FIFO full: many connections closing at
            // once) needs our progress to leave; released now, it would keep this connection's
            // memory and its endpoint's close waiting for a progress that an idle worker never makes
            for (int k = 0; k < CREDIT_SLOTS; k++) {
                if (creditOutRequests[k] != NONE) {
                    if (worker.status(creditOutRequests[k]) == UcsStatus.INPROGRESS) {
                        return false;
                    }
                    worker.release(creditOutRequests[k]);
                    creditOutRequests[k] = NONE;
                }
            }
            if (txRequests == null) {
                return true;
            }
            flushPending();
            if (txQueued > 0) {
                return false;
            }
            for (int slot = 0; slot < txRequests.length; slot++) {
                if (txRequests[slot] != NONE) {
                    int status = worker.status(txRequests[slot]);
                    if (status == UcsStatus.INPROGRESS) {
                        return false;
                    }
                    worker.release(txRequests[slot]);
                    txRequests[slot] = NONE;
                }
            }
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits (progressing the worker) until {@code op} is ready: data, end-of-stream or
     * reset for {@link #OP_READ}; credit, peer close or reset for {@link #OP_WRITE}; or
     * until the connection is released locally or the deadline passes.
     */
    public boolean await(int op, long deadline) throws IOException {
        return group.await(this, op, deadline);
    }

    // ---- readiness -----------------------------------------------------------------------

    /**
     * A reader is worth waking when its next message (or the end) may be there; a writer
     * when what it waits for may have come: a credit, when its bytes wait for one, else the
     * completion of the send that holds its next slot (what {@link #isReady} judges, which
     * may post sends). Looks only: request status, no release. Under the group's lock, by the
     * thread that progressed. (Woken by every event of their worker, all writers blocked on one
     * worker would wake for each message; regression: WriterWakeTest.)
     */
    @Override
    public boolean mayBeReady(int op) {
        if (life.waitersMustLeave(op)) {
            return true;
        }
        if (op != OP_READ) {
            return writeMayBeReady();
        }
        if (life.isInputShut() || rxLength >= 0 || life.peerFinCount() >= 0) {
            return true;
        }
        long head = rxRequests[rxHead];
        return head == NONE || worker.receiveStatus(head) != UcsStatus.INPROGRESS;
    }

    private boolean writeMayBeReady() {
        if (life.peerLeft() || txRequests == null) {
            return true;
        }
        if (txQueued > 0) {
            // a partly filled waiting message takes more bytes, so does a free slot after it; else
            // they wait for a credit
            if (txTailLength < txSliceSize || credits() > 0
                    || creditInRequest == NONE || worker.receiveStatus(creditInRequest) != UcsStatus.INPROGRESS) {
                return true;
            }
            return txQueued < txQueueLimit && sendDone(txRequests[nextSlot()]);
        }
        // else a write takes bytes exactly when the next slot's send completed (see isReady)
        return sendDone(txRequests[(int) (txSent % txSlots)]);
    }

    /** The slot of the next message to start: after the posted and the waiting ones. */
    private int nextSlot() {
        return (int) ((txSent + txQueued) % txSlots);
    }

    private boolean sendDone(long request) {
        return request == NONE || worker.status(request) != UcsStatus.INPROGRESS;
    }

    /** Called under the group lock by {@link WorkerGroup#await}. */
    @Override
    public boolean isReady(int op) {
        if (life.waitersMustLeave(op)) {
            return true;
        }
        try {
            flushPending();
            if (op == OP_READ) {
                long fin;
                if (life.isInputShut() || rxLength >= 0 || ((fin = life.peerFinCount()) >= 0 && rxConsumed >= fin)) {
                    return true;
                }
                long head = rxRequests[rxHead];
                return head == NONE || worker.receiveStatus(head) != UcsStatus.INPROGRESS;
            }
            if (life.peerLeft()) {
                return true;
            }
            pollCredits();
            if (txQueued > 0) {
                return txTailLength < txSliceSize || credits() > 0
                        || (txQueued < txQueueLimit && slotFree(nextSlot()));
            }
            // with or without a credit, a write takes bytes exactly when the next slot is free
            // (without one they wait there for it); a credit alone does not free the slot
            return slotFree((int) (txSent % txSlots));
        } catch (IOException e) {
            return true;
        }
    }

    /**
     * The ops of {@code interest} ({@link #OP_READ}, {@link #OP_WRITE}) that are ready,
     * for a selector. Progresses nothing; takes the lock.
     */
    public int readyOps(int interest) {
        WorkerGroup.acquire(lock);
        try {
            int ready = 0;
            if ((interest & OP_READ) != 0 && isReady(OP_READ)) {
                ready |= OP_READ;
            }
            if ((interest & OP_WRITE) != 0 && isReady(OP_WRITE)) {
                ready |= OP_WRITE;
            }
            return ready;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Frees everything: cancels the posted receives, closes the endpoint, and releases
     * the memory. Called once, after the last reader and writer left and the sends
     * completed (or the connection was reset, or the close linger ran out).
     *
     * <p>It never waits: it runs under the worker group's lock, which every read, write
     * and new connection on the worker needs, on the control thread, which every close
     * and handshake needs: waiting here for a killed peer's sends in flight would stall every
     * connection of the JVM, long enough for new connections to miss their handshake deadline
     * (PeerFailureTest connects again after each kill). Requests still in flight - sends the
     * peer has not fetched yet, a receive mid-rendezvous - are kept, and the connection's
     * memory, which they may still read or write, is freed by the control loop once they ended
     * ({@link #freeIfDone}); only if they never end (a peer that lives but takes nothing) does it
     * stay allocated.
     */
    @Override
    public void release() {
        String retained = null;
        lock.lock();
        try {
            if (worker.isOpen()) {
                // one round for completions that are due (cancelled receives complete here)
                for (int i = 0; i < rxRequests.length; i++) {
                    if (rxRequests[i] != NONE) {
                        worker.cancel(rxRequests[i]);
                    }
                }
                if (creditInRequest != NONE) {
                    worker.cancel(creditInRequest);
                }
                group.progressLocked();
                for (int i = 0; i < rxRequests.length; i++) {
                    keepIfInFlight(rxRequests[i]);
                    rxRequests[i] = NONE;
                }
                int receives = inFlightCount;
                keepIfInFlight(creditInRequest);
                creditInRequest = NONE;
                for (int k = 0; k < CREDIT_SLOTS; k++) {
                    keepIfInFlight(creditOutRequests[k]);
                    creditOutRequests[k] = NONE;
                }
                int credits = inFlightCount - receives;
                if (txRequests != null) {
                    for (int i = 0; i < txRequests.length; i++) {
                        keepIfInFlight(txRequests[i]);
                        txRequests[i] = NONE;
                    }
                }
                group.detach(token, this);
                if (peer != null) {
                    // the endpoint is the peer's, shared: it stays for the next connection to it
                    group.leave(peer, this);
                } else {
                    // the handshake ended before our endpoint existed (it failed, or the connection went
                    // plain): a peer that had our worker's address and died may have died in the middle of
                    // a write into our worker's receive FIFO (a UCX wire-up message). For a live peer the
                    // report costs a look at the FIFO; only a sender stopped mid-write for a second is at risk
                    worker.reportDeadPeer();
                }
                if (inFlightCount > 0) {
                    retained = "receives " + receives + ", credits " + credits + ", sends "
                            + (inFlightCount - receives - credits) + " in flight at release; " + life;
                }
            }
        } finally {
            lock.unlock();
        }
        if (retained != null) {
            // the requests may still read or write our memory: it is freed when they end
            RETAINED.put(this, retained);
            control.freeWhenDone(this);
        } else {
            freeMemory();
        }
    }

    /**
     * For the control loop, after {@link #release} kept requests in flight: progresses the
     * worker, gives back those that ended and, once none is left, frees the memory. True
     * when nothing is left to watch (freed, or the worker closed: the memory stays then).
     */
    boolean freeIfDone() {
        lock.lock();
        try {
            if (!worker.isOpen()) {
                return true;
            }
            group.progressLocked();
            int left = 0;
            for (int i = 0; i < inFlightCount; i++) {
                long request = inFlight[i];
                if (worker.status(request) == UcsStatus.INPROGRESS) {
                    inFlight[left++] = request;
                } else {
                    worker.release(request);
                }
            }
            inFlightCount = left;
            if (left > 0) {
                return false;
            }
        } finally {
            lock.unlock();
        }
        RETAINED.remove(this);
        freeMemory();
        return true;
    }

    /**
     * For the control loop: the requests {@link #release} kept did not end in time (a peer that
     * lives but never takes its messages). They go back to UCX and the memory stays allocated
     * for good, since they may still use it.
     */
    void abandonInFlight() {
        lock.lock();
        try {
            if (worker.isOpen()) {
                for (int i = 0; i < inFlightCount; i++) {
                    worker.release(inFlight[i]);
                }
            }
            inFlightCount = 0;
        } finally {
            lock.unlock();
        }
    }

    private void freeMemory() {
        arena.close();
        MEMORY_LIVE.decrementAndGet();
        MEMORY_BYTES.addAndGet(-memoryBytes);
    }

    private void countMemory(long bytes) {
        memoryBytes += bytes;
        MEMORY_BYTES.addAndGet(bytes);
    }

    /** Connections whose memory is not freed (open ones, and any {@link #release} had to leave), JVM-wide. */
    static int memoryLive() {
        return MEMORY_LIVE.get();
    }

    /** Bytes of native memory those connections hold (slices, send slots, credit words). */
    static long memoryBytes() {
        return MEMORY_BYTES.get();
    }

    /** Connections whose memory {@link #release} left allocated because UCX requests in flight might still use it. */
    static int memoryRetained() {
        return RETAINED.size();
    }

    /** What each of those connections had in flight when it was released, and its lifecycle then (diagnostics). */
    static String memoryRetainedBy() {
        return RETAINED.values().toString();
    }

    /** Gives a request back to UCX, unless it is still in progress: then it is kept (it may still use our memory). */
    private void keepIfInFlight(long request) {
        if (request == NONE || request == UcxWorker.COMPLETED) {
            return;
        }
        if (worker.status(request) == UcsStatus.INPROGRESS) {
            if (inFlightCount == inFlight.length) {
                inFlight = java.util.Arrays.copyOf(inFlight, 2 * inFlightCount);
            }
            inFlight[inFlightCount++] = request;
        } else {
            worker.release(request);
        }
    }
}
