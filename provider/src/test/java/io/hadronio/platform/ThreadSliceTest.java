package io.hadronio.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** A thread's slice is set and given back, by the thread itself or by another thread of the process. */
class ThreadSliceTest {
    @Test
    void setsAndRestoresTheCallersSlice() {
        long tid = ThreadSlice.currentTid();
        assertTrue(tid > 0, "gettid");
        long was = ThreadSlice.set(tid, 100_000);
        assumeTrue(was >= 0, "this kernel or sandbox refuses sched_setattr");
        assertEquals(100_000, ThreadSlice.set(tid, was), "the slice set is the one read back");
        assertEquals(was, ThreadSlice.set(tid, was));
    }

    @Test
    void anotherThreadGivesTheSliceBack() throws Exception {
        long[] tid = new long[1];
        long[] was = new long[1];
        CountDownLatch shortened = new CountDownLatch(1);
        CountDownLatch restored = new CountDownLatch(1);
        Thread t = new Thread(() -> {
            tid[0] = ThreadSlice.currentTid();
            was[0] = ThreadSlice.set(tid[0], 100_000);
            shortened.countDown();
            try {
                restored.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        t.start();
        try {
            shortened.await();
            assumeTrue(was[0] >= 0, "this kernel or sandbox refuses sched_setattr");
            assertEquals(100_000, ThreadSlice.set(tid[0], was[0]));
        } finally {
            restored.countDown();
            t.join();
        }
    }

    @Test
    void aThreadThatIsGoneIsRefusedQuietly() throws Exception {
        long[] tid = new long[1];
        Thread t = new Thread(() -> tid[0] = ThreadSlice.currentTid());
        t.start();
        t.join();
        // the kernel thread may outlive the Java thread for a moment: then it is still set
        long r = ThreadSlice.set(tid[0], 0);
        assertTrue(r == -1 || r >= 0, "no exception, and -1 for a thread that is gone");
    }
}
