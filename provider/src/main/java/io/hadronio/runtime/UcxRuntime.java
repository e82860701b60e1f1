package io.hadronio.runtime;

import io.hadronio.connection.ConnectionControl;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.ConnectionServices;
import io.hadronio.connection.Handshakes;
import io.hadronio.path.Connection;
import io.hadronio.path.ConnectionMemory;
import io.hadronio.path.UcxHousekeeping;
import io.hadronio.path.Upgrades;
import io.hadronio.reactor.ControlLoop;
import io.hadronio.worker.WorkerGroup;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.Peers;
import io.hadronio.connection.Secret;
import io.hadronio.platform.HugePagePool;
import io.hadronio.ucx.Feature;
import io.hadronio.ucx.UcxContext;
import io.hadronio.ucx.UcxException;
import io.hadronio.ucx.UcxUnusedKeys;
import java.io.IOException;
import java.nio.channels.spi.SelectorProvider;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Everything UCX-side one provider owns: the context, the worker groups that
 * connections are spread over, and the control loop. Made once, on first use.
 */
public final class UcxRuntime implements ConnectionServices {
    private static final System.Logger LOG = System.getLogger(UcxRuntime.class.getName());
    private final HadronioConfig config;
    private final UcxContext context;
    private final WorkerGroup[] groups;
    private final AtomicInteger nextGroup = new AtomicInteger();
    // connection halves made since start, whoever asked (handshakes, upgrades): see connectionsMade
    private final java.util.concurrent.atomic.AtomicLong connectionsMade = new java.util.concurrent.atomic.AtomicLong();
    // the control thread (the reactor) and what connections have it do
    private final ControlLoop loop;
    private final ConnectionControl control;
    // what the UCX halves have the control thread do: flush held-back sends, free released memory
    private final UcxHousekeeping housekeeping;
    private final Handshakes handshakes;
    private final SelectorProvider platform;
    private final Peers peers;
    // null unless hadronio.upgrade is on
    private final Upgrades upgrades;
    // null unless hadronio.upgrade and hadronio.local.stream are on and the directory is usable
    private final io.hadronio.connection.LocalStreams localStreams;
    // connections' send and receive areas: huge pages up to hadronio.hugepages, then ordinary ones
    private final HugePagePool areas;

    private UcxRuntime(HadronioConfig config, UcxContext context, WorkerGroup[] groups, SelectorProvider platform,
                       Peers peers) throws IOException {
        this.config = config;
        this.context = context;
        this.groups = groups;
        this.platform = platform;
        this.peers = peers;
        this.loop = new ControlLoop(platform);
        this.control = new ConnectionControl(loop, this::wakeAll);
        this.housekeeping = new UcxHousekeeping(loop);
        this.handshakes = new Handshakes(this, control);
        this.upgrades = config.upgrade() ? new Upgrades(this) : null;
        this.localStreams = config.upgrade() && config.localStream()
                ? io.hadronio.connection.LocalStreams.open(platform, config.sendBufferBytes(), peers.secret()) : null;
        this.areas = new HugePagePool(config.hugePagesBytes());
    }

    /** Where local connections start moving to UCX after they opened as plain TCP; null when {@code hadronio.upgrade} is off. */
    public Upgrades upgrades() {
        return upgrades;
    }

    /** Unix stream connections between local hadroNIO processes; null when off ({@code hadronio.local.stream}). */
    public io.hadronio.connection.LocalStreams localStreams() {
        return localStreams;
    }

