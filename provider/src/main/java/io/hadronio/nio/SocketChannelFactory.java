package io.hadronio.nio;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.connection.LocalStreams;
import io.hadronio.path.ChannelIo;
import io.hadronio.path.KernelStream;
import io.hadronio.platform.JdkInternals;
import io.hadronio.platform.LazyLogger;
import io.hadronio.runtime.UcxRuntime;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.net.ProtocolFamily;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.function.BiFunction;

/**
 * Where every {@link HadronioSocketChannel} is made: an instance of {@code TrustedSocketChannel}
 * when {@code java.base} lets that class load, of {@link HadronioSocketChannel} itself otherwise.
 *
 * <p>The subclass implements {@code sun.nio.ch.SelChImpl}, which is all that
 * {@code FileChannel.transferTo} asks of a target before it hands it the file mapped 8 MiB at
 * a time; any other target gets 8 KiB heap copies (docs/benchmarks/patterns.md, "transferTo").
 * A class that implements an interface of a package {@code java.base} does not export fails to
 * load ({@code IllegalAccessError}) unless the package was exported first, so nothing but this
 * class names the subclass, and only as a string: the verifier of a class that named it as a
 * type could load it before the export ({@link JdkInternals#ensureExported}) ran. Every channel
 * is made after a {@code HadronioProvider} was constructed, which exports the package; the
 * export is asked for again here, and if it or the load fails, the channels are plain
 * {@link HadronioSocketChannel}s (logged once) and {@code transferTo} takes the JDK's slow way.
 */
public final class SocketChannelFactory {
    private static final Logger LOG = LazyLogger.of(SocketChannelFactory.class);
    private static final String TRUSTED_CLASS = "io.hadronio.nio.TrustedSocketChannel";
    // makes TrustedSocketChannels; null: plain channels only
    private static final ChannelMaker NEW_TRUSTED = trustedMaker();

    /** What makes the trusted channels ({@code TrustedSocketChannel.Maker}). */
    interface ChannelMaker {
        HadronioSocketChannel make(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle life,
                                   BiFunction<ConnectionLifecycle, ChannelIo, KernelStream> kernel);
    }

    private SocketChannelFactory() {
    }

    /** An unconnected channel ({@code SocketChannel.open()}). */
    public static HadronioSocketChannel open(SelectorProvider provider, UcxRuntime runtime) throws IOException {
        return unconnected(provider, runtime, runtime.platform().openSocketChannel());
    }

    /** An unconnected channel of one protocol family ({@code SocketChannel.open(family)}). */
    public static HadronioSocketChannel open(SelectorProvider provider, UcxRuntime runtime, ProtocolFamily family)
            throws IOException {
        return unconnected(provider, runtime, runtime.platform().openSocketChannel(family));
    }

    private static HadronioSocketChannel unconnected(SelectorProvider provider, UcxRuntime runtime,
                                                     SocketChannel unconnected) {
        return make(provider, runtime, ConnectionLifecycle.unconnected(runtime.control(), unconnected),
                (life, io) -> new KernelStream(runtime.localStreams(), runtime.platform(), life, io, unconnected, null));
    }

    /** An accepted accelerated channel, open. */
    static HadronioSocketChannel accepted(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle accepted) {
        HadronioSocketChannel ch = make(provider, runtime, accepted,
                (life, io) -> new KernelStream(runtime.localStreams(), runtime.platform(), life, io, life.tcp(), null));
        ch.opened();
        return ch;
    }

    /** An accepted plain channel, connected; {@code prefix}: bytes already read from it, or null. */
    static HadronioSocketChannel acceptedPlain(SelectorProvider provider, UcxRuntime runtime, SocketChannel tcp,
                                               ByteBuffer prefix) throws IOException {
        HadronioSocketChannel ch = make(provider, runtime, ConnectionLifecycle.acceptedPlain(runtime.control(), tcp),
                (life, io) -> new KernelStream(runtime.localStreams(), runtime.platform(), life, io, tcp, prefix));
        ch.openedPlain();
        return ch;
    }

    /** An accepted local stream connection ({@link LocalStreams}), connected. */
    static HadronioSocketChannel acceptedLocal(SelectorProvider provider, UcxRuntime runtime,
                                               LocalStreams.Accepted accepted) throws IOException {
        HadronioSocketChannel ch = make(provider, runtime,
                ConnectionLifecycle.acceptedPlain(runtime.control(), accepted.channel()),
                (life, io) -> new KernelStream(runtime.localStreams(), runtime.platform(), life, io, accepted));
        ch.openedPlain();
        return ch;
    }

    /** Whether the channels made here are the trusted kind ({@code FileChannel.transferTo} maps the file for them). */
    public static boolean trusted() {
        return NEW_TRUSTED != null;
    }

    private static HadronioSocketChannel make(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle life,
                                              BiFunction<ConnectionLifecycle, ChannelIo, KernelStream> kernel) {
        ChannelMaker trusted = NEW_TRUSTED;
        return trusted == null ? new HadronioSocketChannel(provider, runtime, life, kernel)
                : trusted.make(provider, runtime, life, kernel);
    }

    /** Exports sun.nio.ch if needed and loads the subclass; null (logged) when either fails. */
    private static ChannelMaker trustedMaker() {
        try {
            JdkInternals.ensureExported();
            Class<?> trusted = Class.forName(TRUSTED_CLASS, true, SocketChannelFactory.class.getClassLoader());
            // (the subclass itself, loaded first: its failure to load is what is caught here)
            Class<?> maker = Class.forName(TRUSTED_CLASS + "$Maker", true, trusted.getClassLoader());
            return (ChannelMaker) maker.getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | RuntimeException | LinkageError e) {
            LOG.log(Level.INFO, "hadroNIO: FileChannel.transferTo into a hadroNIO channel copies 8 KiB at a time ("
                    + TRUSTED_CLASS + " unavailable: " + e + ")");
            return null;
        }
    }
}
