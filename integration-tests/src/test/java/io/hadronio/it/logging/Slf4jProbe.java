package io.hadronio.it.logging;

import java.lang.reflect.Method;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;

/**
 * An application that logs through SLF4J only when SLF4J is on its class path, as JGroups
 * does, and through {@code System.out} otherwise. It first uses NIO (a loopback
 * connection, so that the provider is up and has logged before SLF4J is looked for), then
 * prints what it sees: {@code SLF4J absent}, or {@code SLF4J present} with where
 * {@code org.slf4j.LoggerFactory} came from and the logger factory SLF4J bound to, and
 * logs one {@code APPLOG} line the way it chose; {@code DONE} last. No reference to SLF4J in the byte code:
 * it must run without it.
 */
public final class Slf4jProbe {
    private Slf4jProbe() {
    }

    public static void main(String[] args) throws Exception {
        System.out.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        try (ServerSocketChannel server = ServerSocketChannel.open()) {
            server.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            try (SocketChannel client = SocketChannel.open(server.getLocalAddress());
                 SocketChannel peer = server.accept()) {
                System.out.println("CHANNEL " + client.getClass().getName());
                client.write(ByteBuffer.wrap("ping".getBytes()));
                ByteBuffer in = ByteBuffer.allocate(4);
                while (in.hasRemaining()) {
                    peer.read(in);
                }
                System.out.println("ECHO " + new String(in.array()));
            }
        }
        Class<?> factory;
        try {
            factory = Class.forName("org.slf4j.LoggerFactory");
        } catch (ClassNotFoundException e) {
            System.out.println("SLF4J absent"
                    + (ClassLoader.getSystemResource("org/slf4j/Logger.class") == null ? "" : " (but org/slf4j/Logger.class is)"));
            System.out.println("APPLOG through System.out: no SLF4J");
            System.out.println("DONE");
            return;
        }
        Object loggerFactory = factory.getMethod("getILoggerFactory").invoke(null);
        System.out.println("SLF4J present from " + factory.getProtectionDomain().getCodeSource().getLocation()
                + " bound to " + loggerFactory.getClass().getName());
        Object logger = factory.getMethod("getLogger", String.class).invoke(null, "probe");
        Method info = Class.forName("org.slf4j.Logger").getMethod("info", String.class);
        info.invoke(logger, "APPLOG through SLF4J");
        System.err.flush();
        System.out.println("DONE");
    }
}
