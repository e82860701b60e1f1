package io.hadronio.transport;

import java.lang.reflect.Field;
import java.nio.channels.SocketChannel;

/** What a test may look at inside a hadroNIO channel (the channel's private fields). */
public final class ChannelInternals {
    private ChannelInternals() {
    }

    public static ConnectionLifecycle lifeOf(SocketChannel channel) throws ReflectiveOperationException {
        return (ConnectionLifecycle) field(channel, "life");
    }

    /** The upgrade wants the channel converted and waits for the threads inside it to leave. */
    public static boolean conversionPending(SocketChannel channel) throws ReflectiveOperationException {
        return field(channel, "afterConversion") != null;
    }

    /** Upgrade sessions the channel's provider holds parked, waiting for their connection to be accepted. */
    public static int parkedUpgradeSessions(SocketChannel channel) throws ReflectiveOperationException {
        Upgrades upgrades = ((UcxRuntime) field(channel, "runtime")).upgrades();
        synchronized (upgrades) {
            return ((java.util.Map<?, ?>) field(upgrades, "sessions")).size();
        }
    }

    /**
     * The lock of the worker group that carries the channel's connection: while a test holds
     * it, nothing progresses that worker (no application thread, not the control loop).
     */
    public static java.util.concurrent.locks.ReentrantLock workerLockOf(SocketChannel channel)
            throws ReflectiveOperationException {
        Connection c = lifeOf(channel).connection();
        return (java.util.concurrent.locks.ReentrantLock) field(field(c, "group"), "lock");
    }

    /**
     * Holds the rendezvous thread of the channel's provider, which runs every upgrade session's
     * messages, until the returned action runs: a SWITCH, CLOSING or DONE waits meanwhile.
     */
    public static Runnable holdRendezvous(SocketChannel channel) throws ReflectiveOperationException, InterruptedException {
        UcxRuntime runtime = (UcxRuntime) field(channel, "runtime");
        java.util.concurrent.CountDownLatch held = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.CountDownLatch release = new java.util.concurrent.CountDownLatch(1);
        runtime.peers().rendezvous().execute(() -> {
            held.countDown();
            boolean interrupted = false;
            while (true) {
                try {
                    release.await();
                    break;
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        });
        held.await();
        return release::countDown;
    }

    private static Object field(Object owner, String name) throws ReflectiveOperationException {
        Field f = owner.getClass().getDeclaredField(name);
        f.setAccessible(true);
        return f.get(owner);
    }
}
