package io.hadronio.path;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.UcxHalf;
import io.hadronio.worker.Readiness;
import io.hadronio.worker.WorkerGroup;
import io.hadronio.worker.WorkerUser;

import io.hadronio.platform.HugePagePool;
import io.hadronio.ucx.UcsStatus;
import io.hadronio.ucx.UcxEndpoint;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxWorker;
import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.SocketException;
import java.nio.ByteBuffer;
import java.util.concurrent.locks.ReentrantLock;

/**
 * The UCX half of one accelerated connection: its endpoint, its pre-posted receive
 * slices ({@link ReceiveSlices}), its send slots ({@link SendSlots}), and credit-based flow
 * control between them. It ties the two sides to the connection's lifecycle (end-of-stream,
 * reset, close), to the worker group's waits and to the control loop's flush watch, and frees
 * their memory ({@link ConnectionMemory}) when the connection is released. The messages and
 * their tags are {@link WireFormat}'s.
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
 * before them is lost. Bytes the peer has no room for wait in our send slots
 * ({@link SendSlots}, Send buffer).
 *
 * <h2>Bulk messages</h2>
 * A slice costs the receiving core a second copy of every byte (UCX fetches a large message
 * into the slice, the read copies it out), which bounds 64 KiB streaming well below UCX's own
 * rate. So when the reader reads into direct buffers with room for any message, on an endpoint
 * whose large messages move by a process-to-process copy (cma), it says so with its credits
 * ({@link WireFormat#CREDIT_WANTS_BULK}), and the sender sends each message of
 * {@link WireFormat#BULK_MIN} bytes or more as a bulk message: an empty DATA message in the
 * message's place (it lands in the slice like any other, so order, credits and readiness stay as
 * they are), then the bytes under the tag {@code (receiver's id, BULK, message index & 0xffffff)}.
 * They wait in UCX (a rendezvous: only a header, the bytes stay in the sender's slot) until the
 * read that reaches the empty message receives them - into the application's buffer when it takes
 * the whole message (one copy), else into the slice. A close that drains the peer's messages
 * receives the bytes of bulk ones too. Both ends announce the protocol in their endpoint profile
 * ({@code +bulk}); a peer without it stays on TCP.
 *
 * <p>All methods that touch UCX run under the group's lock, which guards the state of both
 * sides, the endpoint fields here and the flush watch's flag. Reads are called under the
 * channel's read lock, writes under its write lock.
 */
public final class Connection implements Readiness, WorkerUser, UcxHalf, UcxHousekeeping.Chores {
    public static final int OP_READ = Readiness.OP_READ;
    public static final int OP_WRITE = Readiness.OP_WRITE;

    private final WorkerGroup group;
    // flushes bytes that wait for credits when nobody else calls in
    private final UcxHousekeeping control;
    private final UcxWorker worker;
    private final ReentrantLock lock;
    // memory of this connection: slices, slots, credit words; freed by release()
    private final ConnectionMemory memory;
    // our id: the peer puts it in the tags it sends us
    private final int localId;
    // what our receives and data sends carry, so that their completion names us (WorkerGroup.attach)
    private final int token;
    // our receive geometry, told to the peer in the handshake
    private final int rxSliceSize;
    private final int rxSliceCount;
    // the receive side (reader thread, under lock)
    private final ReceiveSlices rx;
    // the send side (writer thread, under lock)
    private final SendSlots tx;
    // the control loop's watch over what must leave without the application (see FlushWatch)
    private final FlushWatch flushWatch = new FlushWatch();
    // completions of our requests the worker reported: looks at requests in progress wait for one
    private final Completions completions = new Completions();

    private UcxEndpoint endpoint;
    // the endpoint to the peer's worker, shared with every other connection to it
    private WorkerGroup.PeerEndpoint peer;
    // the control connection ended without a close (see WorkerGroup.peerMayBeDead); under lock
    private boolean controlLost;

    // whose state (end-of-stream, reset, close) this data path obeys; it keeps none of its own
    private final ConnectionLifecycle life;

