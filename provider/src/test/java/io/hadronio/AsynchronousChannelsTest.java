package io.hadronio;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.async.HadronioAsynchronousChannelGroup;
import io.hadronio.async.HadronioAsynchronousSocketChannel;
import io.hadronio.config.HadronioConfig;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.AsynchronousChannelGroup;
import java.nio.channels.AsynchronousServerSocketChannel;
import java.nio.channels.AsynchronousSocketChannel;
import java.nio.channels.CompletionHandler;
import java.util.Properties;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What hadroNIO's NIO.2 does beyond the contract ({@link AsynchronousContractTest}): its
 * channels ride hadroNIO's connections (between two of them, UCX), the default group's
 * system properties, and the JDK's own channels when hadroNIO runs unaccelerated.
 */
@Timeout(60)
class AsynchronousChannelsTest extends ContractSupport {
    private static final HadronioAsynchronousChannelProvider ASYNC = AsynchronousContractTest.ASYNC;

    @Test
    void shouldCarryAConnectionBetweenTwoHadronioChannelsOverUcx() throws Exception {
        AsynchronousChannelGroup group = ASYNC.openAsynchronousChannelGroup(1, AsynchronousContractTest.named("ucx"));
        try (AsynchronousContractTest.Pair p = AsynchronousContractTest.connect(ASYNC, group)) {
            assertInstanceOf(HadronioAsynchronousChannelGroup.class, group);
            assertInstanceOf(HadronioAsynchronousSocketChannel.class, p.client());
            ByteBuffer ping = ByteBuffer.allocateDirect(8);
            ByteBuffer pong = ByteBuffer.allocateDirect(8);
            // the connection starts on the kernel socket (or, eager, on UCX) and moves to UCX with traffic
            for (long i = 0; !(p.client().getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:")
                    && p.server().getOption(HadronioSocketOptions.TRANSPORT).startsWith("ucx:")); i++) {
                assertTrue(i < 200_000, "not on UCX after " + i + " round trips: "
                        + p.client().getOption(HadronioSocketOptions.TRANSPORT) + " / "
                        + p.server().getOption(HadronioSocketOptions.TRANSPORT));
                ping.clear().putLong(0, i);
                while (ping.hasRemaining()) {
                    p.client().write(ping).get(5, TimeUnit.SECONDS);
                }
                pong.clear();
                while (pong.hasRemaining()) {
                    p.server().read(pong).get(5, TimeUnit.SECONDS);
                }
                assertEquals(i, pong.getLong(0));
            }
        } finally {
            group.shutdownNow();
            assertTrue(group.awaitTermination(10, TimeUnit.SECONDS));
        }
    }

    /** A factory the default-group property names (public, with a public no-argument constructor). */
    public static final class NamingFactory implements ThreadFactory {
        @Override
        public Thread newThread(Runnable r) {
            Thread t = new Thread(r, "named-by-property");
            t.setDaemon(true);
            return t;
        }
    }

    @Test
    void shouldMakeTheDefaultGroupAsItsSystemPropertiesSay() throws Exception {
        System.setProperty("java.nio.channels.DefaultThreadPool.threadFactory", NamingFactory.class.getName());
        System.setProperty("java.nio.channels.DefaultThreadPool.initialSize", "1");
        HadronioAsynchronousChannelProvider provider;
        try {
            provider = new HadronioAsynchronousChannelProvider(HADRONIO);
            // the default group is made with the first channel that has no group
            try (AsynchronousContractTest.Pair p = AsynchronousContractTest.connect(provider, null)) {
                CompletableFuture<String> thread = new CompletableFuture<>();
                p.server().read(ByteBuffer.allocate(1), null, new CompletionHandler<Integer, Void>() {
                    @Override
                    public void completed(Integer r, Void a) {
                        thread.complete(Thread.currentThread().getName());
                    }

                    @Override
                    public void failed(Throwable e, Void a) {
                        thread.completeExceptionally(e);
                    }
                });
                p.client().write(ByteBuffer.wrap(new byte[] {1})).get(5, TimeUnit.SECONDS);
                assertEquals("named-by-property", thread.get(5, TimeUnit.SECONDS));
            }
        } finally {
            System.clearProperty("java.nio.channels.DefaultThreadPool.threadFactory");
            System.clearProperty("java.nio.channels.DefaultThreadPool.initialSize");
        }
    }

    @Test
    void shouldHandOutTheJdksChannelsWhenDisabled() throws Exception {
        Properties off = new Properties();
        off.setProperty("hadronio.enabled", "false");
        HadronioAsynchronousChannelProvider provider = new HadronioAsynchronousChannelProvider(
                new HadronioProvider(HadronioConfig.from(off)));
        AsynchronousChannelGroup group = provider.openAsynchronousChannelGroup(1, AsynchronousContractTest.named("off"));
        try (AsynchronousServerSocketChannel listener = provider.openAsynchronousServerSocketChannel(null);
             AsynchronousSocketChannel client = provider.openAsynchronousSocketChannel(group)) {
            assertFalse(group instanceof HadronioAsynchronousChannelGroup);
            assertSame(provider.platform(), group.provider());
            assertTrue(client.getClass().getName().startsWith("sun.nio.ch."), client.getClass().getName());
            assertTrue(listener.getClass().getName().startsWith("sun.nio.ch."), listener.getClass().getName());
            listener.bind(new InetSocketAddress(LOOPBACK, 0));
            var accepted = listener.accept();
            client.connect(listener.getLocalAddress()).get(5, TimeUnit.SECONDS);
            accepted.get(5, TimeUnit.SECONDS).close();
        } finally {
            group.shutdownNow();
        }
    }
}
