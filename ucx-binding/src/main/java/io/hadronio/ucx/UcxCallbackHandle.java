package io.hadronio.ucx;

import io.hadronio.ucx.UcpStructs.UcpRequestParam;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * A {@link UcxCallback} made ready for use with one worker: the two
 * {@code ucp_request_param_t} structs (send and tag receive) that name it, built once.
 * Pass it to the callback overloads of {@link UcxEndpoint#tagSend} and
 * {@link UcxWorker#tagReceive}. Released with its worker.
 */
public final class UcxCallbackHandle {
    // the registry id that the native user_data carries
    final long id;
    // param for send operations (cb.send)
    final MemorySegment sendParam;
    // param for tag receives (cb.recv)
    final MemorySegment receiveParam;
    // the worker it belongs to
    final UcxWorker worker;

    UcxCallbackHandle(UcxWorker worker, UcxCallback callback, Arena arena) {
        this.worker = worker;
        this.id = Upcalls.register(callback);
        this.sendParam = param(arena, Upcalls.sendComplete(), id);
        this.receiveParam = param(arena, Upcalls.receiveComplete(), id);
    }

    private static MemorySegment param(Arena arena, MemorySegment stub, long userData) {
        MemorySegment p = arena.allocate(UcpRequestParam.LAYOUT);
        p.set(ValueLayout.JAVA_INT, UcpRequestParam.OP_ATTR_MASK,
                UcpRequestParam.FIELD_CALLBACK | UcpRequestParam.FIELD_USER_DATA);
        p.set(ValueLayout.JAVA_LONG, UcpRequestParam.CB, stub.address());
        p.set(ValueLayout.JAVA_LONG, UcpRequestParam.USER_DATA, userData);
        return p;
    }
}
