package io.hadronio.ucx;

import io.hadronio.ucx.UcpStructs.UcpMemMapParams;
import io.hadronio.ucx.UcpStructs.UcpParams;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * A UCP application context ({@code ucp_context_h}): the features asked for, UCX's
 * configuration (read from {@code UCX_*} environment variables, then modified by
 * {@link Builder#config}), and the workers and memory registrations made from it.
 * Closing it closes them too.
 */
public final class UcxContext implements AutoCloseable {
    // UCP API version the struct layouts in UcpStructs follow
    private static final int API_MAJOR = 1;
    private static final int API_MINOR = 13;

    // ucp_context_h
    private final long handle;
    // features asked for at creation
    private final Set<Feature> features;
    // configuration entries applied with ucp_config_modify
    private final Map<String, String> config;
    // workers and regions still open, closed with the context; guarded by 'this'
    private final List<AutoCloseable> children = new ArrayList<>();
    // set once by close()
    private volatile boolean closed;

    private UcxContext(long handle, Set<Feature> features, Map<String, String> config) {
        this.handle = handle;
        this.features = features;
        this.config = config;
    }

    public static Builder builder() {
        return new Builder();
    }

    /** Options for {@link UcxContext}; {@link #open()} creates it. */
    public static final class Builder {
        private final EnumSet<Feature> features = EnumSet.of(Feature.TAG);
        private final Map<String, String> config = new LinkedHashMap<>();
        private long estimatedEndpoints;
        private String name = "hadronio";

        private Builder() {
        }

        /** Features to request (default: {@link Feature#TAG}). */
        public Builder features(Feature... wanted) {
            features.clear();
            features.addAll(List.of(wanted));
            return this;
        }

        /**
         * A UCX configuration entry, without the {@code UCX_} prefix, e.g. {@code ("TLS", "tcp")}
         * or {@code ("MM_ERROR_HANDLING", "y")}. Applied after the environment is read,
         * so it wins over {@code UCX_*} variables.
         */
        public Builder config(String key, String value) {
            config.put(key, value);
            return this;
        }

        public Builder estimatedEndpoints(long count) {
            this.estimatedEndpoints = count;
            return this;
        }

        public Builder name(String contextName) {
            this.name = contextName;
            return this;
        }

        /**
         * Creates the context.
         *
         * @throws UcxUnavailableException when UCX is not installed or too old
         * @throws UcxException when UCX rejects the configuration or the initialisation
         */
        public UcxContext open() throws UcxException {
            Ucx.ensureAvailable();
            try (Arena arena = Arena.ofConfined()) {
                MemorySegment configOut = arena.allocate(ValueLayout.JAVA_LONG);
                check("ucp_config_read", Ucp.ucp_config_read(0, 0, configOut.address()));
                long cfg = configOut.get(ValueLayout.JAVA_LONG, 0);
                try {
                    for (Map.Entry<String, String> entry : config.entrySet()) {
                        int status = Ucp.ucp_config_modify(cfg, arena.allocateFrom(entry.getKey()).address(),
                                arena.allocateFrom(entry.getValue()).address());
                        if (status != UcsStatus.OK) {
                            throw new UcxException("ucp_config_modify(" + entry.getKey() + "=" + entry.getValue() + ")",
                                    status);
                        }
                    }
                    MemorySegment params = arena.allocate(UcpParams.LAYOUT);
                    long featureBits = 0;
                    for (Feature f : features) {
                        featureBits |= f.bit;
                    }
                    long mask = UcpParams.FIELD_FEATURES | UcpParams.FIELD_REQUEST_SIZE | UcpParams.FIELD_NAME;
                    params.set(ValueLayout.JAVA_LONG, UcpParams.FEATURES, featureBits);
                    params.set(ValueLayout.JAVA_LONG, UcpParams.REQUEST_SIZE, 0L);
                    params.set(ValueLayout.JAVA_LONG, UcpParams.NAME, arena.allocateFrom(name).address());
                    if (estimatedEndpoints > 0) {
                        mask |= UcpParams.FIELD_ESTIMATED_NUM_EPS;
                        params.set(ValueLayout.JAVA_LONG, UcpParams.ESTIMATED_NUM_EPS, estimatedEndpoints);
                    }
                    params.set(ValueLayout.JAVA_LONG, UcpParams.FIELD_MASK, mask);
                    MemorySegment contextOut = arena.allocate(ValueLayout.JAVA_LONG);
                    check("ucp_init", Ucp.ucp_init_version(API_MAJOR, API_MINOR, params.address(), cfg,
                            contextOut.address()));
                    return new UcxContext(contextOut.get(ValueLayout.JAVA_LONG, 0), EnumSet.copyOf(features),
                            Map.copyOf(config));
                } finally {
                    Ucp.ucp_config_release(cfg);
                }
            }
        }
    }

    static void check(String operation, int status) throws UcxException {
        if (status != UcsStatus.OK) {
            throw new UcxException(operation, status);
        }
    }

    long handle() {
        return handle;
    }

    public Set<Feature> features() {
        return EnumSet.copyOf(features);
    }

    /** The configuration entries given to the builder. */
    public Map<String, String> config() {
        return config;
    }

    /**
     * Creates a worker (a progress engine with its own resources: about ten file
     * descriptors and a few MB; share workers between connections).
     */
    public UcxWorker newWorker(ThreadMode mode, String name) throws UcxException {
        ensureOpen();
        UcxWorker worker = UcxWorker.create(this, mode, name);
        synchronized (this) {
            if (closed) {
                worker.close();
                throw new IllegalStateException("context closed");
            }
            children.add(worker);
        }
        return worker;
    }

    /**
     * Registers native memory with UCX ({@code ucp_mem_map}) so that transfers from and
     * to it need no registration on the fly.
     */
    public UcxMemoryRegion map(MemorySegment memory) throws UcxException {
        ensureOpen();
        if (!memory.isNative()) {
            throw new IllegalArgumentException("only native memory can be mapped");
        }
        long memh;
        try (Arena arena = Arena.ofConfined()) {
            MemorySegment params = arena.allocate(UcpMemMapParams.LAYOUT);
            params.set(ValueLayout.JAVA_LONG, UcpMemMapParams.FIELD_MASK,
                    UcpMemMapParams.FIELD_ADDRESS | UcpMemMapParams.FIELD_LENGTH);
            params.set(ValueLayout.JAVA_LONG, UcpMemMapParams.ADDRESS, memory.address());
            params.set(ValueLayout.JAVA_LONG, UcpMemMapParams.LENGTH, memory.byteSize());
            MemorySegment out = arena.allocate(ValueLayout.JAVA_LONG);
            check("ucp_mem_map", Ucp.ucp_mem_map(handle, params.address(), out.address()));
            memh = out.get(ValueLayout.JAVA_LONG, 0);
        }
        UcxMemoryRegion region = new UcxMemoryRegion(this, memh, memory);
        synchronized (this) {
            children.add(region);
        }
        return region;
    }

    synchronized void forget(AutoCloseable child) {
        children.remove(child);
    }

    void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("UCX context closed");
        }
    }

    public boolean isOpen() {
        return !closed;
    }

    /** Closes every worker and memory region made from this context, then the context. */
    @Override
    public void close() {
        List<AutoCloseable> remaining;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            remaining = new ArrayList<>(children);
            children.clear();
        }
        for (AutoCloseable child : remaining) {
            try {
                child.close();
            } catch (Exception e) {
                throw new IllegalStateException("closing " + child, e);
            }
        }
        Ucp.ucp_cleanup(handle);
    }
}
