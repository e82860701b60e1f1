package io.hadronio.nio;

import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * A socket channel's read and write locks, and the one rule that uses both: a step that must
 * run with no other thread inside the channel (the close's last step, the upgrade's
 * conversion) runs now if no other thread holds either lock, and otherwise is left to the
 * holder, which runs it as it leaves ({@link #runAlone} again, from the channel's
 * {@code afterUnlock}). Nothing ever waits for the other thread to leave: a close may run in
 * the thread that interrupts a reader, or in the reader itself.
 *
 * <p>Lock order: the read lock, then the write lock.
 */
final class ChannelLocks {
    final ReentrantLock read = new ReentrantLock();
    final ReentrantLock write = new ReentrantLock();

    /**
     * Runs {@code step} under both locks, while {@code wanted}, once no other thread holds
     * either (reentrant: a reader or writer inside needs only the other), and then what
     * {@code step} returned, with the locks released. One that fails on a lock leaves the step
     * to its holder, which runs it after it released the lock. Two threads can each fail on the
     * lock the other holds: one that took the read lock and found the write lock held, and the
     * write lock's holder, which released it and then found the read lock held. So one that
     * failed on the write lock tries again once it released the read lock, unless the write
     * lock is still held (its holder then runs the step).
     */
    void runAlone(BooleanSupplier wanted, Supplier<Runnable> step) {
        while (wanted.getAsBoolean()) {
            if (!read.tryLock()) {
                return; // its holder runs the step after it released it
            }
            boolean ran = false;
            Runnable then = null;
            try {
                if (write.tryLock()) {
                    ran = true;
                    try {
                        then = step.get();
                    } finally {
                        write.unlock();
                    }
                }
            } finally {
                read.unlock();
                if (then != null) {
                    then.run();
                }
            }
            if (ran || write.isLocked()) {
                return;
            }
            Thread.onSpinWait();
        }
    }
}