    public Connection(ConnectionLifecycle life, WorkerGroup group, UcxHousekeeping control, HugePagePool areas, int sliceSize,
               int sliceCount, long sendBufferBytes) throws UcxException {
        this.life = life;
        this.group = group;
        this.control = control;
        this.worker = group.worker();
        this.lock = group.lock;
        this.localId = group.newConnectionId();
        this.rxSliceSize = sliceSize;
        this.rxSliceCount = sliceCount;
        this.memory = new ConnectionMemory(areas);
        MemorySegment slices = memory.area((long) sliceSize * sliceCount);
        MemorySegment creditOut = memory.words(8L * ReceiveSlices.CREDIT_SLOTS);
        MemorySegment creditIn = memory.words(8);
        memory.opened();
        lock.lock();
        try {
            this.token = group.attach(this);
            this.rx = new ReceiveSlices(group, flushWatch, completions, localId, token, memory, slices, sliceSize,
                    sliceCount, creditOut);
            this.tx = new SendSlots(group, flushWatch, completions, memory, localId, token, creditIn, sendBufferBytes);
        } finally {
            lock.unlock();
        }
    }

    /**
     * One of our receives or data sends completed, failed or was cancelled (an upcall from
     * inside a call into the worker, under the group's lock: no call into the worker here):
     * a selector must look at this connection again, and so must a look at a request in progress.
     */
    @Override
    public void completionSeen() {
        completions.seen();
        life.readinessChanged();
    }

    @Override
    public int localId() {
        return localId;
    }

    @Override
    public int rxSliceSize() {
        return rxSliceSize;
    }

    @Override
    public int rxSliceCount() {
        return rxSliceCount;
    }

    /** Completes set-up once the peer's hello is known: its id, its receive geometry, its worker. */
    @Override
    public void connect(int peerId, int peerSliceSize, int peerSliceCount, byte[] peerWorkerAddress) throws UcxException {
        lock.lock();
        try {
            tx.connect(peerId, peerSliceSize, peerSliceCount);
            // PEER: a peer that dies is reported (sends and receives complete with an error,
            // onPeerFailure runs) instead of aborting this process inside UCX; with the
            // context's peerFailureDetection it keeps shared memory (sysv + cma)
            this.peer = group.endpointTo(peerWorkerAddress, this);
            this.endpoint = peer.endpoint;
            // both ends on this very worker (UCX 'self'): a send completes the peer's receive inside
            // the call, with no event on the event fd, so whoever waits for it must be woken by us
            boolean selfLoop = java.util.Arrays.equals(peerWorkerAddress, group.address());
            tx.useEndpoint(endpoint, selfLoop);
            rx.useEndpoint(endpoint, peerId, selfLoop);
        } finally {
            lock.unlock();
        }
    }

