package io.hadronio;

import io.hadronio.config.HadronioConfig;

import io.hadronio.nio.HadronioServerSocketChannel;
import io.hadronio.nio.HadronioSocketChannel;
import io.hadronio.nio.SocketChannelFactory;
import io.hadronio.platform.JdkInternals;
import io.hadronio.platform.LazyLogger;
import io.hadronio.runtime.UcxRuntime;
import io.hadronio.ucx.Ucx;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.ProtocolFamily;
import java.net.StandardProtocolFamily;
import java.nio.channels.Channel;
import java.nio.channels.DatagramChannel;
import java.nio.channels.Pipe;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.AbstractSelector;
import java.nio.channels.spi.SelectorProvider;
import java.util.Map;
import java.util.Objects;

/**
 * hadroNIO's {@link SelectorProvider}: {@code SocketChannel} and
 * {@code ServerSocketChannel} (IPv4/IPv6) carry their bytes over UCX, and {@code openSelector}
 * gives hadroNIO's selector, which also selects the JDK's channels; everything else
 * ({@code DatagramChannel}, {@code Pipe}, Unix-domain sockets) comes from the JDK's own provider.
 *
 * <p>Enable with {@code -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider}
 * and {@code hadronio.jar} on the class path. The configuration is read and validated
 * here, at the first use of NIO: a bad value throws (the JDK reports it as a
 * {@code ServiceConfigurationError}) with a message naming the property. UCX itself starts
 * in the background ({@link UcxRuntime}): the first {@code connect} never waits for it, and
 * its connection moves to UCX later. If UCX cannot be loaded or initialised, one WARNING is
 * logged (through {@link System.Logger}, as is everything hadroNIO logs) and every channel
 * from then on comes from the JDK's provider (those made before stay on the kernel): the
 * application keeps running, unaccelerated.
 *
 * <p>NIO.2 ({@code AsynchronousSocketChannel} and its group) is not answered here but by
 * {@link HadronioAsynchronousChannelProvider}, named by its own property: both SPIs are
 * abstract classes, so one class cannot be both providers. That one drives this provider's
 * channels (the JVM's, when this is the JVM's provider), so both APIs share one UCX runtime.
 */
public class HadronioProvider extends SelectorProvider {
    // System.Logger, not a logging library: this class lands on every application's class path,
    // which must not get a second copy (or a different version) of what it may carry itself
    private static final Logger LOG = LazyLogger.of(HadronioProvider.class);

    private final SelectorProvider platform;
    private final HadronioConfig config;
    // null when running unaccelerated
    private final UcxRuntime runtime;

    public HadronioProvider() {
        this(HadronioConfig.fromSystemProperties());
    }

    /** A provider with its own configuration (tests: a second provider with another key). */
    public HadronioProvider(HadronioConfig config) {
        this(config, () -> { });
    }

    /**
     * A provider whose runtime's start runs {@code beforeStart} first, on its own thread (tests:
     * one that blocks holds the start, one that throws makes it fail).
     */
    HadronioProvider(HadronioConfig config, Runnable beforeStart) {
        this.config = config;
        this.platform = JdkInternals.platformProvider();
        this.runtime = config.enabled() ? launchUcx(config, platform, beforeStart) : null;
        if (!config.enabled()) {
            info("hadroNIO " + version() + " disabled (hadronio.enabled=false): using the JDK's provider");
        }
    }

