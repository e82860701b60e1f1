package io.hadronio.ucx;

import io.hadronio.ucx.UcpStructs.UcpMemMapParams;
import io.hadronio.ucx.UcpStructs.UcpParams;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A UCP application context ({@code ucp_context_h}): the features asked for, UCX's
 * configuration (read from {@code UCX_*} environment variables, then modified by
 * {@link Builder#config}), and the workers and memory registrations made from it.
 * Closing it closes them too.
 */
public final class UcxContext implements AutoCloseable {
    // the environment variable that lets PEER endpoints use cma; see Builder.peerFailureDetection
    static final String CMA_MEMORY_INVALIDATE = "UCX_CMA_MEMORY_INVALIDATE";
    // UCP API version the struct layouts in UcpStructs follow
    private static final int API_MAJOR = 1;
    private static final int API_MINOR = 13;

    // ucp_context_h
    private final long handle;
    // features asked for at creation
    private final Set<Feature> features;
    // configuration entries applied with ucp_config_modify
    private final Map<String, String> config;
    // keepalive interval of peerFailureDetection, null when not asked for
    private final Duration peerFailureDetection;
    // whether PEER endpoints may use cma (UCX_CMA_MEMORY_INVALIDATE=y in the environment at creation)
    private final boolean cmaWithPeerErrorHandling;
    // workers and regions still open, closed with the context; guarded by 'this'
    private final List<AutoCloseable> children = new ArrayList<>();
    // the shared-memory geometry part of the endpoint profile (sharedMemoryGeometry), fixed at creation
    private final String geometry;
    // set once by close()
    private volatile boolean closed;

    private UcxContext(long handle, Set<Feature> features, Map<String, String> config, Duration peerFailureDetection,
            boolean cmaWithPeerErrorHandling) {
        this.handle = handle;
        this.features = features;
        this.config = config;
        this.peerFailureDetection = peerFailureDetection;
        this.cmaWithPeerErrorHandling = cmaWithPeerErrorHandling;
        this.geometry = sharedMemoryGeometry();
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
        private Duration peerFailureDetection;

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

        /**
         * Lets endpoints in {@link ErrorMode#PEER} keep the shared-memory transports of
         * error mode NONE ({@code sysv} + {@code cma} on one host) and turn a peer that
         * died at any moment into errors instead of an abort. What UCX 1.13 needs for it
         * (measured in {@code docs/crash-isolation.md}):
         *
         * <ul>
         * <li>{@code MM_ERROR_HANDLING=y}: {@code sysv}/{@code posix} advertise peer-failure
         *     handling only with it; without it a PEER endpoint runs on {@code tcp};
         * <li>{@code UCX_CMA_MEMORY_INVALIDATE=y} in the process environment: a PEER
         *     endpoint takes {@code cma} for rendezvous only from a memory domain that
         *     claims memory invalidation; without it large messages go through the
         *     {@code sysv} FIFO (slower and far less steady, and sends to a dead peer may
         *     stay in progress for good). {@code ucp_config_modify} cannot set
         *     this key (UCX drops it with a warning), so {@link #open()} sets the variable
         *     in the native environment unless it is set already (a user's {@code n} wins);
         * <li>{@code KEEPALIVE_INTERVAL}: how often UCX checks that the peer processes of
         *     shared-memory endpoints still exist. A rendezvous transfer over {@code cma}
         *     fails at once when its peer is gone; everything else (an idle endpoint,
         *     eager messages into the {@code sysv} FIFO) is noticed by the keepalive, in
         *     about one to two intervals. UCX's default is 20 s.
         * </ul>
         *
         * <p>Both sides of a connection must be configured alike (compare
         * {@link UcxContext#endpointProfile} before connecting): against a peer without it,
         * transfers fail or hang, and a peer with {@code MM_ERROR_HANDLING} but without
         * {@code cma} aborts this process at wire-up. A dead peer is reported to the
         * endpoint's {@link UcxErrorHandler}, its sends complete with an error, and a receive
         * that a dead peer's message was being delivered into completes with an error;
         * receives that no message matched yet stay posted (tag receives belong to the
         * worker) and must be cancelled. UCX does not always report a peer that dies before
         * any of the endpoint's rendezvous sends completed (the sends then stay in
         * progress): an application that learns of the death otherwise (e.g. its TCP
         * connection to the peer ended) should force-close the endpoint
         * ({@link UcxEndpoint#closeNonBlocking}{@code (true)}), which completes them.
         *
         * @param keepaliveInterval UCX's {@code KEEPALIVE_INTERVAL}, at least 1 ms; or
         *        {@link Duration#ZERO}: no keepalive ({@code inf}), so that only a transfer
         *        that fails, or a forced close by the application (e.g. when its own control
         *        connection to the peer broke), reports a dead peer
         */
        public Builder peerFailureDetection(Duration keepaliveInterval) {
            if (keepaliveInterval.isNegative()
                    || (!keepaliveInterval.isZero() && keepaliveInterval.compareTo(Duration.ofMillis(1)) < 0)) {
                throw new IllegalArgumentException("keepalive interval neither 0 (off) nor at least 1 ms: "
                        + keepaliveInterval);
            }
            config.put("MM_ERROR_HANDLING", "y");
            config.put("KEEPALIVE_INTERVAL",
                    keepaliveInterval.isZero() ? "inf" : keepaliveInterval.toNanos() / 1000 + "us");
            this.peerFailureDetection = keepaliveInterval;
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
            // UCX reads the environment while it creates the context: no setenv may run meanwhile
            synchronized (NativeEnvironment.LOCK) {
                boolean cma = "y".equalsIgnoreCase(peerFailureDetection != null
                        ? NativeEnvironment.setIfAbsent(CMA_MEMORY_INVALIDATE, "y")
                        : NativeEnvironment.get(CMA_MEMORY_INVALIDATE));
                return open(cma);
            }
        }

        private UcxContext open(boolean cmaWithPeerErrorHandling) throws UcxException {
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
                            Map.copyOf(config), peerFailureDetection, cmaWithPeerErrorHandling);
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

    /**
     * The configuration entries given to the builder, including those
     * {@link Builder#peerFailureDetection} adds.
     */
    public Map<String, String> config() {
        return config;
    }

    /**
     * The keepalive interval given to {@link Builder#peerFailureDetection} (zero: no
     * keepalive), or null when it was not used.
     */
    public Duration peerFailureDetection() {
        return peerFailureDetection;
    }

    /**
     * The settings of this context that decide which lanes UCX gives an endpoint in this
     * error mode, as a short text: {@code none}; or for PEER {@code peer}, with
     * {@code +mm} when shared memory offers peer-failure handling ({@code MM_ERROR_HANDLING},
     * from the builder or the environment) and {@code +cma} when {@code cma} may carry
     * rendezvous ({@link #cmaWithPeerErrorHandling()}).
     *
     * <p>Both ends of a connection must have equal profiles, and an application should
     * compare them (e.g. in its handshake) before it creates the endpoint. UCX 1.13 does
     * not cope with a difference: with one end in NONE and the other in PEER, rendezvous
     * messages fail ({@code UCS_ERR_UNSUPPORTED}) or never complete; with {@code peer+mm+cma}
     * against {@code peer+mm}, the wire-up message of the other end aborts the process
     * ({@code Fatal: endpoint reconfiguration not supported yet}). The shared-memory geometry
     * set in the configuration or the environment is covered too ({@link #sharedMemoryGeometry}).
     * Other settings the binding does not make (e.g. {@code UCX_TLS}) are not covered.
     */
    public String endpointProfile(ErrorMode mode) {
        if (mode == ErrorMode.NONE) {
            return "none" + geometry;
        }
        String mm = setting("MM_ERROR_HANDLING");
        boolean sharedMemory = mm != null && Set.of("y", "yes", "on", "1").contains(mm.toLowerCase(Locale.ROOT));
        return "peer" + (sharedMemory ? "+mm" : "") + (cmaWithPeerErrorHandling ? "+cma" : "") + geometry;
    }

    /** UCX's setting {@code key} as this context has it: its configuration's, else the environment's {@code UCX_<key>}. */
    private String setting(String key) {
        String value = config.get(key);
        return value != null ? value : NativeEnvironment.get("UCX_" + key);
    }

    // the shared-memory transports' settings that lay out the receiver's FIFO and its buffers
    private static final List<String> MM_GEOMETRY = List.of("FIFO_SIZE", "FIFO_ELEM_SIZE", "SEG_SIZE");
    private static final List<String> MM_TABLES = List.of("MM_", "SYSV_", "POSIX_");

    /**
     * Part of the profile: {@code +mm#} and a checksum of the shared-memory geometry set in this
     * context's configuration or the environment ({@code FIFO_SIZE}, {@code FIFO_ELEM_SIZE},
     * {@code SEG_SIZE} of {@code mm}, {@code sysv}, {@code posix}); empty when none is set, so
     * UCX's defaults give the profile they always gave. Why: UCX's {@code mm} sender writes into
     * the receiver's FIFO with its own FIFO size, element size and segment size, so two ends that
     * differ overwrite messages the other has not read (a checksum keeps the profile within the
     * handshake's 64 bytes). Values are compared as written: the same size spelt two ways, or
     * UCX's default written out on one end only, counts as a difference, which costs acceleration,
     * never bytes.
     */
    private String sharedMemoryGeometry() {
        java.util.TreeMap<String, String> set = new java.util.TreeMap<>();
        for (String name : MM_GEOMETRY) {
            for (String table : MM_TABLES) {
                String key = table + name;
                String value = setting(key);
                if (value != null) {
                    set.put(key, value.trim().toLowerCase(Locale.ROOT));
                }
            }
        }
        if (set.isEmpty()) {
            return "";
        }
        java.util.zip.CRC32 crc = new java.util.zip.CRC32();
        crc.update(set.toString().getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        return String.format("+mm#%08x", crc.getValue());
    }

    /**
     * Whether endpoints in {@link ErrorMode#PEER} may use {@code cma} for large messages:
     * {@code UCX_CMA_MEMORY_INVALIDATE} was {@code y} in the environment when the context
     * was created (set by {@link Builder#peerFailureDetection} unless the user had set it).
     */
    public boolean cmaWithPeerErrorHandling() {
        return cmaWithPeerErrorHandling;
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
