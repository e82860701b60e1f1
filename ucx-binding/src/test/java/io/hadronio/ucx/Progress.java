package io.hadronio.ucx;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/**
 * Progress loops for tests: they spin on the workers until a condition holds, and give
 * up with an {@link AssertionError} after a generous bound instead of hanging (the
 * bound guards against hangs; no test asserts on how long anything takes).
 */
final class Progress {
    static final Duration HANG_GUARD = Duration.ofSeconds(30);

    private Progress() {
    }

    /** Progresses the workers until {@code done} is true. */
    static void until(BooleanSupplier done, Supplier<String> what, UcxWorker... workers) {
        long deadline = System.nanoTime() + HANG_GUARD.toNanos();
        while (!done.getAsBoolean()) {
            for (UcxWorker w : workers) {
                w.progress();
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("no progress within " + HANG_GUARD + ": " + what.get());
            }
        }
    }

    /**
     * Progresses the workers until the request of {@code owner} is no longer in
     * progress; returns its status without releasing it.
     */
    static int status(UcxWorker owner, long request, UcxWorker... others) {
        int[] status = {UcsStatus.INPROGRESS};
        until(() -> (status[0] = owner.status(request)) != UcsStatus.INPROGRESS,
                () -> "request 0x" + Long.toHexString(request) + " of " + owner, concat(owner, others));
        return status[0];
    }

    /** Like {@link #status}, then releases the request. */
    static int complete(UcxWorker owner, long request, UcxWorker... others) {
        int status = status(owner, request, others);
        owner.release(request);
        return status;
    }

    /**
     * Waits for a tag receive posted on {@code owner}, releases it, and returns the
     * received length (the status must be OK). A receive that completed inside
     * {@code tagReceive} ({@link UcxWorker#COMPLETED}) has its length in
     * {@link UcxWorker#receivedLength()} already.
     */
    static long receive(UcxWorker owner, long request, UcxWorker... others) {
        if (request == UcxWorker.COMPLETED) {
            return owner.receivedLength();
        }
        int[] status = {UcsStatus.INPROGRESS};
        until(() -> (status[0] = owner.receiveStatus(request)) != UcsStatus.INPROGRESS,
                () -> "receive 0x" + Long.toHexString(request) + " of " + owner, concat(owner, others));
        long length = owner.receivedLength();
        owner.release(request);
        if (status[0] != UcsStatus.OK) {
            throw new AssertionError("receive failed: " + UcsStatus.describe(status[0]) + " (" + status[0] + ")");
        }
        return length;
    }

    private static UcxWorker[] concat(UcxWorker first, UcxWorker... rest) {
        UcxWorker[] all = new UcxWorker[rest.length + 1];
        all[0] = first;
        System.arraycopy(rest, 0, all, 1, rest.length);
        return all;
    }

    // ---- worker address exchange over a plain TCP connection ----------------------------

    static void writeAddress(DataOutputStream out, byte[] address) throws IOException {
        out.writeInt(address.length);
        out.write(address);
        out.flush();
    }

    static byte[] readAddress(DataInputStream in) throws IOException {
        int length = in.readInt();
        if (length <= 0 || length > 65536) {
            throw new IOException("implausible worker address length " + length);
        }
        byte[] address = new byte[length];
        in.readFully(address);
        return address;
    }
}
