package io.hadronio.nio;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.nio.channels.AlreadyBoundException;
import java.nio.channels.AlreadyConnectedException;
import java.nio.channels.AsynchronousCloseException;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.NetworkChannel;
import java.nio.channels.NotYetBoundException;
import java.nio.channels.NotYetConnectedException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.channels.UnsupportedAddressTypeException;
import java.security.Security;
import java.util.List;
import java.util.Map;

/**
 * What the {@code socket()} adaptors throw: the JDK's adaptors' exceptions
 * ({@code sun.nio.ch.SocketAdaptor}, {@code ServerSocketAdaptor}, JDK 25), one table for both.
 * An application that catches what the JDK's {@code channel.socket()} throws must catch ours.
 *
 * <p>The translation ({@link #translate}, {@link #toSocketException}) is the JDK's
 * {@code Net.translateException} / {@code translateToSocketException}:
 *
 * <table>
 * <caption>a channel's exception, as the adaptor throws it</caption>
 * <tr><th>from the channel</th><th>{@link #translate} (bind, connect, accept, shutdown)</th>
 *     <th>{@link #toSocketException} (the classic option setters)</th></tr>
 * <tr><td>{@link ClosedChannelException} and subclasses</td><td>as it is</td><td>{@code SocketException("Socket is closed")}</td></tr>
 * <tr><td>any other {@link IOException} ({@code SocketException} too)</td><td>as it is</td><td>a {@code SocketException} with its message</td></tr>
 * <tr><td>{@link NotYetConnectedException}</td><td colspan="2">{@code SocketException("Socket is not connected")}</td></tr>
 * <tr><td>{@link AlreadyBoundException}</td><td colspan="2">{@code SocketException("Already bound")}</td></tr>
 * <tr><td>{@link AlreadyConnectedException}</td><td colspan="2">{@code SocketException("Already connected")}</td></tr>
 * <tr><td>{@link NotYetBoundException}</td><td colspan="2">{@code SocketException("Socket is not bound yet")}</td></tr>
 * <tr><td>{@link UnsupportedAddressTypeException}</td><td colspan="2">{@code SocketException("Unsupported address type")}</td></tr>
 * <tr><td>{@link UnresolvedAddressException}</td><td colspan="2">{@code SocketException("Unresolved address")}</td></tr>
 * <tr><td>any other runtime exception ({@code ConnectionPendingException},
 *     {@code IllegalBlockingModeException}, ...)</td><td colspan="2">as it is</td></tr>
 * </table>
 *
 * <p>Which operation goes through what, and what each checks itself first (the JDK's order):
 *
 * <table>
 * <caption>per operation</caption>
 * <tr><th>operation</th><th>what it throws</th></tr>
 * <tr><td>{@code Socket.bind}, {@code ServerSocket.bind}, {@code shutdownInput/Output}</td>
 *     <td>the channel's, {@link #translate}d</td></tr>
 * <tr><td>{@code Socket.connect}</td><td>null address: {@code IllegalArgumentException}; unresolved:
 *     {@link #ensureOpen "Socket is closed"}, {@link #alreadyConnected "Already connected"}, else the socket closes and
 *     {@link #unknownHost UnknownHostException}; negative timeout: {@code IllegalArgumentException};
 *     no {@code InetSocketAddress}: "Unsupported address type"; non-blocking:
 *     {@code IllegalBlockingModeException}; closed: {@link #closedInBlockingCall()}; then the
 *     channel's, {@link #translate}d (a failed connect closes the socket)</td></tr>
 * <tr><td>{@code ServerSocket.accept}</td><td>with {@code SO_TIMEOUT}: non-blocking:
 *     {@code IllegalBlockingModeException}, closed: {@link #closedInBlockingCall()}; without: a
 *     non-blocking channel accepts a waiting connection, else
 *     {@code IllegalBlockingModeException}; the channel's, {@link #translate}d</td></tr>
 * <tr><td>{@code getInputStream}, {@code getOutputStream}</td><td>{@link #ensureOpen "Socket is
 *     closed"}, {@link #notConnected "Socket is not connected"}, {@link #inputShutdown "Socket
 *     input is shutdown"}, {@link #outputShutdown "Socket output is shutdown"}</td></tr>
 * <tr><td>the streams' {@code read}, {@code write}, {@code available}</td><td>untranslated, as the
 *     JDK's streams: closed: {@code ClosedChannelException}; non-blocking:
 *     {@code IllegalBlockingModeException}; a write after {@code shutdownOutput}:
 *     {@link #writeAfterShutdown()}; then the channel's</td></tr>
 * <tr><td>{@code sendUrgentData}</td><td>untranslated: {@code ClosedChannelException},
 *     {@code NotYetConnectedException}; after {@code shutdownOutput}: {@link #closedInBlockingCall()}</td></tr>
 * <tr><td>the classic option setters and getters ({@code setTcpNoDelay}, ...)</td><td>the channel's,
 *     {@link #toSocketException}; {@code SO_TIMEOUT} and {@code OOBINLINE}: {@link #ensureOpen}</td></tr>
 * <tr><td>{@code setOption}, {@code getOption}</td><td>the channel's, untranslated</td></tr>
 * </table>
 *
 * <p>{@code AdaptorExceptionContractTest} runs every row on the JDK's provider and on ours.
 */
