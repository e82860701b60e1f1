package io.hadronio.path;

import java.io.IOException;
import java.nio.channels.AsynchronousCloseException;

/**
 * What a {@link DataPath} needs of the channel it serves: its blocking mode, whether it is
 * open, and the brackets of {@link java.nio.channels.spi.AbstractInterruptibleChannel} around
 * a wait of our own, so that an interrupt or an asynchronous close ends the wait as the NIO
 * contract says. The socket channel implements it; the path never sees the channel itself.
 */
public interface ChannelIo {
    boolean isBlocking();

    boolean isOpen();

    /** {@code AbstractInterruptibleChannel.begin()}: an interrupt from here on closes the channel. */
    void begin();

    /** {@code AbstractInterruptibleChannel.end(completed)}: throws if a close or an interrupt ended the wait. */
    void end(boolean completed) throws AsynchronousCloseException;

    /** Closes the channel (an interrupt closed its kernel socket: the channel follows, as the contract says). */
    void close() throws IOException;

    /**
     * The connection may move to UCX: it is converted for the move (its socket made
     * non-blocking, blocking emulated) once no other thread is inside the channel; now if none
     * is. {@code dueNow}: the move is due and starts with the conversion.
     */
    void upgradeWanted(boolean dueNow);
}
