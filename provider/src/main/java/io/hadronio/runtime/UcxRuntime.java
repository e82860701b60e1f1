package io.hadronio.runtime;

import io.hadronio.connection.ConnectionControl;
import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.ConnectionServices;
import io.hadronio.connection.Handshakes;
import io.hadronio.path.Connection;
import io.hadronio.path.ConnectionMemory;
import io.hadronio.path.UcxHousekeeping;
import io.hadronio.path.Upgrades;
import io.hadronio.observe.ProviderMonitor;
import io.hadronio.platform.LazyLogger;
import io.hadronio.reactor.ControlLoop;
import io.hadronio.worker.WorkerGroup;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.LocalAddresses;
import io.hadronio.connection.LocalStreams;
import io.hadronio.connection.Peers;
import io.hadronio.connection.Secret;
import io.hadronio.platform.HugePagePool;
import io.hadronio.ucx.Feature;
import io.hadronio.ucx.Ucx;
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
 *
 * <p>In two steps. At once, on the caller's thread (the first use of NIO), what every channel
 * needs and what costs nothing: the configuration, the control loop, the upgrades' table, this
 * host's addresses. In the background ({@link BackgroundStart}, thread {@code hadronio-start}),
 * what costs a cold JVM hundreds of milliseconds: loading libucp, the key, the rendezvous, the
 * local streams, the UCX context and the worker groups ({@link Started}). That start runs once
 * the JVM's first connects have paused (at the latest a second after the provider was made), or
 * at once when something needs it. Until it has finished, connections start on the kernel (as
 * every local one does in upgrade mode) and a client's upgrade that is due requests it and waits
 * for it ({@link #requestStart}); what needs it at once waits for it ({@link #awaitStarted}): a
 * listener's bind (it offers the rendezvous), an eager handshake, a connect to a remote network.
 * If it fails, one WARNING names why, and nothing set up here moves to UCX.
 */
public final class UcxRuntime implements ConnectionServices {
    private static final System.Logger LOG = LazyLogger.of(UcxRuntime.class);
    // the start runs once connects paused this long (unless something needs it sooner: a due
    // upgrade, a bind, an eager handshake), at the latest this long after the provider was made
    private static final long START_QUIET_NANOS = java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(50);
    private static final long START_LATEST_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
    private final HadronioConfig config;
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
    // this host's addresses: which destinations are local (no key needed)
    private final LocalAddresses localAddresses = new LocalAddresses();
    // null unless hadronio.upgrade is on
    private final Upgrades upgrades;
    // what the background start makes
    private final BackgroundStart<Started> start;

    /**
     * What the runtime's start makes, off the caller's thread: the key's trust ({@code peers},
     * with the rendezvous), the local streams (null unless {@code hadronio.upgrade} and
     * {@code hadronio.local.stream} are on and the directory is usable), the UCX context and its
     * worker groups, and the connections' send and receive areas (huge pages up to
     * {@code hadronio.hugepages}, then ordinary ones).
     */
    private record Started(Peers peers, LocalStreams localStreams, UcxContext context, WorkerGroup[] groups,
                           HugePagePool areas) {
    }

    private UcxRuntime(HadronioConfig config, SelectorProvider platform, Secret secret, boolean inline,
                       java.util.function.Consumer<Throwable> outcome, Runnable beforeStart) throws IOException {
        this.config = config;
        this.platform = platform;
        this.loop = new ControlLoop(platform);
        this.control = new ConnectionControl(loop, this::wakeAll);
        this.housekeeping = new UcxHousekeeping(loop);
        this.handshakes = new Handshakes(this, control);
        this.upgrades = config.upgrade() ? new Upgrades(this) : null;
        java.util.concurrent.Callable<Started> maker = () -> {
            try {
                beforeStart.run();
                // the MBean io.hadronio:type=Provider, once this JVM's JMX is up (never making it);
                // never fails the start
                if (io.hadronio.observe.JdkModules.MANAGEMENT) {
                    ProviderMonitor.registerWhenJmxIsUp(config, io.hadronio.HadronioProvider.version());
                }
                Started made = make(secret);
                outcome.accept(null);
                return made;
            } catch (Throwable t) {
                outcome.accept(t);
                throw t;
            }
        };
        this.start = inline ? BackgroundStart.inline(maker)
                : BackgroundStart.begin("hadronio-start", START_QUIET_NANOS, START_LATEST_NANOS, maker);
    }

    /**
     * Where local connections start moving to UCX after they opened as plain TCP; null when
     * {@code hadronio.upgrade} is off or the start failed.
     */
    public Upgrades upgrades() {
        return start.failed() ? null : upgrades;
    }

    /**
     * Unix stream connections between local hadroNIO processes; null when off ({@code hadronio.local.stream}),
     * and while the start runs: a connection made then uses TCP.
     */
    public LocalStreams localStreams() {
        Started s = start.now();
        return s == null ? null : s.localStreams();
    }

    /** True when {@code address} is an address of this host (no wait for the start). */
    public boolean isLocal(java.net.InetAddress address) {
        return localAddresses.isLocal(address);
    }

    /**
     * Starts a runtime for a provider: the cheap parts at once, the rest in the background. A
     * value the user configured explicitly is checked here, so that a mistake throws at the
     * first use of NIO (IllegalArgumentException, naming the property): the key file of
     * {@code hadronio.secret.file}, and {@code hadronio.ucx.*}, which only UCX can judge, so
     * with those set the whole start runs here.
     *
     * @param outcome told, on the thread that ran the start, of its end: null when it made
     *                everything, else why it failed (then nothing set up here moves to UCX)
     * @throws IOException when the control loop cannot be made
     */
    public static UcxRuntime launch(HadronioConfig config, SelectorProvider platform,
                                    java.util.function.Consumer<Throwable> outcome) throws IOException {
        return launch(config, platform, outcome, () -> { });
    }

    /**
     * {@link #launch(HadronioConfig, SelectorProvider, java.util.function.Consumer)} with a step
     * that runs first on the start's thread (a seam for tests: one that blocks holds the start, one
     * that throws makes it fail).
     */
    public static UcxRuntime launch(HadronioConfig config, SelectorProvider platform,
                                    java.util.function.Consumer<Throwable> outcome, Runnable beforeStart)
            throws IOException {
        Secret secret = System.getProperty("hadronio.secret.file") != null ? loadSecret(config) : null;
        UcxRuntime r = new UcxRuntime(config, platform, secret, !config.ucx().isEmpty(), outcome, beforeStart);
        if (r.start.failure() instanceof IllegalArgumentException e) {
            throw e;
        }
        return r;
    }

    /**
     * Creates the UCX context (with the {@code hadronio.ucx.*} pass-through configuration)
     * and the worker groups, and returns once they are there (tests: a runtime to use at once).
     *
     * @throws IOException naming what failed
     */
    public static UcxRuntime start(HadronioConfig config, SelectorProvider platform) throws IOException {
        UcxRuntime r = new UcxRuntime(config, platform, null, true, failure -> { }, () -> { });
        Throwable t = r.start.failure();
        if (t instanceof IOException e) {
            throw e;
        } else if (t instanceof RuntimeException e) {
            throw e;
        } else if (t instanceof Error e) {
            throw e;
        } else if (t != null) {
            throw new IOException(t);
        }
        return r;
    }

    @Override
    public boolean started() {
        return start.now() != null;
    }

    @Override
    public void requestStart() {
        start.request();
    }

    /** A client connects (at its start and end): the start waits for a pause in connects ({@link BackgroundStart#activity}). */
    public void connecting() {
        start.activity();
    }

    @Override
    public boolean startFailed() {
        return start.failed();
    }

    /**
     * Waits for the start to end (it is not interruptible: an interrupt stays set); true when
     * it made everything, false when it failed.
     */
    public boolean awaitStarted() {
        return start.await() != null;
    }

    /** Why the start failed (for the provider's log and tests); null unless it did. */
    public Throwable startFailure() {
        return start.failure();
    }

    /** The parts the start made; throws when asked before it finished (a caller must wait or check first). */
    private Started parts() {
        Started s = start.now();
        if (s == null) {
            throw new IllegalStateException("the runtime has not started", start.failure());
        }
        return s;
    }

    private static Secret loadSecret(HadronioConfig config) throws IOException {
        // the key first: without it no peer can be trusted, and there is no point in UCX
        try {
            return Secret.load(config.secretFile());
        } catch (IOException e) {
            if (System.getProperty("hadronio.secret.file") != null) {
                // configured explicitly: a mistake to report, not a reason to run slower
                throw new IllegalArgumentException("invalid value for system property hadronio.secret.file: '"
                        + System.getProperty("hadronio.secret.file") + "' (" + e.getMessage() + ")", e);
            }
            throw new IOException("no key to authenticate peers: " + e.getMessage(), e);
        }
    }

    /** The start: everything that costs time, in the order it depends on (background thread, or inline). */
    private Started make(Secret given) throws IOException {
        Ucx.ensureAvailable();
        Secret secret = given != null ? given : loadSecret(config);
        Peers peers = new Peers(config, localAddresses, secret);
        LocalStreams localStreams = config.upgrade() && config.localStream()
                ? LocalStreams.open(platform, config.sendBufferBytes(), secret) : null;
        // a peer that dies is reported, not fatal, on shared memory too (docs/crash-isolation.md);
        // hadronio.ucx.* below may override the settings this makes
        UcxContext.Builder builder = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP).name("hadronio")
                .peerFailureDetection(java.time.Duration.ofMillis(100));
        // smaller UCX memory where the user left UCX's defaults (UcxMemoryDefaults); their settings follow and win
        UcxMemoryDefaults.unsetBy(config.ucx(), System.getenv()).forEach(builder::config);
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
            UcxUnusedKeys.WorkerCreation<WorkerGroup[]> creation = () -> {
                WorkerGroup[] g = new WorkerGroup[config.workers()];
                for (int i = 0; i < g.length; i++) {
                    g[i] = new WorkerGroup(context, "hadronio-" + i, config.spinNanos(), config.spinYields());
                }
                return g;
            };
            // only hadronio.ucx.* keys are checked: without any, no watch (its log handler, an upcall
            // stub, left ~2.5 MB of garbage in the young generation at start-up: docs/benchmarks/memory.md)
            WorkerGroup[] groups = config.ucx().isEmpty() ? creation.run() : UcxUnusedKeys.watch(creation, unused);
            warnUnused(config, unused);
            if (upgrades != null) {
                upgrades.listen(peers.rendezvous());
            }
            return new Started(peers, localStreams, context, groups, new HugePagePool(config.hugePagesBytes()));
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
        return parts().context().endpointProfile(io.hadronio.ucx.ErrorMode.PEER) + "+bulk";
    }

    /** Who is accelerated: the key, the local rendezvous, the configured remote networks (once {@link #started()}). */
    @Override
    public Peers peers() {
        return parts().peers();
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

    /**
     * The worker groups; a selector sleeps on all of their event fds. Null while the start runs,
     * empty once it failed (no wait).
     */
    public WorkerGroup[] groups() {
        Started s = start.now();
        if (s != null) {
            return s.groups().clone();
        }
        return start.failed() ? new WorkerGroup[0] : null;
    }

    /** Wakes every thread and selector sleeping on any worker. */
    public void wakeAll() {
        Started s = start.now();
        if (s == null) {
            return;
        }
        for (WorkerGroup g : s.groups()) {
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
     * for hot paths: takes every worker's lock and asks the control thread, and waits for the
     * start; empty when it failed.
     */
    public Map<String, Long> resources() {
        if (!awaitStarted()) {
            return Map.of();
        }
        Started started = parts();
        Map<String, Long> counts = new java.util.TreeMap<>();
        long requests = 0;
        long endpoints = 0;
        for (WorkerGroup g : started.groups()) {
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
        counts.put("connections.memory.hugepages.bytes", started.areas().mappedBytes());
        counts.put("connections.memory.hugepages.promoted.bytes", started.areas().hugeBytes());
        counts.put("rendezvous.expected", (long) started.peers().rendezvous().expectedRegistrations());
        counts.putAll(loop.counts());
        counts.put("control.accelerated.total", control.accelerated());
        counts.put("control.handshakes", (long) handshakes.inProgress());
        return java.util.Collections.unmodifiableMap(counts);
    }

    @Override
    public WorkerGroup nextGroup() {
        WorkerGroup[] groups = parts().groups();
        return groups[Math.floorMod(nextGroup.getAndIncrement(), groups.length)];
    }

    /** A new connection half on {@code group}, receives posted: its receive area, its tag id. */
    @Override
    public Connection newHalf(ConnectionLifecycle life, WorkerGroup group) throws UcxException {
        connectionsMade.incrementAndGet();
        return new Connection(life, group, housekeeping, parts().areas(), config.sliceSize(), config.sliceCount(),
                config.sendBufferBytes());
    }

    /** Connection halves this runtime made since it started (a seam for tests: what a handshake allocated). */
    public long connectionsMade() {
        return connectionsMade.get();
    }
}
