package io.hadronio.path;

import io.hadronio.connection.LocalRendezvous;

import io.hadronio.connection.ConnectionLifecycle;
import io.hadronio.runtime.UcxRuntime;

import io.hadronio.nio.HadronioSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.locks.ReentrantLock;

/** What a test may look at inside a hadroNIO channel, through the channel's and the runtime's seams. */
public final class ChannelInternals {
    private ChannelInternals() {
    }

    public static ConnectionLifecycle lifeOf(SocketChannel channel) {
        return ((HadronioSocketChannel) channel).lifecycle();
    }

    /** Raw bytes the channel wrote before its output moved to UCX (its switch point), or -1 while it is raw. */
    public static long switchPoint(SocketChannel channel) {
        return lifeOf(channel).upgrade().switchedAt();
    }

    /** The upgrade wants the channel converted and waits for the threads inside it to leave. */
    public static boolean conversionPending(SocketChannel channel) {
        return ((HadronioSocketChannel) channel).conversionPending();
    }

    /** The rendezvous of the channel's provider, whose thread runs every upgrade session. */
    public static LocalRendezvous rendezvousOf(SocketChannel channel) {
        return ((HadronioSocketChannel) channel).runtime().peers().rendezvous();
    }

    /** Upgrade sessions the channel's provider holds parked, waiting for their connection to be accepted. */
    public static int parkedUpgradeSessions(SocketChannel channel) {
        return ((HadronioSocketChannel) channel).runtime().upgrades().parkedSessions();
    }

    /**
     * The lock of the worker group that carries the channel's connection: while a test holds
     * it, nothing progresses that worker (no application thread, not the control loop).
     */
    public static ReentrantLock workerLockOf(SocketChannel channel) {
        return ((Connection) lifeOf(channel).connection()).group().lock;
    }

    /**
     * Holds the rendezvous thread of the channel's provider, which runs every upgrade session's
     * messages, until the returned action runs: a SWITCH, CLOSING or DONE waits meanwhile.
     */
    public static Runnable holdRendezvous(SocketChannel channel) throws InterruptedException {
        UcxRuntime runtime = ((HadronioSocketChannel) channel).runtime();
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
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
}
