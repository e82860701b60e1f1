package io.hadronio.ucx;

import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Random;

/**
 * Run in a child JVM by {@link UcxErrorHandlingTest}: gives {@link UcxWorker#connect}
 * corrupted worker addresses (all zeros, truncated, random bytes) and prints one line
 * per case, {@code case <name>: <outcome>}, then {@code DONE}. A crash or abort inside
 * UCX kills only this JVM, and the test sees which case was last.
 */
public final class UcxCorruptAddressProbe {
    static final String DONE = "DONE";

    private UcxCorruptAddressProbe() {
    }

    /** The corrupted addresses, derived from a real address of this UCX installation. */
    static Map<String, byte[]> cases(byte[] real) {
        Map<String, byte[]> cases = new LinkedHashMap<>();
        for (int length : new int[] {1, 8, 64, real.length, 1024}) {
            cases.put("zeros-" + length, new byte[length]);
        }
        cases.put("ones-64", filled(64, (byte) 0xFF));
        for (int length : new int[] {1, 2, 8, 9, 16, real.length / 3, real.length / 2}) {
            cases.put("truncated-" + length + "-of-" + real.length, Arrays.copyOf(real, length));
        }
        Random random = new Random(7);
        for (int i = 0; i < 20; i++) {
            byte[] bytes = new byte[1 + random.nextInt(400)];
            random.nextBytes(bytes);
            cases.put("random-" + i + "-" + bytes.length, bytes);
        }
        for (int i = 0; i < 20; i++) {
            byte[] bytes = new byte[1 + random.nextInt(400)];
            random.nextBytes(bytes);
            bytes[0] = (byte) ((bytes[0] & 0xF0) | (i & 1)); // a version UCX knows: the rest reaches its parser
            cases.put("random-known-version-" + i + "-" + bytes.length, bytes);
        }
        byte[] header = Arrays.copyOf(real, real.length);
        for (int i = 1; i < header.length; i++) {
            header[i] = (byte) random.nextInt();
        }
        cases.put("real-header-random-rest", header);
        return cases;
    }

    private static byte[] filled(int length, byte value) {
        byte[] bytes = new byte[length];
        Arrays.fill(bytes, value);
        return bytes;
    }

    public static void main(String[] args) throws Exception {
        Thread watchdog = new Thread(() -> {
            try {
                Thread.sleep(60_000);
            } catch (InterruptedException e) {
                return;
            }
            System.out.println("watchdog expired");
            Runtime.getRuntime().halt(3); // the test went away without killing us
        }, "watchdog");
        watchdog.setDaemon(true);
        watchdog.start();
        try (UcxContext context = UcxContext.builder().features(Feature.TAG).open()) {
            UcxWorker worker = context.newWorker(ThreadMode.SINGLE, "probe");
            UcxWorker other = context.newWorker(ThreadMode.SINGLE, "other");
            for (Map.Entry<String, byte[]> c : cases(other.address()).entrySet()) {
                System.out.println("start " + c.getKey());
                System.out.flush();
                String outcome;
                try {
                    UcxEndpoint endpoint = worker.connect(c.getValue(), ErrorMode.NONE);
                    outcome = "CONNECTED " + endpoint.transports();
                    endpoint.closeNonBlocking(true);
                } catch (UcxException e) {
                    outcome = "UcxException " + e.status() + " " + e.getMessage();
                } catch (RuntimeException e) {
                    outcome = e.getClass().getSimpleName() + " " + e.getMessage();
                }
                System.out.println("case " + c.getKey() + ": " + outcome);
                System.out.flush();
            }
            // the worker is still usable: a real address still connects
            UcxEndpoint good = worker.connect(other.address(), ErrorMode.NONE);
            System.out.println("case real: CONNECTED " + good.transports());
            System.out.println("outstanding " + worker.outstandingRequests());
        }
        System.out.println(DONE);
        System.out.flush();
    }
}
