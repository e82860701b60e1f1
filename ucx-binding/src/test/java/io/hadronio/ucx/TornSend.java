package io.hadronio.ucx;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;

/**
 * A tagged send that never finishes writing: the message is described by a UCX generic
 * datatype ({@code ucp_dt_create_generic}) whose {@code pack} callback runs {@link #inPack}
 * and then blocks forever. UCX calls {@code pack} from inside the transport's
 * {@code am_bcopy} — for shared memory ({@code sysv}, {@code posix}) after the sender has
 * taken an element of the receiver's FIFO and before it marks the element written. A
 * process killed while blocked here dies exactly where an unlucky {@code SIGKILL} lands
 * one time in a few hundred early kills (docs/crash-isolation.md): with a FIFO element of
 * the receiver claimed and never completed.
 *
 * <p>Test code only; it calls libucp through the binding's downcall helper.
 */
final class TornSend {
    /** Larger than a FIFO element's inline data (so UCX uses {@code am_bcopy}), smaller than the rendezvous threshold. */
    static final int SIZE = 4096;

    private static final MethodHandle CREATE_GENERIC = NativeLibraries.downcall("ucp_dt_create_generic",
            FunctionDescriptor.of(UcsStatus.LAYOUT, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    private static final MethodHandle TAG_SEND = NativeLibraries.downcall("ucp_tag_send_nbx",
            FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG));
    // UCP_OP_ATTR_FIELD_DATATYPE
    private static final int FIELD_DATATYPE = 1 << 3;

    private static volatile Runnable inPack;

    private TornSend() {
    }

    /**
     * Sends {@link #SIZE} bytes with this tag on the endpoint; when UCX packs them,
     * {@code onPack} runs and the calling thread blocks forever. Returns only if UCX did
     * not pack inside the call (then the send is queued and packs at a later progress).
     */
    static long send(UcxEndpoint endpoint, long tag, Runnable onPack) throws Throwable {
        inPack = onPack;
        Arena arena = Arena.global();
        // ucp_generic_dt_ops_t: start_pack, start_unpack, packed_size, pack, unpack, finish
        MemorySegment ops = arena.allocate(6 * 8L, 8);
        ops.set(JAVA_LONG, 0, stub("startPack", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG)));
        ops.set(JAVA_LONG, 8, stub("startUnpack", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG)));
        ops.set(JAVA_LONG, 16, stub("packedSize", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG)));
        ops.set(JAVA_LONG, 24, stub("pack", FunctionDescriptor.of(JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_LONG,
                JAVA_LONG)));
        ops.set(JAVA_LONG, 32, stub("unpack", FunctionDescriptor.of(UcsStatus.LAYOUT, JAVA_LONG, JAVA_LONG,
                JAVA_LONG, JAVA_LONG)));
        ops.set(JAVA_LONG, 40, stub("finish", FunctionDescriptor.ofVoid(JAVA_LONG)));
        MemorySegment datatype = arena.allocate(JAVA_LONG);
        int status = (byte) CREATE_GENERIC.invokeExact(ops.address(), 0L, datatype.address());
        if (status != UcsStatus.OK) {
            throw new UcxException("ucp_dt_create_generic", status);
        }
        MemorySegment param = arena.allocate(UcpStructs.UcpRequestParam.LAYOUT);
        param.set(java.lang.foreign.ValueLayout.JAVA_INT, UcpStructs.UcpRequestParam.OP_ATTR_MASK, FIELD_DATATYPE);
        param.set(JAVA_LONG, UcpStructs.UcpRequestParam.LAYOUT.byteOffset(
                java.lang.foreign.MemoryLayout.PathElement.groupElement("datatype")), datatype.get(JAVA_LONG, 0));
        MemorySegment buffer = arena.allocate(SIZE, 8);
        long ep = endpoint.nativeHandle();
        return (long) TAG_SEND.invokeExact(ep, buffer.address(), 1L, tag, param.address());
    }

    private static long stub(String method, FunctionDescriptor descriptor) throws ReflectiveOperationException {
        MethodHandle target = MethodHandles.lookup().findStatic(TornSend.class, method, descriptor.toMethodType());
        return NativeLibraries.LINKER.upcallStub(target, descriptor, Arena.global()).address();
    }

    @SuppressWarnings("unused") // upcall
    private static long startPack(long context, long buffer, long count) {
        return 1; // any non-null state
    }

    @SuppressWarnings("unused") // upcall
    private static long startUnpack(long context, long buffer, long count) {
        return 1;
    }

    @SuppressWarnings("unused") // upcall
    private static long packedSize(long state) {
        return SIZE;
    }

    @SuppressWarnings("unused") // upcall: inside the transport's am_bcopy, with the receiver's FIFO element taken
    private static long pack(long state, long offset, long dest, long maxLength) {
        try {
            inPack.run();
        } catch (Throwable t) {
            t.printStackTrace();
        }
        while (true) {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException ignored) {
                // keep blocking: this thread must never finish the write
            }
        }
    }

    @SuppressWarnings("unused") // upcall
    private static byte unpack(long state, long offset, long src, long length) {
        return (byte) UcsStatus.OK;
    }

    @SuppressWarnings("unused") // upcall
    private static void finish(long state) {
    }
}