    @Override
    public WorkerGroup group() {
        return group;
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
    @Override
    public boolean onlyTcp() {
        lock.lock();
        try {
            if (endpoint == null || !endpoint.isOpen()) {
                return false;
            }
            java.util.Set<String> t = endpoint.transports();
            for (String name : t) {
                if (!name.startsWith("tcp")) {
                    return false;
                }
            }
            return !t.isEmpty();
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
            return rx.discard(upTo);
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
            return tx.dropQueued();
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages fully consumed so far (a FIN may not announce fewer). */
    @Override
    public long messagesConsumed() {
        lock.lock();
        try {
            return rx.consumed();
        } finally {
            lock.unlock();
        }
    }

    /**
     * UCX's report that the peer failed, from inside a progress of our worker (an upcall:
     * no call into the worker here). The waiters are woken after that progress returns.
     */
    @Override
    public void onPeerFailure(int status) {
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
    @Override
    public boolean controlLost() {
        return controlLost;
    }

    // ---- read ----------------------------------------------------------------------------

    /**
     * Bytes a read takes now without waiting (the socket stream's {@code available()}): the rest
     * of the message at the head, after a progress of the worker if none was there, so that a
     * caller that only asks this sees bytes arrive.
     */
    public int available() throws IOException {
        final ReentrantLock l = lock;
        WorkerGroup.acquire(l);
        try {
            int n = rx.available();
            if (n == 0) {
                group.progressLocked();
                n = rx.available();
            }
            return n;
        } finally {
            l.unlock();
        }
    }

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
            final ReceiveSlices rx = this.rx;
            final SendSlots tx = this.tx;
            tx.flushPending();
            long n = rx.drain(dsts, offset, length);
            if (n == 0) {
                group.progressLocked();
                tx.flushPending();
                n = rx.drain(dsts, offset, length);
            }
            if (n > 0) {
                return n;
            }
            if (hasRemaining(dsts, offset, length) && !rx.headArrived()) {
                long fin = life.peerFinCount();
                if (fin >= 0 && rx.consumed() >= fin) {
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

    // ---- write ---------------------------------------------------------------------------

    /**
     * Takes as many bytes as credits allow (copying them into send slots and posting
     * them), without waiting ({@link SendSlots#write}: how many messages may wait for credits).
     *
     * @param buffered whether this write may use the send buffer (a non-blocking channel's)
     * @return bytes taken, 0 when the peer has no room (back-pressure)
     * @throws IOException when the peer closed or the connection was reset
     */
    public long write(ByteBuffer[] srcs, int offset, int length, boolean buffered) throws IOException {
        final ReentrantLock l = lock;
        WorkerGroup.acquire(l);
        try {
            final SendSlots tx = this.tx;
            tx.limitQueueFor(srcs, offset, length, buffered);
            tx.readerProgress(rx.consumed());
            if (life.peerLeft()) {
                return writeAfterPeerLeft(srcs, offset, length);
            }
            return tx.write(srcs, offset, length);
        } finally {
            l.unlock();
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

    /**
     * A posted DATA send has not completed (under the lock). It only looks: the writer that
     * next uses the slot releases the request and sees how it ended.
     */
    boolean sendsInFlight() {
        return tx.sendsInFlight();
    }

    /** Writes whose bytes waited for a credit instead of leaving at once (for tests). */
    long heldBackWrites() {
        lock.lock();
        try {
            return tx.heldBackWrites();
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages sent expedited (SendSlots, Expedited sends; for tests). */
    long expeditedSends() {
        lock.lock();
        try {
            return tx.expeditedSends();
        } finally {
            lock.unlock();
        }
    }

    /** The highest send slot a message was written into, -1 before the first (for tests). */
    int highestSendSlotUsed() {
        lock.lock();
        try {
            return tx.highestSlotUsed();
        } finally {
            lock.unlock();
        }
    }

    /** The send slot the last message was written into, -1 before the first (for tests). */
    int lastSendSlotUsed() {
        lock.lock();
        try {
            return tx.lastSlotUsed();
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages the peer has reported taken (its credits), as last polled ({@link #sendsComplete} polls). */
    @Override
    public long messagesTaken() {
        lock.lock();
        try {
            return tx.messagesTaken();
        } finally {
            lock.unlock();
        }
    }

    /** DATA messages posted so far (what an end-of-stream mark announces). */
    @Override
    public long messagesSent() {
        lock.lock();
        try {
            return tx.messagesSent();
        } finally {
            lock.unlock();
        }
    }

    // ---- the control loop's flush watch --------------------------------------------------

    /**
     * Hands this connection to the control loop, unless it has it already: the loop
     * progresses our worker every millisecond until nothing that writes accepted is left to
     * send ({@link #flushFromControl}). A blocking write returns once it accepted the bytes,
     * and the application may not call in again, so two kinds of bytes need it: bytes that
     * wait here for a credit, and a message UCX did not finish inside the send call; so does a
     * credit we owe the peer ({@link ReceiveSlices#returnCredits}). Above
     * UCX's eager limit (about 8 KiB on shared memory with UCX 1.13) a message is a
     * rendezvous, and the peer cannot receive it until our worker progresses again (measured
     * between two workers: 8,193 bytes arrive without it, 8,300 never do, with either
     * rendezvous scheme). So a 64 KiB message reaches the peer even when its writer then waits
     * for the answer on the kernel socket, where nothing progresses the worker (an upgrading
     * connection with only its output on UCX; regression: QuietWriterTest,
     * UpgradeTest#shouldAnswerALargeMessageSentFromUcxToARawInput). Under the lock.
     */
    private final class FlushWatch implements SendWatch {
        // the control loop is flushing this connection; under the lock
        boolean watched;

        @Override
        public void watchSends() {
            if (!watched) {
                watched = true;
                control.flushUntilSent(Connection.this);
            }
        }
    }

    /**
     * For the control loop: progress (once per pass for all the connections of the group,
     * {@link WorkerGroup#progressForControl}), and send the waiting message once a credit came,
     * so that bytes a blocking write accepted leave even if the application calls in no
     * more ({@link FlushWatch}). Returns true while bytes still wait or a send is in flight.
     */
    @Override
    public boolean flushFromControl() {
        lock.lock();
        try {
            if (life.state() >= ConnectionLifecycle.CLOSING || !worker.isOpen()) {
                // a closing connection's held-back bytes are sent by its close (sendsComplete)
                return false;
            }
            group.progressForControl();
            tx.flushPending();
            rx.returnCredits(false);
            return tx.holdsBytes() || tx.sendsInFlight() || rx.creditsOwed();
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
    @Override
    public boolean endFlushWatch() {
        lock.lock();
        try {
            if (life.state() < ConnectionLifecycle.CLOSING && worker.isOpen()
                    && (tx.holdsBytes() || tx.sendsInFlight() || rx.creditsOwed())) {
                return false;
            }
            flushWatch.watched = false;
            return true;
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
            tx.pollCredits();
            rx.returnCredits(true);
            return rx.creditsSent() && tx.sendsDone();
        } finally {
            lock.unlock();
        }
    }

    // ---- readiness -----------------------------------------------------------------------

    /**
     * Waits (progressing the worker) until {@code op} is ready: data, end-of-stream or
     * reset for {@link #OP_READ}; credit, peer close or reset for {@link #OP_WRITE}; or
     * until the connection is released locally or the deadline passes.
     */
    public boolean await(int op, long deadline) throws IOException {
        return group.await(this, op, deadline);
    }

    /**
     * A reader is worth waking when its next message (or the end) may be there; a writer
     * when what it waits for may have come ({@link SendSlots#mayBeReady}). Looks only: request
     * status, no release. Under the group's lock, by the thread that progressed. (Woken by
     * every event of their worker, all writers blocked on one worker would wake for each
     * message; regression: WriterWakeTest.)
     */
    @Override
    public boolean mayBeReady(int op) {
        if (life.waitersMustLeave(op)) {
            return true;
        }
        if (op != OP_READ) {
            return life.peerLeft() || tx.mayBeReady();
        }
        if (life.isInputShut() || rx.headArrived() || life.peerFinCount() >= 0) {
            return true;
        }
        return rx.headEnded();
    }

    /** Called under the group lock by {@link WorkerGroup#await}. */
    @Override
    public boolean isReady(int op) {
        if (life.waitersMustLeave(op)) {
            return true;
        }
        try {
            tx.flushPending();
            if (op == OP_READ) {
                long fin;
                if (life.isInputShut() || rx.headArrived() || ((fin = life.peerFinCount()) >= 0 && rx.consumed() >= fin)) {
                    return true;
                }
                return rx.headEnded();
            }
            if (life.peerLeft()) {
                return true;
            }
            return tx.isReady();
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

    // ---- release -------------------------------------------------------------------------

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
                rx.cancelReceives();
                tx.cancelCreditReceive();
                group.progressLocked();
                rx.keepReceivesInFlight(memory);
                int receives = memory.inFlight();
                tx.keepCreditReceiveInFlight(memory);
                rx.keepCreditsInFlight(memory);
                int credits = memory.inFlight() - receives;
                tx.keepSendsInFlight(memory);
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
                int inFlight = memory.inFlight();
                if (inFlight > 0) {
                    retained = "receives " + receives + ", credits " + credits + ", sends "
                            + (inFlight - receives - credits) + " in flight at release; " + life;
                }
            }
        } finally {
            lock.unlock();
        }
        if (retained != null) {
            // the requests may still read or write our memory: it is freed when they end
            memory.retain(retained);
            control.freeWhenDone(this);
        } else {
            memory.free();
        }
    }

    /**
     * For the control loop, after {@link #release} kept requests in flight: progresses the
     * worker, gives back those that ended and, once none is left, frees the memory. True
     * when nothing is left to watch (freed, or the worker closed: the memory stays then).
     */
    @Override
    public boolean freeIfDone() {
        lock.lock();
        try {
            if (!worker.isOpen()) {
                return true;
            }
            group.progressLocked();
            if (memory.releaseEnded(worker) > 0) {
                return false;
            }
        } finally {
            lock.unlock();
        }
        memory.free();
        return true;
    }

    /**
     * For the control loop: the requests {@link #release} kept did not end in time (a peer that
     * lives but never takes its messages). They go back to UCX and the memory stays allocated
     * for good, since they may still use it.
     */
    @Override
    public void abandonInFlight() {
        lock.lock();
        try {
            memory.abandon(worker);
        } finally {
            lock.unlock();
        }
    }
}