    /**
     * The runtime, its start left to the background (a bad value the user configured throws
     * here); null when even its first step failed. The outcome of the start is logged when it
     * ends: one INFO line naming UCX, or one WARNING naming why every channel from now on is
     * the JDK's.
     */
    private static UcxRuntime launchUcx(HadronioConfig config, SelectorProvider platform, Runnable beforeStart) {
        try {
            return UcxRuntime.launch(config, platform, failure -> {
                if (failure == null) {
                    info("hadroNIO " + version() + " on UCX " + Ucx.version() + ": " + config);
                } else if (failure instanceof io.hadronio.ucx.UcxUnavailableException) {
                    warn("hadroNIO: UCX unavailable (" + failure.getMessage()
                            + "); running unaccelerated on the JDK's provider");
                } else if (!(failure instanceof IllegalArgumentException)) {
                    warn("hadroNIO: cannot accelerate (" + failure.getMessage()
                            + "); running unaccelerated on the JDK's provider");
                }
            }, beforeStart);
        } catch (IllegalArgumentException e) {
            throw e;
        } catch (RuntimeException | IOException | LinkageError e) {
            warn("hadroNIO: cannot accelerate (" + e.getMessage() + "); running unaccelerated on the JDK's provider");
            return null;
        }
    }

    private static void info(String message) {
        LOG.log(Level.INFO, message);
    }

    private static void warn(String message) {
        LOG.log(Level.WARNING, message);
    }

    /** This build's version (the jar's Implementation-Version; "dev" from classes). */
    public static String version() {
        String v = HadronioProvider.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }

    /**
     * True when socket channels are carried over UCX (false: fallback to the JDK's provider).
     * Waits for the runtime's start, which runs in the background from the provider's creation.
     */
    public boolean isAccelerated() {
        return runtime != null && runtime.awaitStarted();
    }

    /** True unless the runtime is off or its start failed: channels are ours (no wait). */
    boolean usable() {
        return runtime != null && !runtime.startFailed();
    }

    /**
     * What hadroNIO holds for connections in this JVM, as named counts (UCX requests and
     * endpoints, connections' native memory, the control thread's connections and
     * handshakes; see {@link UcxRuntime#resources()}), for tests and diagnostics that look
     * for leaks. Empty when running unaccelerated. Not for hot paths.
     */
    public Map<String, Long> resources() {
        return runtime == null ? Map.of() : runtime.resources();
    }

    public HadronioConfig config() {
        return config;
    }

    /** The JDK's own provider, which serves everything hadroNIO does not accelerate. */
    public SelectorProvider platform() {
        return platform;
    }

    @Override
    public DatagramChannel openDatagramChannel() throws IOException {
        return platform.openDatagramChannel();
    }

    @Override
    public DatagramChannel openDatagramChannel(ProtocolFamily family) throws IOException {
        return platform.openDatagramChannel(family);
    }

    @Override
    public Pipe openPipe() throws IOException {
        return platform.openPipe();
    }

    @Override
    public AbstractSelector openSelector() throws IOException {
        if (!usable()) {
            return platform.openSelector();
        }
        return new io.hadronio.nio.HadronioSelector(this, runtime);
    }

    @Override
    public ServerSocketChannel openServerSocketChannel() throws IOException {
        if (!usable()) {
            return platform.openServerSocketChannel();
        }
        return new HadronioServerSocketChannel(this, runtime);
    }

    @Override
    public SocketChannel openSocketChannel() throws IOException {
        if (!usable()) {
            return platform.openSocketChannel();
        }
        HadronioSocketChannel c = SocketChannelFactory.open(this, runtime);
        // a connect follows: the runtime's start waits for a pause in them, counted from here
        runtime.connecting();
        return c;
    }

    @Override
    public SocketChannel openSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family);
        if (!usable() || family == StandardProtocolFamily.UNIX) {
            return platform.openSocketChannel(family);
        }
        HadronioSocketChannel c = SocketChannelFactory.open(this, runtime, family);
        runtime.connecting();
        return c;
    }

    @Override
    public ServerSocketChannel openServerSocketChannel(ProtocolFamily family) throws IOException {
        Objects.requireNonNull(family);
        if (!usable() || family == StandardProtocolFamily.UNIX) {
            return platform.openServerSocketChannel(family);
        }
        return new HadronioServerSocketChannel(this, runtime, family);
    }

    @Override
    public Channel inheritedChannel() throws IOException {
        return platform.inheritedChannel();
    }
}