final class AdaptorExceptions {
    private static final String CLOSED = "Socket is closed";
    private static final String NOT_CONNECTED = "Socket is not connected";
    private static final String ALREADY_CONNECTED = "Already connected";
    // Net.translateToSocketException's table, in its order (no class here extends another)
    private static final List<Map.Entry<Class<? extends RuntimeException>, String>> UNCHECKED = List.of(
            Map.entry(NotYetConnectedException.class, NOT_CONNECTED),
            Map.entry(AlreadyBoundException.class, "Already bound"),
            Map.entry(AlreadyConnectedException.class, ALREADY_CONNECTED),
            Map.entry(NotYetBoundException.class, "Socket is not bound yet"),
            Map.entry(UnsupportedAddressTypeException.class, "Unsupported address type"),
            Map.entry(UnresolvedAddressException.class, "Unresolved address"));

    private AdaptorExceptions() {
    }

    /**
     * What an adaptor throws for {@code x}, thrown by the channel in bind, connect, accept or
     * shutdown ({@code Net.translateException}): an {@link IOException} as it is, a runtime
     * exception of the table as a {@link SocketException}. Any other runtime exception is
     * thrown from here as it is.
     */
    static IOException translate(Exception x) {
        if (x instanceof IOException e) {
            return e;
        }
        return toSocketException(x);
    }

    /**
     * What an adaptor's classic option setter or getter throws for {@code x}
     * ({@code Net.translateToSocketException}): a {@link SocketException} (these methods
     * declare no other checked exception), keeping {@code x} as its cause. A runtime exception
     * outside the table ({@code IllegalArgumentException} for a bad value, ...) is thrown from
     * here as it is.
     */
    static SocketException toSocketException(Exception x) {
        if (x instanceof SocketException e) {
            return e;
        }
        String message = null;
        if (x instanceof ClosedChannelException) {
            message = CLOSED;
        } else if (x instanceof IOException) {
            message = x.getMessage();
        } else {
            for (Map.Entry<Class<? extends RuntimeException>, String> row : UNCHECKED) {
                if (row.getKey().isInstance(x)) {
                    message = row.getValue();
                    break;
                }
            }
            if (message == null) {
                if (x instanceof RuntimeException e) {
                    throw e;
                }
                throw new IllegalStateException("untranslated exception", x);
            }
        }
        SocketException e = new SocketException(message);
        e.initCause(x);
        return e;
    }

    /** The adaptors' own check before an operation on a closed channel (getInputStream, SO_TIMEOUT, ...). */
    static void ensureOpen(NetworkChannel channel) throws SocketException {
        if (!channel.isOpen()) {
            throw new SocketException(CLOSED);
        }
    }

    /** The adaptors' own check before an operation that needs a connection. */
    static SocketException notConnected() {
        return new SocketException(NOT_CONNECTED);
    }

    /** The adaptors' own check: a connect to an unresolved address on a connected socket. */
    static SocketException alreadyConnected() {
        return new SocketException(ALREADY_CONNECTED);
    }

    /** {@code getInputStream} after {@code shutdownInput}. */
    static SocketException inputShutdown() {
        return new SocketException("Socket input is shutdown");
    }

    /** {@code getOutputStream} after {@code shutdownOutput}. */
    static SocketException outputShutdown() {
        return new SocketException("Socket output is shutdown");
    }

    /**
     * A connect to an unresolved address ({@code Socket.connect}'s contract). Its message is
     * the address, unless {@code jdk.includeInExceptions} (system property, else the security
     * property) leaves host names out of exceptions, as the JDK's adaptor decides.
     */
    static UnknownHostException unknownHost(InetSocketAddress remote) {
        return new UnknownHostException(hostInfoIncluded() ? remote.toString() : "");
    }

    // the categories "hostInfoExclSocket" (the JDK's default) and "hostInfo" both name the host
    private static boolean hostInfoIncluded() {
        String value = System.getProperty("jdk.includeInExceptions");
        if (value == null) {
            value = Security.getProperty("jdk.includeInExceptions");
        }
        if (value == null) {
            return false;
        }
        for (String token : value.split(",")) {
            token = token.trim();
            if (token.equalsIgnoreCase("hostInfoExclSocket") || token.equalsIgnoreCase("hostInfo")) {
                return true;
            }
        }
        return false;
    }

    /**
     * A blocking connect, an accept with {@code SO_TIMEOUT} or {@code sendUrgentData} after
     * {@code shutdownOutput}, on a closed channel (or output): the JDK's adaptor enters its
     * blocking bracket ({@code begin()}/{@code end()}) before it finds the channel closed, and
     * the bracket's end reports that as an asynchronous close (a
     * {@code ClosedChannelException} still, as the NIO contract promises).
     */
    static AsynchronousCloseException closedInBlockingCall() {
        return new AsynchronousCloseException();
    }

    /**
     * A stream write after {@code shutdownOutput}: the JDK's stream finds the output shut
     * before it writes and throws what {@code SocketChannel.write} documents for it.
     */
    static ClosedChannelException writeAfterShutdown() {
        return new ClosedChannelException();
    }
}
