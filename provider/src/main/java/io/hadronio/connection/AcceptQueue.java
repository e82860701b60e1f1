package io.hadronio.connection;

import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** Where the control loop delivers connections whose handshake ended: a server channel. */
public interface AcceptQueue {
    /**
     * A connection the control thread accepted on the server channel's listener (while
     * registered clients are expected): plain, it waits for accept(); otherwise its
     * handshake starts.
     */
    void accepted(SocketChannel child);

    /** An accelerated connection ready for {@code accept()}, open. */
    void deliver(ConnectionLifecycle connection);

    /**
     * A plain TCP connection ready for {@code accept()} (non-blocking, in no selector);
     * {@code taken}: bytes already read from it that belong to the application, or null.
     */
    void deliverPlain(SocketChannel tcp, ByteBuffer taken);
}
