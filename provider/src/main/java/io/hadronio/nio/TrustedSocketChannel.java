package io.hadronio.nio;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.path.ChannelIo;
import io.hadronio.path.KernelStream;
import io.hadronio.runtime.UcxRuntime;
import java.io.FileDescriptor;
import java.nio.channels.IllegalSelectorException;
import java.nio.channels.spi.SelectorProvider;
import java.util.function.BiFunction;
import sun.nio.ch.SelChImpl;
import sun.nio.ch.SelectionKeyImpl;

/**
 * A {@link HadronioSocketChannel} that the JDK's {@code FileChannel.transferTo} trusts: it
 * implements {@code sun.nio.ch.SelChImpl}, and {@code transferTo} then maps up to 8 MiB of the
 * file and hands the mapped buffer to one {@link #write(java.nio.ByteBuffer)}, unmapping it as
 * soon as that returns (every path copies or sends the bytes before its write returns), instead
 * of copying the file 8 KiB at a time through a heap buffer. Nothing else of the interface is
 * used for hadroNIO's own work: the channel has no file descriptor of its own to poll, and its
 * bytes must never reach the kernel socket behind its framing and queues.
 *
 * <p>Made only by {@link SocketChannelFactory}, which names this class by string alone (see
 * there why); compiled on its own with {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}
 * (the provider's pom).
 *
 * <p>A JDK selector ({@code sun.nio.ch.SelectorImpl}) registers every {@code SelChImpl}, and
 * {@code register} is final on both sides, so it takes this channel too. It then fails loudly
 * instead of never reporting the key: its next selection throws {@link IllegalSelectorException}
 * ({@link #translateInterestOps}), the same exception its {@code register} throws for any other
 * foreign channel. A key cancelled afterwards leaves cleanly ({@link #getFDVal} is -1, never an fd
 * the selector would touch), and so does the selector's close.
 */
final class TrustedSocketChannel extends HadronioSocketChannel implements SelChImpl {

    TrustedSocketChannel(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle life,
                         BiFunction<ConnectionLifecycle, ChannelIo, KernelStream> kernel) {
        super(provider, runtime, life, kernel);
    }

    /**
     * Makes these channels for {@link SocketChannelFactory}, which loads this class by name
     * (see there why) and then calls it as a plain interface: a constructor's method handle
     * ran its lambda forms in the interpreter for a cold JVM's every channel, and spun them.
     */
    static final class Maker implements SocketChannelFactory.ChannelMaker {
        @Override
        public HadronioSocketChannel make(SelectorProvider provider, UcxRuntime runtime, ConnectionLifecycle life,
                                          BiFunction<ConnectionLifecycle, ChannelIo, KernelStream> kernel) {
            return new TrustedSocketChannel(provider, runtime, life, kernel);
        }
    }

    /** None: the channel's bytes travel over UCX or behind our own framing, never through an fd the JDK may use. */
    @Override
    public FileDescriptor getFD() {
        throw new UnsupportedOperationException("a hadroNIO channel has no file descriptor of its own");
    }

    /** -1, no fd: a JDK selector that has this channel's key adds nothing to its epoll set and removes nothing. */
    @Override
    public int getFDVal() {
        return -1;
    }

    /** A JDK selector's selection asks this of each changed key first: it fails (see the class comment). */
    @Override
    public int translateInterestOps(int ops) {
        throw new IllegalSelectorException();
    }

    /** Never reached: a JDK selector polls no fd of this channel, so it has no event to translate. */
    @Override
    public boolean translateAndUpdateReadyOps(int ops, SelectionKeyImpl ski) {
        throw new IllegalSelectorException();
    }

    /** Never reached, as {@link #translateAndUpdateReadyOps}. */
    @Override
    public boolean translateAndSetReadyOps(int ops, SelectionKeyImpl ski) {
        throw new IllegalSelectorException();
    }

    /** Nothing: this channel's close never waits for a JDK selector to let go of an fd. */
    @Override
    public void kill() {
    }

    /**
     * Never reached: only the JDK's own channels park on themselves. The default would poll
     * {@link #getFD()}; failing says so should a JDK class ever park on a channel it was handed.
     */
    @Override
    public void park(int event, long nanos) {
        throw new UnsupportedOperationException("a hadroNIO channel has no file descriptor to park on");
    }

    /** Never reached, as {@link #park(int, long)}. */
    @Override
    public void park(int event) {
        throw new UnsupportedOperationException("a hadroNIO channel has no file descriptor to park on");
    }
}
