package io.hadronio.app.load;

import java.net.InetSocketAddress;

/**
 * A server of the load mode: echoes every byte of every connection back to its sender
 * (no framing: the client knows its request size), and returns once at least one client
 * connected and every connection it accepted has closed.
 */
interface EchoServer {
    /** Listens on {@code address}, prints "listening on HOST:PORT", serves until the clients are gone. */
    void serve(InetSocketAddress address) throws Exception;
}
