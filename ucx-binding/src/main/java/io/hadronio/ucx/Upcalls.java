package io.hadronio.ucx;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The native callbacks UCX may call, each one static stub for the whole JVM. UCX
 * hands back an opaque {@code void *arg}/{@code user_data}, which here is the id of a
 * Java target in {@link #TARGETS}; so no stub is made per endpoint or request.
 *
 * <p>Every stub has one of the shared descriptors of {@link WordCalls}: a {@code ucs_status_t}
 * argument (one byte) arrives in a 64-bit word of which only the low byte is defined, so the
 * target casts it to {@code byte} first; a status returned is read by UCX from the low byte.
 *
 * <p>An exception escaping an upcall kills the JVM, so every stub catches and logs.
 * Upcalls only happen inside non-critical downcalls (progress, send, close).
 */
final class Upcalls {
    private static final Logger LOG = System.getLogger(Upcalls.class.getName());

    // id -> UcxEndpoint / UcxAmHandler / UcxCallback
    private static final ConcurrentHashMap<Long, Object> TARGETS = new ConcurrentHashMap<>();
    private static final AtomicLong NEXT_ID = new AtomicLong(1);

    /** {@snippet lang=c : void (*ucp_err_handler_cb_t)(void *arg, ucp_ep_h ep, ucs_status_t status); } */
    static final MemorySegment ERROR_HANDLER = stub("onEndpointError",
            WordCalls.noResult(3));
    // The stubs below are made at their first use, each in a holder class: hadroNIO's provider uses
    // none of them (only the error handler and the notifying completions above and below), and a
    // stub costs a JVM generated classes, their garbage and their compilation at start-up (the
    // active-message stub a call shape of its own)

    /** {@snippet lang=c : ucs_status_t (*ucp_am_recv_callback_t)(void *arg, const void *header, size_t header_length, void *data, size_t length, const ucp_am_recv_param_t *param); } */
    static MemorySegment amHandler() {
        return AmHandler.STUB;
    }

    /** {@snippet lang=c : void (*ucp_send_nbx_callback_t)(void *request, ucs_status_t status, void *user_data); } */
    static MemorySegment sendComplete() {
        return Completions.SEND;
    }

    /** {@snippet lang=c : void (*ucp_tag_recv_nbx_callback_t)(void *request, ucs_status_t status, const ucp_tag_recv_info_t *tag_info, void *user_data); } */
    static MemorySegment receiveComplete() {
        return Completions.RECEIVE;
    }

    private static final class AmHandler {
        static final MemorySegment STUB = stub("onActiveMessage", WordCalls.word(6));
    }

    private static final class Completions {
        static final MemorySegment SEND = stub("onSendComplete", WordCalls.noResult(3));
        static final MemorySegment RECEIVE = stub("onReceiveComplete", WordCalls.noResult(4));
    }

    /** {@snippet lang=c : void (*ucp_send_nbx_callback_t)(void *request, ucs_status_t status, void *user_data); } */
    static final MemorySegment SEND_NOTIFY = stub("onSendNotify",
            WordCalls.noResult(3));
    /** {@snippet lang=c : void (*ucp_tag_recv_nbx_callback_t)(void *request, ucs_status_t status, const ucp_tag_recv_info_t *tag_info, void *user_data); } */
    static final MemorySegment RECEIVE_NOTIFY = stub("onReceiveNotify",
            WordCalls.noResult(4));

    // completion listeners by slot: user_data of a notifying request is (slot << 32 | token).
    // An array, not the TARGETS map: the notify upcalls run on the data path and must not box.
    // Replaced by a bigger copy when full (under LISTENER_LOCK); readers take the current one.
    private static volatile UcxCompletionListener[] listeners = new UcxCompletionListener[8];
    private static final Object LISTENER_LOCK = new Object();

    private Upcalls() {
    }

    /** A slot for {@code listener}; user_data {@code slot << 32 | token} reaches it. */
    static int registerListener(UcxCompletionListener listener) {
        synchronized (LISTENER_LOCK) {
            UcxCompletionListener[] a = listeners;
            for (int i = 1; i < a.length; i++) {
                if (a[i] == null) {
                    a[i] = listener;
                    listeners = a; // publish the store to the upcalls' volatile read
                    return i;
                }
            }
            UcxCompletionListener[] bigger = java.util.Arrays.copyOf(a, a.length * 2);
            bigger[a.length] = listener;
            listeners = bigger;
            return a.length;
        }
    }

    static void unregisterListener(int slot) {
        synchronized (LISTENER_LOCK) {
            UcxCompletionListener[] a = listeners;
            a[slot] = null;
            listeners = a;
        }
    }

    private static MemorySegment stub(String method, FunctionDescriptor descriptor) {
        return stub(MethodHandles.lookup(), method, descriptor);
    }

    /**
     * A stub for the JVM's life that calls the static {@code method} of {@code lookup}'s class
     * (which the lookup must reach, so a class passes its own) with {@code descriptor}.
     */
    static MemorySegment stub(MethodHandles.Lookup lookup, String method, FunctionDescriptor descriptor) {
        try {
            var handle = lookup.findStatic(lookup.lookupClass(), method, descriptor.toMethodType());
            return NativeLibraries.LINKER.upcallStub(handle, descriptor, Arena.global());
        } catch (ReflectiveOperationException e) {
            throw new AssertionError(method, e);
        }
    }

    static long register(Object target) {
        long id = NEXT_ID.getAndIncrement();
        TARGETS.put(id, target);
        return id;
    }

    static void unregister(long id) {
        TARGETS.remove(id);
    }

    /** Targets registered and not unregistered yet. */
    static int registered() {
        return TARGETS.size();
    }

    @SuppressWarnings("unused") // called from native code
    private static void onEndpointError(long arg, long ep, long status) {
        try {
            if (TARGETS.get(arg) instanceof UcxEndpoint endpoint) {
                endpoint.failed((byte) status);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "endpoint error handler threw", t);
        }
    }

    @SuppressWarnings("unused") // called from native code
    private static long onActiveMessage(long arg, long header, long headerLength, long data, long length, long param) {
        try {
            if (TARGETS.get(arg) instanceof UcxAmHandler handler) {
                long attr = MemorySegment.ofAddress(param)
                        .reinterpret(UcpStructs.UcpAmRecvParam.LAYOUT.byteSize())
                        .get(JAVA_LONG, UcpStructs.UcpAmRecvParam.RECV_ATTR);
                return handler.onMessage(MemorySegment.ofAddress(header).reinterpret(headerLength),
                        MemorySegment.ofAddress(data).reinterpret(length), attr);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "active message handler threw", t);
        }
        return UcsStatus.OK;
    }

    @SuppressWarnings("unused") // called from native code
    private static void onSendComplete(long request, long status, long userData) {
        try {
            if (TARGETS.get(userData) instanceof UcxCallback callback) {
                callback.onComplete(request, (byte) status, 0, 0);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "send completion callback threw", t);
        }
    }

    @SuppressWarnings("unused") // called from native code
    private static void onSendNotify(long request, long status, long userData) {
        notifyListener(userData);
    }

    @SuppressWarnings("unused") // called from native code
    private static void onReceiveNotify(long request, long status, long info, long userData) {
        notifyListener(userData);
    }

    private static void notifyListener(long userData) {
        try {
            UcxCompletionListener[] a = listeners;
            int slot = (int) (userData >>> 32);
            UcxCompletionListener l = slot < a.length ? a[slot] : null;
            if (l != null) {
                l.completed((int) userData);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "completion listener threw", t);
        }
    }

    @SuppressWarnings("unused") // called from native code
    private static void onReceiveComplete(long request, long status, long info, long userData) {
        try {
            if (TARGETS.get(userData) instanceof UcxCallback callback) {
                MemorySegment i = MemorySegment.ofAddress(info).reinterpret(UcpStructs.UcpTagRecvInfo.LAYOUT.byteSize());
                long tag = info == 0 ? 0 : i.get(JAVA_LONG, UcpStructs.UcpTagRecvInfo.SENDER_TAG);
                long length = info == 0 ? 0 : i.get(JAVA_LONG, UcpStructs.UcpTagRecvInfo.LENGTH);
                callback.onComplete(request, (byte) status, tag, length);
            }
        } catch (Throwable t) {
            LOG.log(Level.ERROR, "receive completion callback threw", t);
        }
    }

}
