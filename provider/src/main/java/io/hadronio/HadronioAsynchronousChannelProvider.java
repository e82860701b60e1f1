package io.hadronio;

import io.hadronio.async.HadronioAsynchronousChannelGroup;
import io.hadronio.async.HadronioAsynchronousServerSocketChannel;
import io.hadronio.async.HadronioAsynchronousSocketChannel;
import io.hadronio.platform.JdkInternals;
import java.io.IOException;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.IllegalChannelGroupException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * hadroNIO's {@link AsynchronousChannelProvider} (NIO.2): {@code AsynchronousSocketChannel},
 * {@code AsynchronousServerSocketChannel} and {@code AsynchronousChannelGroup} built on
 * hadroNIO's NIO channels in non-blocking mode and its selector ({@link io.hadronio.async}),
 * so they ride the same connections: UCX between hadroNIO peers, the move from the kernel
 * socket to UCX, plain TCP to everyone else on the same port, the same trust model and
 * {@code HadronioSocketOptions.TRANSPORT}.
 *
 * <p>Enable with {@code -Djava.nio.channels.spi.AsynchronousChannelProvider=io.hadronio.HadronioAsynchronousChannelProvider}
 * (usually beside the {@code SelectorProvider} property). It is its own class, not
 * {@link HadronioProvider} answering both properties: both SPIs are abstract classes, and a
 * class extends one. Nothing is lost by that: its channels come from the JVM's
 * {@link HadronioProvider} when {@link SelectorProvider#provider()} is one (one UCX runtime
 * for both APIs), else from a {@link HadronioProvider} of its own, configured by the same
 * {@code hadronio.*} properties. Neither registers itself as a service: a jar on the class
 * path changes nothing until a property names the provider.
 *
 * <p>When hadroNIO runs unaccelerated ({@code hadronio.enabled=false}, or UCX could not
 * start) the groups and channels made from then on are the JDK's own
 * ({@code sun.nio.ch.DefaultAsynchronousChannelProvider}): a group remembers its provider,
 * so its channels stay of its kind.
 */
public class HadronioAsynchronousChannelProvider extends AsynchronousChannelProvider {
    private static final String THREAD_FACTORY = "java.nio.channels.DefaultThreadPool.threadFactory";
    private static final String INITIAL_SIZE = "java.nio.channels.DefaultThreadPool.initialSize";
    private static final AtomicInteger DEFAULT_THREADS = new AtomicInteger();

    private final HadronioProvider selectors;
    private final AsynchronousChannelProvider platform;
    // made at the first channel opened without a group; null while none is
    private HadronioAsynchronousChannelGroup defaultGroup;

    /** The provider the property names: on the JVM's hadroNIO selector provider, or on one of its own. */
    public HadronioAsynchronousChannelProvider() {
        this(SelectorProvider.provider() instanceof HadronioProvider h ? h : new HadronioProvider());
    }

    /** A provider on {@code selectors}' channels (tests: one provider for both APIs). */
    public HadronioAsynchronousChannelProvider(HadronioProvider selectors) {
        this.selectors = selectors;
        this.platform = JdkInternals.platformAsynchronousProvider();
    }

    /** The JDK's own provider, which serves everything while hadroNIO runs unaccelerated. */
    public AsynchronousChannelProvider platform() {
        return platform;
    }

    /** The selector provider whose channels this one's ride. */
    public HadronioProvider selectors() {
        return selectors;
    }

    @Override
    public AsynchronousChannelGroup openAsynchronousChannelGroup(int nThreads, ThreadFactory threadFactory)
            throws IOException {
        if (!selectors.usable()) {
            return platform.openAsynchronousChannelGroup(nThreads, threadFactory);
        }
        return HadronioAsynchronousChannelGroup.withFixedThreadPool(this, selectors, nThreads, threadFactory);
    }

    @Override
    public AsynchronousChannelGroup openAsynchronousChannelGroup(ExecutorService executor, int initialSize)
            throws IOException {
        if (!selectors.usable()) {
            return platform.openAsynchronousChannelGroup(executor, initialSize);
        }
        return HadronioAsynchronousChannelGroup.withCachedThreadPool(this, selectors, executor,
                Math.max(0, initialSize));
    }

    @Override
    public AsynchronousServerSocketChannel openAsynchronousServerSocketChannel(AsynchronousChannelGroup group)
            throws IOException {
        HadronioAsynchronousChannelGroup ours = ours(group);
        if (ours == null) {
            return platform.openAsynchronousServerSocketChannel(group);
        }
        return HadronioAsynchronousServerSocketChannel.open(this, ours);
    }

    @Override
    public AsynchronousSocketChannel openAsynchronousSocketChannel(AsynchronousChannelGroup group)
            throws IOException {
        HadronioAsynchronousChannelGroup ours = ours(group);
        if (ours == null) {
            return platform.openAsynchronousSocketChannel(group);
        }
        return HadronioAsynchronousSocketChannel.open(this, ours);
    }

    /**
     * The group a channel goes to: {@code group} if it is ours, the default group for null;
     * null for the JDK's (a group made while unaccelerated, or the JDK's default group).
     */
    private HadronioAsynchronousChannelGroup ours(AsynchronousChannelGroup group) throws IOException {
        if (group == null) {
            return defaultGroup();
        }
        if (group instanceof HadronioAsynchronousChannelGroup g && g.provider() == this) {
            return g;
        }
        if (group.provider() == platform) {
            return null;
        }
        throw new IllegalChannelGroupException();
    }

    /**
     * The default group, made at its first use as the JDK makes its own: a cached pool of the
     * thread factory named by {@code java.nio.channels.DefaultThreadPool.threadFactory} (else
     * daemon threads) with {@code java.nio.channels.DefaultThreadPool.initialSize} loops
     * (else one per processor). Null while unaccelerated: the JDK's default group serves.
     */
    private synchronized HadronioAsynchronousChannelGroup defaultGroup() throws IOException {
        if (defaultGroup == null && selectors.usable()) {
            ExecutorService executor = Executors.newCachedThreadPool(defaultThreadFactory());
            defaultGroup = HadronioAsynchronousChannelGroup.withCachedThreadPool(this, selectors, executor,
                    defaultInitialSize());
        }
        return defaultGroup;
    }

    private static ThreadFactory defaultThreadFactory() {
        String name = System.getProperty(THREAD_FACTORY);
        if (name == null) {
            return r -> {
                Thread t = new Thread(r, "hadronio-aio-default-" + DEFAULT_THREADS.incrementAndGet());
                t.setDaemon(true);
                return t;
            };
        }
        try {
            Class<?> c = Class.forName(name, true, ClassLoader.getSystemClassLoader());
            return (ThreadFactory) c.getConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            // as the JDK's default group does
            throw new Error(e);
        }
    }

    private static int defaultInitialSize() {
        String value = System.getProperty(INITIAL_SIZE);
        if (value == null) {
            return Runtime.getRuntime().availableProcessors();
        }
        try {
            int n = Integer.parseInt(value);
            return n < 0 ? Runtime.getRuntime().availableProcessors() : n;
        } catch (NumberFormatException e) {
            throw new Error("Value of property '" + INITIAL_SIZE + "' is invalid: " + e, e);
        }
    }
}
