package io.hadronio.transport;

import java.nio.channels.SocketChannel;

/** Where the control loop delivers connections whose handshake completed: a server channel. */
public interface AcceptQueue {
    /** Room for more connections (the backlog is not exhausted). */
    boolean hasRoom();

    /** A connection ready for {@code accept()}: its TCP control socket (non-blocking) and UCX half. */
    void deliver(SocketChannel tcp, Connection connection, ControlLoop.Control control);
}