    /**
     * Creates the UCX context (with the {@code hadronio.ucx.*} pass-through configuration)
     * and the worker groups.
     */
    public static UcxRuntime start(HadronioConfig config, SelectorProvider platform) throws IOException {
        // the key first: without it no peer can be trusted, and there is no point in UCX
        Secret secret;
        try {
            secret = Secret.load(config.secretFile());
        } catch (IOException e) {
            if (System.getProperty("hadronio.secret.file") != null) {
                // configured explicitly: a mistake to report, not a reason to run slower
                throw new IllegalArgumentException("invalid value for system property hadronio.secret.file: '"
                        + System.getProperty("hadronio.secret.file") + "' (" + e.getMessage() + ")", e);
            }
            throw new IOException("no key to authenticate peers: " + e.getMessage(), e);
        }
        Peers peers = new Peers(config, secret);
        // a peer that dies is reported, not fatal, on shared memory too (docs/crash-isolation.md);
        // hadronio.ucx.* below may override the settings this makes
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP).name("hadronio")
                .peerFailureDetection(java.time.Duration.ofMillis(100));
        for (Map.Entry<String, String> e : config.ucx().entrySet()) {
            try {
                builder.config(e.getKey(), e.getValue());
            } catch (IllegalArgumentException x) {
                throw badUcxConfig(config, x);
            }
        }
        UcxContext context;
        try {
            context = builder.open();
        } catch (UcxException e) {
            if (config.ucx().isEmpty()) {
                throw e;
            }
            // the user asked UCX for something it cannot do (a typo in TLS, say): say so at
            // start-up instead of running unaccelerated with a warning that names nothing
            throw badUcxConfig(config, e);
        }
        try {
            Set<String> unused = new LinkedHashSet<>(); // UCX's reports of keys no transport used
            WorkerGroup[] groups = UcxUnusedKeys.watch(() -> {
                WorkerGroup[] g = new WorkerGroup[config.workers()];
                for (int i = 0; i < g.length; i++) {
                    g[i] = new WorkerGroup(context, "hadronio-" + i, config.spinNanos(), config.spinYields());
                }
                return g;
            }, unused);
            warnUnused(config, unused);
            return new UcxRuntime(config, context, groups, platform, peers);
        } catch (UcxException | RuntimeException e) {
            context.close();
            throw e;
        }
    }

    /**
     * Names each {@code hadronio.ucx.KEY} that UCX used for none of its transports here (a
     * {@code UCX_*} environment variable's key is left to UCX's own line, which names it). A
     * warning, not a refusal: the same key is right for a transport another host has (an
     * InfiniBand setting on a machine without it, say), and UCX ignores it the same way.
     */
    private static void warnUnused(HadronioConfig config, Set<String> reports) {
        for (Map.Entry<String, String> e : config.ucx().entrySet()) {
            String key = e.getKey();
            String value = e.getValue();
            if (reports.stream().noneMatch(r -> UcxUnusedKeys.names(r, key))) {
                continue;
            }
            LOG.log(System.Logger.Level.WARNING, "system property " + HadronioConfig.UCX_PREFIX + key + "='" + value
                    + "' is used by none of UCX's transports in this process (UCX: invalid configuration): "
                    + "a misspelt key, or one for a transport this host does not have; it has no effect");
        }
    }

    private static IllegalArgumentException badUcxConfig(HadronioConfig config, Exception cause) {
        StringBuilder props = new StringBuilder();
        config.ucx().forEach((k, v) -> props.append(props.isEmpty() ? "" : ", ").append(HadronioConfig.UCX_PREFIX)
                .append(k).append("='").append(v).append('\''));
        return new IllegalArgumentException("invalid UCX configuration in system properties " + props
                + ": UCX refused it (" + cause.getMessage() + "; UCX's own log above names the value)", cause);
    }

    @Override
    public HadronioConfig config() {
        return config;
    }

    public SelectorProvider platform() {
        return platform;
    }

    /**
     * What both ends of an endpoint must share: the UCX settings ({@link UcxContext#endpointProfile})
     * and the data protocol's version ("+bulk": messages of {@link WireFormat#BULK_MIN} bytes or more
     * go as bulk messages). A peer with another profile keeps the connection on TCP.
     */
    @Override
    public String endpointProfile() {
        return context.endpointProfile(io.hadronio.ucx.ErrorMode.PEER) + "+bulk";
    }

    /** Who is accelerated: the key, the local rendezvous, the configured remote networks. */
    @Override
    public Peers peers() {
        return peers;
    }

    /** What connections have the control thread do for them. */
    @Override
    public ConnectionControl control() {
        return control;
    }

    /** Where eager handshakes start, both sides. */
    public Handshakes handshakes() {
        return handshakes;
    }

    /** The worker groups; a selector sleeps on all of their event fds. */
    public WorkerGroup[] groups() {
        return groups.clone();
    }

    /** Wakes every thread and selector sleeping on any worker. */
    public void wakeAll() {
        for (WorkerGroup g : groups) {
            g.wakeSleepers();
        }
    }

    /**
     * Counts of what this runtime holds for connections, for tests and diagnostics: UCX
     * requests not released and endpoints not closed (all workers), upcall targets
     * (JVM-wide), connections' native memory not freed (JVM-wide: count, bytes, and how
     * many a release had to leave to requests in flight), unclaimed rendezvous
     * registrations, what the control thread holds ({@link ControlLoop#counts}), the handshakes that ended
     * accelerated ({@code control.accelerated.total}) and the
     * handshakes in progress on it ({@code control.handshakes}). With
     * no connection open and none closing, all but the upcall targets (the workers' own),
     * the retained memory and the cumulative {@code control.accelerated.total} are 0. Not
     * for hot paths: takes every worker's lock and asks the control thread.
     */
    public Map<String, Long> resources() {
        Map<String, Long> counts = new java.util.TreeMap<>();
        long requests = 0;
        long endpoints = 0;
        for (WorkerGroup g : groups) {
            g.lock.lock();
            try {
                if (g.worker().isOpen()) {
                    requests += g.worker().outstandingRequests();
                    endpoints += g.worker().openEndpoints();
                }
            } finally {
                g.lock.unlock();
            }
        }
        counts.put("ucx.requests", requests);
        counts.put("ucx.endpoints", endpoints);
        counts.put("ucx.upcalls", (long) io.hadronio.ucx.Ucx.upcallTargets());
        counts.put("connections.memory", (long) ConnectionMemory.memoryLive());
        counts.put("connections.memory.bytes", ConnectionMemory.memoryBytes());
        counts.put("connections.memory.retained", (long) ConnectionMemory.memoryRetained());
        counts.put("connections.memory.hugepages.bytes", areas.mappedBytes());
        counts.put("rendezvous.expected", (long) peers.rendezvous().expectedRegistrations());
        counts.putAll(loop.counts());
        counts.put("control.accelerated.total", control.accelerated());
        counts.put("control.handshakes", (long) handshakes.inProgress());
        return java.util.Collections.unmodifiableMap(counts);
    }

    @Override
    public WorkerGroup nextGroup() {
        return groups[Math.floorMod(nextGroup.getAndIncrement(), groups.length)];
    }

    /** A new connection half on {@code group}, receives posted: its receive area, its tag id. */
    @Override
    public Connection newHalf(ConnectionLifecycle life, WorkerGroup group) throws UcxException {
        connectionsMade.incrementAndGet();
        return new Connection(life, group, housekeeping, areas, config.sliceSize(), config.sliceCount(),
                config.sendBufferBytes());
    }

    /** Connection halves this runtime made since it started (a seam for tests: what a handshake allocated). */
    public long connectionsMade() {
        return connectionsMade.get();
    }
}
