package io.hadronio.ucx;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A connection to a remote worker ({@code ucp_ep_h}), made by {@link UcxWorker#connect}.
 * Same threading rules as its worker. Sends return a request handle of the worker, or
 * {@link UcxWorker#COMPLETED}.
 */
public final class UcxEndpoint implements AutoCloseable {
    // a lane line of ucp_ep_print_info, e.g. "lane[0]:  3:sysv/memory.0 md[3] ..."
    private static final Pattern LANE = Pattern.compile("lane\\[\\d+\\]:\\s+\\d+:([\\w-]+)/([\\w.:-]+)");
    // how long close() waits for a flushing close before forcing it
    private static final long FLUSH_CLOSE_NANOS = TimeUnit.SECONDS.toNanos(5);

    // the worker it lives on
    private final UcxWorker worker;
    // error handler given at creation, may be null
    private final UcxErrorHandler errorHandler;
    // id under which the native error handler finds this endpoint
    private final long upcallId;
    // ucp_ep_h; 0 until created
    private long handle;
    // first error reported by UCX's error handler, 0 while healthy
    private volatile int errorStatus;
    // set once close starts; checked by every send
    private volatile boolean closed;
    // the lanes' transports and "transport/device" pairs, parsed once from ucp_ep_print_info
    // (parsedLanes): that call formats the whole configuration, 130-400 us here, and every connection
    // to the same peer worker shares this endpoint and asks once
    private volatile Lanes lanes;

    /** What {@link #transports()} and {@link #lanes()} answer, from one {@link #info()}. */
    record Lanes(Set<String> transports, Set<String> pairs) {
        /** The lane lines of a {@code ucp_ep_print_info} text. */
        static Lanes parse(String info) {
            Set<String> names = new TreeSet<>();
            Set<String> pairs = new TreeSet<>();
            Matcher m = LANE.matcher(info);
            while (m.find()) {
                names.add(m.group(1));
                pairs.add(m.group(1) + "/" + m.group(2).replaceAll("\\.\\d+$", ""));
            }
            return new Lanes(java.util.Collections.unmodifiableSet(names), java.util.Collections.unmodifiableSet(pairs));
        }
    }

    UcxEndpoint(UcxWorker worker, UcxErrorHandler errorHandler) {
        this.worker = worker;
        this.errorHandler = errorHandler;
        this.upcallId = Upcalls.register(this);
    }

    long upcallId() {
        return upcallId;
    }

    void created(long ep) {
        this.handle = ep;
    }

    void discard() {
        Upcalls.unregister(upcallId);
    }

    /** Called from the native error handler during progress. */
    void failed(int status) {
        if (errorStatus == 0) {
            errorStatus = status;
            // the peer may have died in the middle of writing into the worker's receive FIFO
            worker.noteDeadPeer();
        }
        if (errorHandler != null) {
            errorHandler.onError(this, status);
        }
    }

    public UcxWorker worker() {
        return worker;
    }

    /** The first error UCX reported for this endpoint (peer failure), or 0. */
    public int errorStatus() {
        return errorStatus;
    }

    public boolean isOpen() {
        return !closed && worker.isOpen();
    }

    /** The native {@code ucp_ep_h}, for tests in this package that call libucp directly. */
    long nativeHandle() {
        return handle;
    }

    private long ensureUsable(String operation) throws UcxException {
        if (closed || !worker.isOpen()) {
            throw new UcxException(operation, UcsStatus.ERR_NOT_CONNECTED, "endpoint closed");
        }
        int error = errorStatus;
        if (error != 0) {
            throw new UcxException(operation, error);
        }
        return handle;
    }

    // ---- sends -------------------------------------------------------------------------------

    /** Sends native memory as one tagged message; see {@link #tagSend(long, long, long)}. */
    public long tagSend(MemorySegment buffer, long tag) throws UcxException {
        return tagSend(UcxWorker.nativeAddress(buffer), buffer.byteSize(), tag);
    }

    /**
     * Sends {@code length} bytes at {@code address} as one message with this tag
     * ({@code ucp_tag_send_nbx}). The memory must stay unchanged until the request completed.
     *
     * @return {@link UcxWorker#COMPLETED}, or a request handle to poll and release
     */
    public long tagSend(long address, long length, long tag) throws UcxException {
        long ep = ensureUsable("ucp_tag_send_nbx");
        return worker.track(Ucp.ucp_tag_send_nbx(ep, address, length, tag, UcxWorker.DEFAULT_PARAM.address()),
                "ucp_tag_send_nbx");
    }

    /**
     * {@link #tagSend(long, long, long)}, and the worker's
     * {@link UcxWorker#completionListener completion listener} is told {@code token} when the
     * request completes or fails (not when it completes inside this call and
     * {@link UcxWorker#COMPLETED} is returned). Allocates nothing.
     */
    public long tagSend(long address, long length, long tag, int token) throws UcxException {
        return tagSend(address, length, tag, token, false);
    }

    /**
     * {@link #tagSend(long, long, long, int)}; {@code expedited} asks UCX to finish the send locally
     * first ({@code UCP_OP_ATTR_FLAG_FAST_CMPL}): UCX copies the message out (eager) up to its
     * larger, local-completion threshold (256 KiB over shared memory in UCX 1.13) instead of handing
     * the peer a rendezvous for it above ~8 KiB, so the message needs no fetch by the peer and no
     * acknowledgement back. Allocates nothing.
     */
    public long tagSend(long address, long length, long tag, int token, boolean expedited) throws UcxException {
        long ep = ensureUsable("ucp_tag_send_nbx");
        final MemorySegment param = expedited ? worker.notifyExpeditedSendParam : worker.notifySendParam;
        param.set(ValueLayout.JAVA_LONG, UcpStructs.UcpRequestParam.USER_DATA, worker.notifyUserData(token));
        return worker.track(Ucp.ucp_tag_send_nbx(ep, address, length, tag, param.address()), "ucp_tag_send_nbx");
    }

    /** Like {@link #tagSend(MemorySegment, long)}, with a completion callback. */
    public long tagSend(MemorySegment buffer, long tag, UcxCallbackHandle callback) throws UcxException {
        long ep = ensureUsable("ucp_tag_send_nbx");
        worker.checkOwned(callback);
        return worker.track(Ucp.ucp_tag_send_nbx(ep, UcxWorker.nativeAddress(buffer), buffer.byteSize(), tag,
                callback.sendParam.address()), "ucp_tag_send_nbx");
    }

    /**
     * Sends an active message ({@code ucp_am_send_nbx}): {@code header} (small, copied
     * by UCX) and {@code data}, to the handler the peer installed for {@code id}.
     */
    public long amSend(int id, MemorySegment header, MemorySegment data) throws UcxException {
        long ep = ensureUsable("ucp_am_send_nbx");
        long headerAddress = header.byteSize() == 0 ? 0 : UcxWorker.nativeAddress(header);
        long dataAddress = data.byteSize() == 0 ? 0 : UcxWorker.nativeAddress(data);
        return worker.track(Ucp.ucp_am_send_nbx(ep, id, headerAddress, header.byteSize(), dataAddress,
                data.byteSize(), UcxWorker.DEFAULT_PARAM.address()), "ucp_am_send_nbx");
    }

    /** Completes when everything sent on this endpoint has completed remotely ({@code ucp_ep_flush_nbx}). */
    public long flush() throws UcxException {
        long ep = ensureUsable("ucp_ep_flush_nbx");
        return worker.track(Ucp.ucp_ep_flush_nbx(ep, UcxWorker.DEFAULT_PARAM.address()), "ucp_ep_flush_nbx");
    }

    // ---- introspection ------------------------------------------------------------------------

    /** What {@code ucp_ep_print_info} prints: the endpoint's configuration and lanes. */
    public String info() {
        long ep = handle;
        if (closed || !worker.isOpen()) {
            throw new IllegalStateException("endpoint closed");
        }
        try (Arena a = Arena.ofConfined()) {
            MemorySegment bufOut = a.allocate(ValueLayout.JAVA_LONG);
            MemorySegment sizeOut = a.allocate(ValueLayout.JAVA_LONG);
            long file = Ucp.open_memstream(bufOut.address(), sizeOut.address());
            if (file == 0) {
                throw new IllegalStateException("open_memstream failed");
            }
            Ucp.ucp_ep_print_info(ep, file);
            Ucp.fclose(file);
            long text = bufOut.get(ValueLayout.JAVA_LONG, 0);
            long size = sizeOut.get(ValueLayout.JAVA_LONG, 0);
            try {
                return MemorySegment.ofAddress(text).reinterpret(size + 1).getString(0);
            } finally {
                Ucp.free(text);
            }
        }
    }

    /**
     * The transports of the endpoint's lanes, e.g. {@code [cma, sysv]} for shared memory
     * on one host, or {@code [tcp]}: the names before the '/' in the lane lines of {@link #info()}.
     * Read once: an endpoint made from a worker address has its lanes from its creation on
     * (UcxLoopbackTest checks that they are the same after traffic, on shared memory and tcp).
     */
    public Set<String> transports() {
        return parsedLanes().transports();
    }

    /** The lanes as "transport/device" pairs, e.g. {@code [cma/memory, sysv/memory]}; read once, as {@link #transports()}. */
    public Set<String> lanes() {
        return parsedLanes().pairs();
    }

    private Lanes parsedLanes() {
        Lanes l = lanes;
        if (l == null) {
            l = Lanes.parse(info());
            lanes = l;
        }
        return l;
    }

    // ---- close --------------------------------------------------------------------------------

    /**
     * Starts closing ({@code ucp_ep_close_nbx}): flushing (outstanding sends complete
     * first) or forced. Returns a request of the worker, or {@link UcxWorker#COMPLETED}.
     *
     * @throws UcxException when UCX refuses, and the endpoint stays open: UCX 1.13 refuses
     *         a forced close ({@code UCS_ERR_INVALID_PARAM}) unless the endpoint was created
     *         with {@link ErrorMode#PEER}
     */
    public long closeNonBlocking(boolean force) throws UcxException {
        if (closed) {
            return UcxWorker.COMPLETED;
        }
        if (!worker.isOpen()) {
            throw new IllegalStateException("worker closed");
        }
        long param = force ? UcxWorker.FORCE_CLOSE_PARAM.address() : UcxWorker.DEFAULT_PARAM.address();
        long request = Ucp.ucp_ep_close_nbx(handle, param);
        if (UcsStatus.isErrorPointer(request)) {
            throw new UcxException("ucp_ep_close_nbx" + (force ? " (forced)" : ""), (int) request);
        }
        closed = true;
        worker.forget(this);
        Upcalls.unregister(upcallId);
        if (force) {
            // forced: the peer is gone or unwanted, and may have died while writing into the worker's FIFO
            worker.noteDeadPeer();
        }
        return worker.track(request, "ucp_ep_close_nbx");
    }

    /**
     * Forced close for the worker's own close: returns the raw request, untracked. UCX
     * 1.13 refuses it for endpoints not in {@link ErrorMode#PEER}; those are destroyed
     * by {@code ucp_worker_destroy}.
     */
    long startForcedClose() {
        closed = true;
        Upcalls.unregister(upcallId);
        long request = Ucp.ucp_ep_close_nbx(handle, UcxWorker.FORCE_CLOSE_PARAM.address());
        return UcsStatus.isRequestPointer(request) ? request : UcxWorker.COMPLETED;
    }

    /**
     * Closes the endpoint, progressing its worker: a flushing close (sends complete
     * first), or a forced one after an error. If a flushing close has not finished within
     * five seconds (a dead peer), its request is handed back to UCX, which finishes it in
     * the background or when the worker closes (UCX 1.13 refuses to force a close that
     * is already flushing).
     */
    @Override
    public void close() throws UcxException {
        if (closed || !worker.isOpen()) {
            return;
        }
        long request = closeNonBlocking(errorStatus != 0);
        if (request == UcxWorker.COMPLETED) {
            return;
        }
        long deadline = System.nanoTime() + FLUSH_CLOSE_NANOS;
        while (worker.status(request) == UcsStatus.INPROGRESS && System.nanoTime() < deadline) {
            worker.progress();
        }
        // still in progress after the deadline (dead peer): released all the same, UCX finishes it
        worker.release(request);
    }

    @Override
    public String toString() {
        return "UcxEndpoint[" + Long.toHexString(handle) + (closed ? ", closed]" : "]");
    }
}
