package io.hadronio.it;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.config.HadronioConfig;
import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Predicate;
import org.junit.jupiter.api.BeforeAll;

/** What the tests share: the check that this JVM runs on hadroNIO, connecting to a peer, threads. */
abstract class ItSupport {
    static final InetAddress LOOPBACK = InetAddress.getLoopbackAddress();

    // dedicated daemon threads: blocking channel calls must not starve a small common pool
    static final ExecutorService THREADS = Executors.newCachedThreadPool(r -> {
        Thread t = new Thread(r, "it-worker");
        t.setDaemon(true);
        return t;
    });

    @BeforeAll
    static void runsOnHadronio() {
        HadronioProvider provider = assertInstanceOf(HadronioProvider.class, SelectorProvider.provider(),
                "the test JVM must run with -Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider");
        assertTrue(provider.isAccelerated(), "UCX must be available for the integration tests");
    }

    static HadronioProvider provider() {
        return (HadronioProvider) SelectorProvider.provider();
    }

    static InetSocketAddress loopback(int port) {
        return new InetSocketAddress(LOOPBACK, port);
    }

    /** Connects to a {@link Peer} server and sends it a command. */
    static SocketChannel command(int port, char command, long n) throws IOException {
        SocketChannel ch = SocketChannel.open(loopback(port));
        ByteBuffer header = ByteBuffer.allocate(9).put((byte) command).putLong(n).flip();
        while (header.hasRemaining()) {
            ch.write(header);
        }
        return ch;
    }

    /**
     * Child JVM options and a provider for tests of what UCX-carried connections do (a peer's
     * death, back pressure by the receiver's window): the eager mode
     * ({@code -Dhadronio.upgrade=false}), where a connection is on UCX from connect on,
     * whatever mode the suite runs in (upgrade mode, the default, unless -Dhadronio.upgrade=false). In upgrade
     * mode a connection starts as kernel TCP and behaves as the kernel's until it moves.
     */
    static final List<String> EAGER_MODE = List.of("-Dhadronio.upgrade=false");
    /** Child JVM options for upgrade mode, whatever mode the suite runs in. */
    static final List<String> UPGRADE_MODE = List.of("-Dhadronio.upgrade=true");
    // a provider per connection mode (hadronio.upgrade), made once: the suite's own where it matches
    private static final java.util.Map<Boolean, SelectorProvider> MODE_PROVIDERS = new java.util.HashMap<>();

    /** A provider in the eager mode (on UCX from connect on), whatever the suite's mode. */
    static SelectorProvider eagerModeProvider() {
        return modeProvider(false);
    }

    /** A provider in upgrade mode (connections start on kernel TCP and move to UCX), whatever the suite's mode. */
    static SelectorProvider upgradeModeProvider() {
        return modeProvider(true);
    }

    private static synchronized SelectorProvider modeProvider(boolean upgrade) {
        return MODE_PROVIDERS.computeIfAbsent(upgrade, u -> {
            if (u == ChildJvm.UPGRADE_MODE) {
                return SelectorProvider.provider();
            }
            Properties p = new Properties();
            p.putAll(System.getProperties());
            p.setProperty("hadronio.upgrade", String.valueOf(u));
            return new HadronioProvider(HadronioConfig.from(p));
        });
    }

    /** {@link #command}, on a channel of {@link #eagerModeProvider()}: on UCX from connect on. */
    static SocketChannel onUcx(int port, char command, long n) throws IOException {
        return command(eagerModeProvider(), port, command, n);
    }

    /** Connects a channel of {@code provider} to a {@link Peer} server and sends it {@code command} and {@code n}. */
    static SocketChannel command(SelectorProvider provider, int port, char command, long n) throws IOException {
        SocketChannel ch = provider.openSocketChannel();
        try {
            ch.connect(loopback(port));
            ByteBuffer header = ByteBuffer.allocate(9).put((byte) command).putLong(n).flip();
            while (header.hasRemaining()) {
                ch.write(header);
            }
            return ch;
        } catch (IOException | RuntimeException e) {
            ch.close();
            throw e;
        }
    }

    static <T> Future<T> async(Callable<T> task) {
        return THREADS.submit(task);
    }

    /** A task on its own thread, so that tests can see where it blocks and interrupt it. */
    record Task<T>(Thread thread, java.util.concurrent.CompletableFuture<T> result) {
        /** The task's outcome, or what it threw (unwrapped), within the hang guard. */
        Throwable failure() throws InterruptedException {
            try {
                result.get(ChildJvm.LINE_TIMEOUT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                return null;
            } catch (java.util.concurrent.ExecutionException e) {
                return e.getCause();
            } catch (java.util.concurrent.TimeoutException e) {
                throw new AssertionError("task " + thread.getName() + " still running: "
                        + Arrays.toString(thread.getStackTrace()));
            }
        }
    }

    static <T> Task<T> start(String name, Callable<T> body) {
        java.util.concurrent.CompletableFuture<T> result = new java.util.concurrent.CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                result.complete(body.call());
            } catch (Throwable e) {
                result.completeExceptionally(e);
            }
        }, name);
        t.setDaemon(true);
        t.start();
        return new Task<>(t, result);
    }

    /**
     * Waits until {@code thread} is parked or polling inside a frame that matches
     * {@code frame} (e.g. the provider's wait inside a read), so that what the test does
     * next happens to a thread that is really blocked, not one about to start.
     */
    static void awaitBlockedIn(Thread thread, Predicate<StackTraceElement> frame) throws InterruptedException {
        while (true) {
            StackTraceElement[] stack = thread.getStackTrace();
            if (Arrays.stream(stack).anyMatch(frame)) {
                return;
            }
            if (!thread.isAlive()) {
                throw new AssertionError("thread " + thread.getName() + " ended before blocking");
            }
            Thread.sleep(5);
        }
    }

    /**
     * A frame of hadroNIO waiting in a blocked read or write: for UCX; (a connection in
     * upgrade mode moving to UCX) in the emulated blocking wait on the socket; or (a local
     * connection in upgrade mode that is plain so far, as the JDK's) in the kernel socket's
     * own blocking read or write.
     */
    static boolean hadronioWait(StackTraceElement e) {
        String c = e.getClassName();
        String m = e.getMethodName();
        return (c.startsWith("io.hadronio.worker.") || c.startsWith("io.hadronio.path.")) && m.equals("await")
                || c.equals("io.hadronio.platform.PollSet") && m.equals("pollOne")
                || c.equals("sun.nio.ch.SocketDispatcher") && (m.startsWith("read") || m.startsWith("write"))
                || c.equals("sun.nio.ch.Net") && m.equals("poll");
    }
}
