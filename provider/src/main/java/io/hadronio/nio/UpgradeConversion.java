package io.hadronio.nio;

import io.hadronio.path.ChannelIo;
import io.hadronio.path.KernelStream;
import io.hadronio.connection.ConnectionLifecycle;
import java.io.IOException;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * The conversion of a plain local connection for its move to UCX: its socket becomes
 * non-blocking, and blocking is emulated ({@link io.hadronio.path.UpgradingKernelPath}), before
 * anything can switch a direction. A thread asleep inside the socket (a blocking read waiting
 * in the kernel, as with the JDK) would hold the raw input across the peer's switch point, so
 * the conversion happens when no thread is inside the channel ({@link ChannelLocks#runAlone}):
 * now if none is, else when the last one leaves, or at the next read or write. The move's
 * other step that waits for the channel's threads is here too: the switch of an idle output
 * ({@link #switchIdleOutput}).
 */
final class UpgradeConversion {
    private final ChannelLocks locks;
    private final ConnectionLifecycle life;
    private final KernelStream kernel;
    private final ChannelIo io;
    // the channel's blocking-mode lock: the conversion changes the socket's mode
    private final Object blockingLock;
    // the channel's step after a lock's release: a close or a conversion left to the holder
    private final Runnable afterUnlock;
    // what runs once the socket is non-blocking (the upgrade's next step) while a conversion
    // is wanted; null otherwise
    private volatile Runnable after;
    // the step runAlone runs, and while it tries: no lambda made per call
    private final BooleanSupplier wanted = this::isWanted;
    private final Supplier<Runnable> convert = this::convertLocked;

    UpgradeConversion(ChannelLocks locks, ConnectionLifecycle life, KernelStream kernel, ChannelIo io,
                      Object blockingLock, Runnable afterUnlock) {
        this.locks = locks;
        this.afterUnlock = afterUnlock;
        this.life = life;
        this.kernel = kernel;
        this.io = io;
        this.blockingLock = blockingLock;
    }

    /** The connection may move to UCX: its upgrade converts the channel and switches its idle output through us. */
    void attach() {
        life.upgrade().idleOutputSwitch(this::switchIdleOutput);
        life.upgrade().converter(this::request);
    }

    /**
     * The UCX half is ready (rendezvous thread): if no writer is inside, our output moves to
     * UCX now; a writer that is inside moves it at its next write.
     */
    void switchIdleOutput() {
        if (locks.write.tryLock()) {
            try {
                if (io.isOpen() && life.outputRaw()) {
                    life.upgrade().trySwitchOutput();
                }
            } finally {
                locks.write.unlock();
            }
            // a close while we held the write lock left its last step to us: else the peer never
            // reads its end (UpgradeTest#shouldEndTheStreamWhenTheServerClosesAsItsIdleOutputMoves)
            afterUnlock.run();
        }
    }

    /** The upgrade wants to go on: convert, then {@code then} runs. Any thread. */
    void request(Runnable then) {
        after = then;
        tryConvert();
    }

    /** Converts when the upgrade wants it (or, {@code dueNow}, starts it) and no other thread is inside. */
    void ifWanted(boolean dueNow) {
        if (dueNow) {
            request(life.upgrade()::begin);
        } else if (after != null) {
            tryConvert();
        }
    }

    /** A conversion waits for the threads inside the channel to leave. */
    boolean isWanted() {
        return after != null;
    }

    /** Converts once no other thread holds the read or write lock. */
    void tryConvert() {
        locks.runAlone(wanted, convert);
    }

    /** Makes the socket non-blocking for the upgrade (under both locks): what runs next, or null. */
    private Runnable convertLocked() {
        synchronized (blockingLock) {
            Runnable then = after;
            after = null;
            if (then == null || life.isUpgradable()) {
                return null;
            }
            if (!io.isOpen() || life.state() != ConnectionLifecycle.OPEN || life.isInputShut()
                    || !life.upgrade().isCandidate()) {
                // closed, or the input shut down in the kernel: it stays plain
                life.upgrade().stayPlain();
                return null;
            }
            try {
                kernel.configureBlocking(false);
            } catch (IOException e) {
                life.upgrade().stayPlain();
                return null;
            }
            life.upgrade().converted();
            return then;
        }
    }
}
