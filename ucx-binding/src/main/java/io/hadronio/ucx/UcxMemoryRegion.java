package io.hadronio.ucx;

import java.lang.foreign.MemorySegment;

/** Memory registered with UCX by {@link UcxContext#map}; {@link #close()} unregisters it. */
public final class UcxMemoryRegion implements AutoCloseable {
    // the context that mapped it
    private final UcxContext context;
    // ucp_mem_h
    private final long memh;
    // the registered memory
    private final MemorySegment memory;
    // guarded by 'this'
    private boolean closed;

    UcxMemoryRegion(UcxContext context, long memh, MemorySegment memory) {
        this.context = context;
        this.memh = memh;
        this.memory = memory;
    }

    public MemorySegment memory() {
        return memory;
    }

    long handle() {
        return memh;
    }

    @Override
    public void close() throws UcxException {
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
        }
        context.forget(this);
        UcxContext.check("ucp_mem_unmap", Ucp.ucp_mem_unmap(context.handle(), memh));
    }
}
