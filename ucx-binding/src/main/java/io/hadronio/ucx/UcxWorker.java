package io.hadronio.ucx;

import io.hadronio.ucx.UcpStructs.UcpAmHandlerParam;
import io.hadronio.ucx.UcpStructs.UcpEpParams;
import io.hadronio.ucx.UcpStructs.UcpRequestParam;
import io.hadronio.ucx.UcpStructs.UcpTagRecvInfo;
import io.hadronio.ucx.UcpStructs.UcpWorkerParams;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A UCP worker ({@code ucp_worker_h}): the progress engine that endpoints, receives
 * and active messages live on.
 *
 * <h2>Requests</h2>
 * Non-blocking operations return a request handle (a {@code long}), or
 * {@link #COMPLETED} when they finished inside the call. The caller polls
 * {@link #status(long)} (or {@link #receiveStatus(long)} for tag receives) while
 * calling {@link #progress()}, and gives every handle back with {@link #release(long)}.
 * The worker tracks its outstanding handles: an unknown or released handle is
 * rejected with an exception instead of reaching UCX, and {@link #close()} cancels and
 * frees whatever is left.
 *
 * <h2>Threads</h2>
 * Calls must be serialised by the caller (one thread at a time, as in UCX's
 * SERIALIZED mode), with one exception: {@link #signal()} may be called from any
 * thread at any time. Hot-path calls ({@link #progress()}, sends, receives,
 * {@link #status}, {@link #release}) allocate nothing.
 */
public final class UcxWorker implements AutoCloseable {
    private static final Logger LOG = System.getLogger(UcxWorker.class.getName());

    /** The request handle of an operation that completed inside the call. */
    public static final long COMPLETED = 0;

    // ucp_request_param_t with op_attr_mask 0: polling, contiguous data, no callback; never written
    static final MemorySegment DEFAULT_PARAM = Arena.global().allocate(UcpRequestParam.LAYOUT);
    // ucp_request_param_t asking ucp_ep_close_nbx for a forced close
    static final MemorySegment FORCE_CLOSE_PARAM = Arena.global().allocate(UcpRequestParam.LAYOUT);

    static {
        FORCE_CLOSE_PARAM.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK, UcpRequestParam.FIELD_FLAGS);
        FORCE_CLOSE_PARAM.set(ValueLayout.JAVA_INT, UcpRequestParam.FLAGS, UcpRequestParam.EP_CLOSE_FLAG_FORCE);
    }

    // the first byte of a worker address: format version in the low 4 bits (UCP_ADDRESS_HEADER_VERSION_MASK)
    private static final int ADDRESS_VERSION_MASK = 0x0F;
    // newest address format UCX knows (UCP_OBJECT_VERSION_V2 = 1); UCX 1.13 aborts on any other
    private static final int MAX_ADDRESS_VERSION = 1;
    // zero bytes after the copy of a remote address: ucp_ep_create reads it without a length, and a
    // truncated address must run into zeros (rejected by UCX; 64 sufficed in fuzzing) rather than foreign memory
    private static final int ADDRESS_PADDING = 4096;
    // UCX before 1.16 completes a tag receive at once without filling recv_info (openucx/ucx#9425,
    // fixed by #9440), which would leave receivedTag/receivedLength stale; there receives always
    // return a request (UCP_OP_ATTR_FLAG_NO_IMM_CMPL), and receiveStatus reports tag and length
    private static final boolean IMMEDIATE_RECV_INFO = versionAtLeast(1, 16);
    // how long close() keeps progressing to let cancelled requests and closing endpoints finish
    private static final long CLOSE_DRAIN_NANOS = TimeUnit.SECONDS.toNanos(2);
    /**
     * How long an element of the receive FIFO must stay taken-but-unwritten after a peer
     * was reported dead before the worker completes it: a live sender writes an element
     * in microseconds, so one still unwritten after this long belongs to a dead sender
     * (or to one stopped in the middle of a send, e.g. by SIGSTOP; see reportDeadPeer).
     */
    static final long TORN_ELEMENT_GRACE_NANOS = TimeUnit.SECONDS.toNanos(1);
    // worker creation is serialised so that the FIFO segment a new worker creates can be told apart
    private static final Object CREATE_LOCK = new Object();

    // the context this worker was made from
    private final UcxContext context;
    // ucp_worker_h
    private final long handle;
    // thread mode UCX was told
    private final ThreadMode threadMode;
    // name, for logs
    private final String name;
    // memory owned by this worker: scratch, callback params; closed with the worker
    private final Arena arena;
    // ucp_tag_recv_info_t filled by receiveStatus, and by receives that complete at once
    private final MemorySegment recvInfo;
    // ucp_request_param_t for tag receives: recv_info points at recvInfo
    private final MemorySegment receiveParam;
    // ucp_request_param_t for tag receives that tell the completion listener: recv_info, callback, user_data
    // (rewritten per call: calls are serialised)
    private final MemorySegment notifyReceiveParam;
    // ucp_request_param_t for sends that tell the completion listener: callback, user_data
    final MemorySegment notifySendParam;
    // notifySendParam with UCP_OP_ATTR_FLAG_FAST_CMPL (UcxEndpoint.tagSend, expedited)
    final MemorySegment notifyExpeditedSendParam;
    // slot of the completion listener in Upcalls (the high half of user_data), 0 without one
    private int listenerSlot;
    // outstanding request handles
    private final RequestTable requests = new RequestTable();
    // endpoints still open
    private final List<UcxEndpoint> endpoints = new ArrayList<>();
    // active-message id -> upcall registry id
    private final Map<Integer, Long> amHandlers = new HashMap<>();
    // callback handles registered here
    private final List<UcxCallbackHandle> callbacks = new ArrayList<>();
    // the event fd, -1 until asked for
    private int eventFd = -1;
    // results of the last receiveStatus that completed
    private long receivedTag;
    private long receivedLength;
    // set once by close(); checked by every call
    private volatile boolean closed;
    // this worker's sysv receive FIFO, to complete elements a killed sender left unwritten; null when not found
    private final SysvReceiveFifo fifo;
    // FIFO indexes that were taken and unwritten when a peer was reported dead -> when to look at
    // them again; every progress() asks whether it is empty
    private final java.util.TreeMap<Long, Long> tornCandidates = new java.util.TreeMap<>();
    // when the earliest candidate is due (System.nanoTime)
    private long tornCheckAt;
    // FIFO elements completed so far
    private long tornElementsCompleted;

    private UcxWorker(UcxContext context, long handle, ThreadMode threadMode, String name, Arena arena,
            SysvReceiveFifo fifo) {
        this.context = context;
        this.handle = handle;
        this.threadMode = threadMode;
        this.name = name;
        this.arena = arena;
        this.fifo = fifo;
        this.recvInfo = arena.allocate(UcpTagRecvInfo.LAYOUT);
        this.receiveParam = arena.allocate(UcpRequestParam.LAYOUT);
        receiveParam.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK, IMMEDIATE_RECV_INFO
                ? UcpRequestParam.FIELD_RECV_INFO
                : UcpRequestParam.FIELD_RECV_INFO | UcpRequestParam.FLAG_NO_IMM_CMPL);
        receiveParam.set(ValueLayout.JAVA_LONG, UcpRequestParam.RECV_INFO, recvInfo.address());
        this.notifyReceiveParam = arena.allocate(UcpRequestParam.LAYOUT);
        notifyReceiveParam.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK,
                receiveParam.get(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK)
                        | UcpRequestParam.FIELD_CALLBACK | UcpRequestParam.FIELD_USER_DATA);
        notifyReceiveParam.set(ValueLayout.JAVA_LONG, UcpRequestParam.RECV_INFO, recvInfo.address());
        notifyReceiveParam.set(ValueLayout.JAVA_LONG, UcpRequestParam.CB, Upcalls.RECEIVE_NOTIFY.address());
        this.notifySendParam = arena.allocate(UcpRequestParam.LAYOUT);
        notifySendParam.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK,
                UcpRequestParam.FIELD_CALLBACK | UcpRequestParam.FIELD_USER_DATA);
        notifySendParam.set(ValueLayout.JAVA_LONG, UcpRequestParam.CB, Upcalls.SEND_NOTIFY.address());
        this.notifyExpeditedSendParam = arena.allocate(UcpRequestParam.LAYOUT);
        notifyExpeditedSendParam.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK,
                UcpRequestParam.FIELD_CALLBACK | UcpRequestParam.FIELD_USER_DATA | UcpRequestParam.FLAG_FAST_CMPL);
        notifyExpeditedSendParam.set(ValueLayout.JAVA_LONG, UcpRequestParam.CB, Upcalls.SEND_NOTIFY.address());
    }

    /**
     * Sets the one listener told about requests posted with a token (see
     * {@link UcxCompletionListener}); once, before any such request.
     */
    public void completionListener(UcxCompletionListener listener) {
        ensureOpen();
        if (listenerSlot != 0) {
            throw new IllegalStateException("worker " + name + " has a completion listener already");
        }
        listenerSlot = Upcalls.registerListener(listener);
    }

    /** user_data naming the completion listener and {@code token}. */
    long notifyUserData(int token) {
        if (listenerSlot == 0) {
            throw new IllegalStateException("worker " + name + " has no completion listener");
        }
        return ((long) listenerSlot << 32) | (token & 0xFFFF_FFFFL);
    }

    private static boolean versionAtLeast(int major, int minor) {
        int[] v = NativeLibraries.version();
        return v[0] > major || (v[0] == major && v[1] >= minor);
    }

    static UcxWorker create(UcxContext context, ThreadMode mode, String name) throws UcxException {
        Arena arena = Arena.ofShared();
        try {
            MemorySegment params = arena.allocate(UcpWorkerParams.LAYOUT);
            params.set(ValueLayout.JAVA_LONG, UcpWorkerParams.FIELD_MASK,
                    UcpWorkerParams.FIELD_THREAD_MODE | UcpWorkerParams.FIELD_NAME);
            params.set(ValueLayout.JAVA_INT, UcpWorkerParams.THREAD_MODE, mode.value);
            params.set(ValueLayout.JAVA_LONG, UcpWorkerParams.NAME, arena.allocateFrom(name).address());
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            SysvReceiveFifo fifo;
            StringBuilder why = new StringBuilder();
            synchronized (CREATE_LOCK) {
                java.util.Set<Integer> before = SysvReceiveFifo.ownSegments();
                UcxContext.check("ucp_worker_create", Ucp.ucp_worker_create(context.handle(), params.address(),
                        out.address()));
                fifo = SysvReceiveFifo.find(before, fifoElemSize(context), why);
            }
            if (fifo == null && LOG.isLoggable(Level.DEBUG)) {
                LOG.log(Level.DEBUG, "worker " + name + ": no sysv receive FIFO to watch (" + why
                        + "); elements a killed sender leaves unwritten cannot be completed");
            }
            return new UcxWorker(context, out.get(ValueLayout.JAVA_LONG, 0), mode, name, arena, fifo);
        } catch (UcxException | RuntimeException e) {
            arena.close();
            throw e;
        }
    }

    /** UCX's FIFO element size for sysv: the context's configuration, then the environment, then UCX's default. */
    private static int fifoElemSize(UcxContext context) {
        String[] keys = {"SYSV_FIFO_ELEM_SIZE", "MM_FIFO_ELEM_SIZE"};
        for (String key : keys) {
            String value = context.config().get(key);
            if (value == null) {
                value = NativeEnvironment.get("UCX_" + key);
            }
            if (value != null) {
                try {
                    return Integer.parseInt(value.trim());
                } catch (NumberFormatException e) {
                    return -1; // not understood: no FIFO will match, and the worker goes without repair
                }
            }
        }
        return SysvReceiveFifo.DEFAULT_ELEM_SIZE;
    }

    long handle() {
        return handle;
    }

    public UcxContext context() {
        return context;
    }

    public ThreadMode threadMode() {
        return threadMode;
    }

    public String name() {
        return name;
    }

    public boolean isOpen() {
        return !closed;
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("UCX worker " + name + " is closed");
        }
    }

    // ---- progress and wake-up ------------------------------------------------------------

    /** Runs UCX's progress engine once; returns how many events it handled (0: nothing happened). */
    public int progress() {
        ensureOpen();
        int events = Ucp.ucp_worker_progress(handle);
        if (!tornCandidates.isEmpty()) {
            events += checkTornElements();
        }
        return events;
    }

    // ---- a dead sender's unwritten FIFO element ------------------------------------------

    /**
     * Tells the worker that a peer process is gone, or may be: its endpoint failed, or the
     * application learnt it otherwise (say the peer's TCP connection ended without an
     * orderly close). The binding calls it itself when an endpoint's error handler runs
     * and on every forced {@link UcxEndpoint#closeNonBlocking close}; call it also for a
     * peer that died before this worker had an endpoint to it (it may have sent already).
     *
     * <p>Why: on one host, every peer writes into this worker's one shared-memory receive
     * FIFO ({@code sysv}), and UCX 1.13 reads it strictly in order. A peer killed while
     * writing a message leaves an element taken and never marked written, and from then
     * on nothing more arrives over shared memory, from any peer (see
     * {@link SysvReceiveFifo}). So the worker notes which elements are taken and unwritten
     * now, and if one of them is still unwritten {@link #TORN_ELEMENT_GRACE_NANOS one second}
     * later (a live sender needs microseconds), the next {@link #progress()} completes it
     * as an empty message that UCX drops with a warning ({@code got active message id 0,
     * but no handler installed}); what queued behind it is delivered. The torn message
     * itself, from the dead peer, is lost, as it would be anyway.
     *
     * <p>Cheap: a look at the FIFO's control block. A worker whose FIFO was not found
     * (no {@code sysv} transport, or a UCX whose FIFO layout differs) ignores it. The
     * one risk is a sender that is alive but stopped for longer than the grace period in
     * the middle of writing into this FIFO (SIGSTOP, a debugger) while another peer
     * dies: its message would be lost, and when it resumes, the element it finishes may
     * confuse the FIFO.
     */
    public void reportDeadPeer() {
        ensureOpen();
        noteDeadPeer();
    }

    /** {@link #reportDeadPeer()} for the binding's own calls (error handler, forced close): a no-op once closed. */
    void noteDeadPeer() {
        if (fifo == null || closed) {
            return;
        }
        long due = System.nanoTime() + TORN_ELEMENT_GRACE_NANOS;
        for (long index : fifo.unwritten()) {
            // an index already waiting keeps its earlier time: more reports must not postpone a repair
            tornCandidates.putIfAbsent(index, due);
        }
        if (!tornCandidates.isEmpty()) {
            tornCheckAt = java.util.Collections.min(tornCandidates.values());
        }
    }

    /** The worker's sysv receive FIFO as the binding sees it, or null when it was not found. */
    SysvReceiveFifo receiveFifo() {
        return fifo;
    }

    /** How many FIFO elements left unwritten by dead senders this worker has completed (see {@link #reportDeadPeer}). */
    public long tornElementsCompleted() {
        return tornElementsCompleted;
    }

    /** Completes the candidates still unwritten once their grace period passed; returns how many it completed. */
    private int checkTornElements() {
        long now = System.nanoTime();
        if (now - tornCheckAt < 0) {
            return 0;
        }
        long tail = fifo.tail();
        long head = fifo.head();
        int completed = 0;
        StringBuilder which = new StringBuilder();
        for (var it = tornCandidates.entrySet().iterator(); it.hasNext();) {
            var candidate = it.next();
            if (now - candidate.getValue() < 0) {
                continue;
            }
            it.remove();
            long index = candidate.getKey();
            // below tail: read and released since; otherwise written since unless its sender is dead
            if (index >= tail && index < head && fifo.isUnwritten(index)) {
                fifo.complete(index);
                completed++;
                which.append(which.isEmpty() ? "" : ", ").append(index);
            }
        }
        if (!tornCandidates.isEmpty()) {
            tornCheckAt = java.util.Collections.min(tornCandidates.values());
        }
        if (completed > 0) {
            tornElementsCompleted += completed;
            LOG.log(Level.WARNING, "worker " + name + ": completed " + completed + " element(s) of its " + fifo
                    + " that a dead sender had taken and never written (index " + which
                    + "); messages queued behind it are delivered again");
        }
        return completed;
    }

    /**
     * The worker's event file descriptor ({@code ucp_worker_get_efd}); needs
     * {@link Feature#WAKEUP}. Poll it for readability after {@link #arm()} returned true.
     */
    public int eventFd() throws UcxException {
        ensureOpen();
        if (eventFd < 0) {
            try (Arena a = Arena.ofConfined()) {
                MemorySegment out = a.allocate(ValueLayout.JAVA_INT);
                UcxContext.check("ucp_worker_get_efd", Ucp.ucp_worker_get_efd(handle, out.address()));
                eventFd = out.get(ValueLayout.JAVA_INT, 0);
            }
        }
        return eventFd;
    }

    /**
     * Arms the event fd ({@code ucp_worker_arm}). Returns false when events are pending
     * ({@code UCS_ERR_BUSY}): progress and try again before sleeping.
     */
    public boolean arm() throws UcxException {
        ensureOpen();
        int status = Ucp.ucp_worker_arm(handle);
        if (status == UcsStatus.ERR_BUSY) {
            return false;
        }
        UcxContext.check("ucp_worker_arm", status);
        return true;
    }

    /** Wakes a thread sleeping in {@link #await()} or on the event fd. Safe from any thread. */
    public void signal() throws UcxException {
        ensureOpen();
        UcxContext.check("ucp_worker_signal", Ucp.ucp_worker_signal(handle));
    }

    /** Sleeps until the worker has an event or is signalled ({@code ucp_worker_wait}). */
    public void await() throws UcxException {
        ensureOpen();
        UcxContext.check("ucp_worker_wait", Ucp.ucp_worker_wait(handle));
    }

    /**
     * Sleeps until the event fd is readable, for at most {@code timeoutMillis}
     * (negative: no limit), with {@code poll(2)}. Call {@link #arm()} first and sleep
     * only when it returned true. Unlike {@link #await()} it is bounded, and several
     * threads may sleep on one worker at once ({@link #signal()} wakes them all). The
     * caller need not hold the worker's lock. Allocates nothing: each thread has its
     * own {@code struct pollfd}.
     *
     * @return true when the fd became readable, false on timeout or EINTR
     */
    public boolean waitForEvents(int timeoutMillis) throws UcxException {
        int fd = eventFd();
        // struct pollfd { int fd; short events; short revents; }, POLLIN = 1
        MemorySegment pollfd = POLLFD.get();
        pollfd.set(ValueLayout.JAVA_INT, 0, fd);
        pollfd.set(ValueLayout.JAVA_SHORT, 4, (short) 1);
        pollfd.set(ValueLayout.JAVA_SHORT, 6, (short) 0);
        return Ucp.poll(pollfd.address(), 1, timeoutMillis) > 0;
    }

    // one struct pollfd per thread for waitForEvents; freed by the GC with its thread
    private static final ThreadLocal<MemorySegment> POLLFD =
            ThreadLocal.withInitial(() -> Arena.ofAuto().allocate(8, 8));

    // ---- addresses and endpoints ---------------------------------------------------------

    /** This worker's address, to hand to a peer, which passes it to {@link #connect}. */
    public byte[] address() throws UcxException {
        ensureOpen();
        try (Arena a = Arena.ofConfined()) {
            MemorySegment addrOut = a.allocate(ValueLayout.JAVA_LONG);
            MemorySegment lenOut = a.allocate(ValueLayout.JAVA_LONG);
            UcxContext.check("ucp_worker_get_address",
                    Ucp.ucp_worker_get_address(handle, addrOut.address(), lenOut.address()));
            long address = addrOut.get(ValueLayout.JAVA_LONG, 0);
            long length = lenOut.get(ValueLayout.JAVA_LONG, 0);
            try {
                return MemorySegment.ofAddress(address).reinterpret(length).toArray(ValueLayout.JAVA_BYTE);
            } finally {
                Ucp.ucp_worker_release_address(handle, address);
            }
        }
    }

    /** An endpoint to the worker whose {@link #address()} is given, without an error handler. */
    public UcxEndpoint connect(byte[] remoteAddress, ErrorMode mode) throws UcxException {
        return connect(remoteAddress, mode, null);
    }

    /**
     * An endpoint to the worker whose {@link #address()} is given ({@code ucp_ep_create}).
     *
     * <p>UCX trusts worker addresses: it takes no length, and an address that is
     * corrupted but well-formed can still abort or crash the process inside UCX. So an
     * address must come from the peer over a channel that delivers it intact (length-
     * checked). What the binding catches: an empty address, an unknown format version
     * (UCX 1.13 aborts the process on one), and truncation (the copy is followed by
     * zeros, which UCX's parser rejects, instead of whatever memory follows).
     *
     * @param handler called from {@link #progress()} when the endpoint fails; only with {@link ErrorMode#PEER}
     * @throws UcxException when the address is refused, by the binding or by UCX
     */
    public UcxEndpoint connect(byte[] remoteAddress, ErrorMode mode, UcxErrorHandler handler) throws UcxException {
        ensureOpen();
        checkAddress(remoteAddress);
        UcxEndpoint endpoint = new UcxEndpoint(this, handler);
        try (Arena a = Arena.ofConfined()) {
            // zero-filled by the arena: a truncated address runs into zeros, which UCX rejects
            MemorySegment address = a.allocate(remoteAddress.length + ADDRESS_PADDING, 8);
            MemorySegment.copy(remoteAddress, 0, address, ValueLayout.JAVA_BYTE, 0, remoteAddress.length);
            MemorySegment params = a.allocate(UcpEpParams.LAYOUT);
            long mask = UcpEpParams.FIELD_REMOTE_ADDRESS | UcpEpParams.FIELD_ERR_HANDLING_MODE;
            params.set(ValueLayout.JAVA_LONG, UcpEpParams.ADDRESS, address.address());
            params.set(ValueLayout.JAVA_INT, UcpEpParams.ERR_MODE, mode.value);
            if (mode == ErrorMode.PEER) {
                mask |= UcpEpParams.FIELD_ERR_HANDLER;
                params.set(ValueLayout.JAVA_LONG, UcpEpParams.ERR_HANDLER_CB, Upcalls.ERROR_HANDLER.address());
                params.set(ValueLayout.JAVA_LONG, UcpEpParams.ERR_HANDLER_ARG, endpoint.upcallId());
            }
            params.set(ValueLayout.JAVA_LONG, UcpEpParams.FIELD_MASK, mask);
            MemorySegment out = a.allocate(ValueLayout.JAVA_LONG);
            int status = Ucp.ucp_ep_create(handle, params.address(), out.address());
            if (status != UcsStatus.OK) {
                endpoint.discard();
                throw new UcxException("ucp_ep_create", status);
            }
            endpoint.created(out.get(ValueLayout.JAVA_LONG, 0));
        }
        endpoints.add(endpoint);
        return endpoint;
    }

    /**
     * Refuses what UCX cannot take without harm: an empty address, or one whose header
     * names a format version UCX does not know ({@code ucp_address_unpack} asserts on it
     * and aborts the process).
     */
    static void checkAddress(byte[] remoteAddress) throws UcxException {
        if (remoteAddress.length == 0) {
            throw new UcxException("ucp_ep_create", UcsStatus.ERR_INVALID_ADDR, "empty worker address");
        }
        int version = remoteAddress[0] & ADDRESS_VERSION_MASK;
        if (version > MAX_ADDRESS_VERSION) {
            throw new UcxException("ucp_ep_create", UcsStatus.ERR_INVALID_ADDR,
                    "not a UCX worker address (format version " + version + ")");
        }
    }

    void forget(UcxEndpoint endpoint) {
        endpoints.remove(endpoint);
    }

    // ---- tag receive -----------------------------------------------------------------------

    /** Posts a tag receive into native memory; see {@link #tagReceive(long, long, long, long)}. */
    public long tagReceive(MemorySegment buffer, long tag, long tagMask) throws UcxException {
        return tagReceive(nativeAddress(buffer), buffer.byteSize(), tag, tagMask);
    }

    /**
     * Posts a receive for a message whose tag matches {@code tag} in the bits of
     * {@code tagMask} ({@code ucp_tag_recv_nbx}). The buffer must stay valid until the
     * request completed or was cancelled. Poll with {@link #receiveStatus(long)}.
     *
     * @return the request handle, or {@link #COMPLETED} when a matching message had
     *         already arrived: then {@link #receivedTag()} and {@link #receivedLength()}
     *         describe it right away
     */
    public long tagReceive(long address, long length, long tag, long tagMask) throws UcxException {
        ensureOpen();
        long request = track(Ucp.ucp_tag_recv_nbx(handle, address, length, tag, tagMask, receiveParam.address()),
                "ucp_tag_recv_nbx");
        if (request == COMPLETED) {
            receivedTag = recvInfo.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.SENDER_TAG);
            receivedLength = recvInfo.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.LENGTH);
        }
        return request;
    }

    /**
     * {@link #tagReceive(long, long, long, long)}, and the worker's
     * {@link #completionListener completion listener} is told {@code token} when the request
     * completes, fails or is cancelled (not when it completes inside this call and
     * {@link #COMPLETED} is returned). Allocates nothing.
     */
    public long tagReceive(long address, long length, long tag, long tagMask, int token) throws UcxException {
        ensureOpen();
        final MemorySegment param = notifyReceiveParam;
        param.set(ValueLayout.JAVA_LONG, UcpRequestParam.USER_DATA, notifyUserData(token));
        long request = track(Ucp.ucp_tag_recv_nbx(handle, address, length, tag, tagMask, param.address()),
                "ucp_tag_recv_nbx");
        if (request == COMPLETED) {
            receivedTag = recvInfo.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.SENDER_TAG);
            receivedLength = recvInfo.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.LENGTH);
        }
        return request;
    }

    /** Like {@link #tagReceive(MemorySegment, long, long)}, with a completion callback. */
    public long tagReceive(MemorySegment buffer, long tag, long tagMask, UcxCallbackHandle callback)
            throws UcxException {
        ensureOpen();
        checkOwned(callback);
        return track(Ucp.ucp_tag_recv_nbx(handle, nativeAddress(buffer), buffer.byteSize(), tag, tagMask,
                callback.receiveParam.address()), "ucp_tag_recv_nbx");
    }

    /**
     * Status of a tag receive ({@code ucp_tag_recv_request_test}). When it is
     * {@link UcsStatus#OK}, {@link #receivedTag()} and {@link #receivedLength()} describe the message.
     */
    public int receiveStatus(long request) {
        if (request == COMPLETED) {
            ensureOpen();
            return UcsStatus.OK;
        }
        ensureKnown(request);
        final MemorySegment info = recvInfo;
        int status = Ucp.ucp_tag_recv_request_test(request, info.address());
        if (status == UcsStatus.OK) {
            receivedTag = info.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.SENDER_TAG);
            receivedLength = info.get(ValueLayout.JAVA_LONG, UcpTagRecvInfo.LENGTH);
        }
        return status;
    }

    /** Sender tag of the receive last seen complete by {@link #receiveStatus(long)} or completed at once by a tagReceive. */
    public long receivedTag() {
        return receivedTag;
    }

    /** Length of the receive last seen complete by {@link #receiveStatus(long)} or completed at once by a tagReceive. */
    public long receivedLength() {
        return receivedLength;
    }

    // ---- active messages -------------------------------------------------------------------

    /**
     * Installs (or, with null, removes) the handler for active messages with this id
     * ({@code ucp_worker_set_am_recv_handler}); needs {@link Feature#AM}.
     */
    public void setAmHandler(int id, UcxAmHandler handler) throws UcxException {
        ensureOpen();
        Long previous = amHandlers.remove(id);
        long registryId = handler == null ? 0 : Upcalls.register(handler);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment p = a.allocate(UcpAmHandlerParam.LAYOUT);
            p.set(ValueLayout.JAVA_LONG, UcpAmHandlerParam.FIELD_MASK, UcpAmHandlerParam.FIELD_ID
                    | UcpAmHandlerParam.FIELD_CB | UcpAmHandlerParam.FIELD_ARG | UcpAmHandlerParam.FIELD_FLAGS);
            p.set(ValueLayout.JAVA_INT, UcpAmHandlerParam.ID, id);
            // WHOLE_MSG: one callback per message; PERSISTENT_DATA: the handler may keep eager data
            p.set(ValueLayout.JAVA_INT, UcpAmHandlerParam.FLAGS, handler == null ? 0 : 0b11);
            p.set(ValueLayout.JAVA_LONG, UcpAmHandlerParam.CB, handler == null ? 0 : Upcalls.amHandler().address());
            p.set(ValueLayout.JAVA_LONG, UcpAmHandlerParam.ARG, registryId);
            UcxContext.check("ucp_worker_set_am_recv_handler",
                    Ucp.ucp_worker_set_am_recv_handler(handle, p.address()));
        } catch (UcxException e) {
            if (handler != null) {
                Upcalls.unregister(registryId);
            }
            throw e;
        } finally {
            if (previous != null) {
                Upcalls.unregister(previous);
            }
        }
        if (handler != null) {
            amHandlers.put(id, registryId);
        }
    }

    /**
     * Fetches the payload of a rendezvous active message into {@code buffer}
     * ({@code ucp_am_recv_data_nbx}); {@code dataDescriptor} is the {@code data} the
     * handler was given, which then returned {@link UcsStatus#INPROGRESS}.
     */
    public long amReceiveData(MemorySegment dataDescriptor, MemorySegment buffer) throws UcxException {
        ensureOpen();
        return track(Ucp.ucp_am_recv_data_nbx(handle, dataDescriptor.address(), nativeAddress(buffer),
                buffer.byteSize(), DEFAULT_PARAM.address()), "ucp_am_recv_data_nbx");
    }

    /** Releases active-message data a handler kept by returning {@link UcsStatus#INPROGRESS}. */
    public void amReleaseData(MemorySegment data) {
        ensureOpen();
        Ucp.ucp_am_data_release(handle, data.address());
    }

    // ---- requests --------------------------------------------------------------------------

    /** Registers a completion callback for use with this worker's operations. */
    public UcxCallbackHandle register(UcxCallback callback) {
        ensureOpen();
        UcxCallbackHandle h = new UcxCallbackHandle(this, callback, arena);
        callbacks.add(h);
        return h;
    }

    void checkOwned(UcxCallbackHandle callback) {
        if (callback.worker != this) {
            throw new IllegalArgumentException("callback registered with another worker");
        }
    }

    /** Flushes every endpoint of this worker ({@code ucp_worker_flush_nbx}). */
    public long flush() throws UcxException {
        ensureOpen();
        return track(Ucp.ucp_worker_flush_nbx(handle, DEFAULT_PARAM.address()), "ucp_worker_flush_nbx");
    }

    /**
     * Status of a request ({@code ucp_request_check_status}): {@link UcsStatus#INPROGRESS},
     * {@link UcsStatus#OK}, or an error. {@link #COMPLETED} is always OK.
     */
    public int status(long request) {
        if (request == COMPLETED) {
            ensureOpen();
            return UcsStatus.OK;
        }
        ensureKnown(request);
        return Ucp.ucp_request_check_status(request);
    }

    /**
     * Cancels a pending request ({@code ucp_request_cancel}); it then completes with
     * {@link UcsStatus#ERR_CANCELED} at a later {@link #progress()} (or had completed already).
     */
    public void cancel(long request) {
        if (request == COMPLETED) {
            return;
        }
        ensureKnown(request);
        Ucp.ucp_request_cancel(handle, request);
    }

    /**
     * Gives a request back to UCX ({@code ucp_request_free}). Releasing a request that
     * is still in progress lets it finish in the background; for a receive, cancel it
     * first, or its buffer may still be written.
     */
    public void release(long request) {
        if (request == COMPLETED) {
            return;
        }
        ensureKnown(request);
        requests.remove(request);
        Ucp.ucp_request_free(request);
    }

    /** Number of request handles not yet released. */
    public int outstandingRequests() {
        return requests.size();
    }

    /** Number of endpoints made here and not closed yet (a diagnostic: leaks show as growth). */
    public int openEndpoints() {
        return endpoints.size();
    }

    /**
     * Progresses until the request is no longer in progress, then returns its status
     * and releases it. For set-up and tests, not the data path.
     */
    public int waitFor(long request) {
        if (request == COMPLETED) {
            return UcsStatus.OK;
        }
        int status;
        while ((status = status(request)) == UcsStatus.INPROGRESS) {
            progress();
        }
        release(request);
        return status;
    }

    long track(long statusPtr, String operation) throws UcxException {
        if (statusPtr == 0) {
            return COMPLETED;
        }
        if (UcsStatus.isErrorPointer(statusPtr)) {
            throw new UcxException(operation, (int) statusPtr);
        }
        requests.add(statusPtr);
        return statusPtr;
    }

    private void ensureKnown(long request) {
        ensureOpen();
        if (!requests.contains(request)) {
            throw new IllegalArgumentException("unknown or already released UCX request 0x" + Long.toHexString(request));
        }
    }

    static long nativeAddress(MemorySegment buffer) {
        if (!buffer.isNative()) {
            throw new IllegalArgumentException("UCX transfers need native memory, not a heap segment");
        }
        return buffer.address();
    }

    // ---- close -----------------------------------------------------------------------------

    /**
     * Closes the worker: cancels outstanding requests, force-closes its endpoints,
     * progresses (for at most two seconds) so that UCX completes them, frees every
     * request, and destroys the worker. Afterwards every call on it, its endpoints and
     * its request handles throws {@link IllegalStateException}.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        long[] pending = requests.toArray();
        for (long request : pending) {
            Ucp.ucp_request_cancel(handle, request);
        }
        for (UcxEndpoint endpoint : new ArrayList<>(endpoints)) {
            long request = endpoint.startForcedClose();
            if (request != COMPLETED) {
                requests.add(request);
            }
        }
        long deadline = System.nanoTime() + CLOSE_DRAIN_NANOS;
        long[] all = requests.toArray();
        for (long request : all) {
            while (Ucp.ucp_request_check_status(request) == UcsStatus.INPROGRESS && System.nanoTime() < deadline) {
                Ucp.ucp_worker_progress(handle);
            }
            Ucp.ucp_request_free(request);
        }
        if (all.length > 0 && LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "worker " + name + ": " + all.length + " outstanding requests cancelled and freed at close");
        }
        closed = true;
        if (fifo != null) {
            fifo.close();
        }
        for (Long id : amHandlers.values()) {
            Upcalls.unregister(id);
        }
        for (UcxCallbackHandle h : callbacks) {
            Upcalls.unregister(h.id);
        }
        if (listenerSlot != 0) {
            Upcalls.unregisterListener(listenerSlot);
        }
        Ucp.ucp_worker_destroy(handle);
        arena.close();
        context.forget(this);
    }

    @Override
    public String toString() {
        return "UcxWorker[" + name + ", " + threadMode + (closed ? ", closed]" : "]");
    }
}
