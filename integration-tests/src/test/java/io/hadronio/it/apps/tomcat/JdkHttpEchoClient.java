package io.hadronio.it.apps.tomcat;

import io.hadronio.it.apps.EchoBodies;
import io.hadronio.it.apps.ProviderProbe;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The JDK's own {@link HttpClient} (HTTP/1.1; it runs on the JVM's NIO provider too) against
 * {@link TomcatEchoServer}: one request of each of {@link EchoBodies#SIZES}, then
 * {@code count} requests of 0..4 KiB with {@code inFlight} outstanding, every answer checked
 * byte for byte. Prints {@code CHECKED n} per phase, {@code RESULT requests/s p50_us p99_us}
 * and {@code DONE}, then keeps its connections until stdin closes (so the server can look at
 * them); a mismatch is an {@code ERROR} line and exit status 1.
 *
 * <p>Arguments: {@code port inFlight count}.
 */
public final class JdkHttpEchoClient {
    private static final ConcurrentLinkedQueue<String> ERRORS = new ConcurrentLinkedQueue<>();
    // ids run on across phases, so each body is unique
    private static long nextId;

    private JdkHttpEchoClient() {
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        int port = Integer.parseInt(args[0]);
        int inFlight = Integer.parseInt(args[1]);
        int count = Integer.parseInt(args[2]);
        URI uri = URI.create("http://127.0.0.1:" + port + "/echo");
        HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
        run(client, uri, EchoBodies.SIZES.length, 4, i -> EchoBodies.SIZES[(int) i], null);
        System.out.println("CHECKED " + EchoBodies.SIZES.length);
        Random random = new Random(42);
        int[] small = new int[count];
        Arrays.setAll(small, i -> random.nextInt(4097));
        long[] latencies = new long[count];
        long start = System.nanoTime();
        run(client, uri, count, inFlight, i -> small[(int) i - EchoBodies.SIZES.length], latencies);
        long elapsed = System.nanoTime() - start;
        System.out.println("CHECKED " + count);
        if (!ERRORS.isEmpty()) {
            ERRORS.stream().limit(20).forEach(e -> System.out.println("ERROR " + e));
            System.exit(1);
        }
        Arrays.sort(latencies);
        System.out.printf("RESULT %.0f %d %d%n", count * 1e9 / elapsed, latencies[count / 2] / 1000,
                latencies[(int) (count * 0.99)] / 1000);
        System.out.println("DONE");
        System.out.flush();
        while (System.in.read() >= 0) {
            // keep the pooled connections open until the test is done with the server
        }
    }

    /** The failure and its causes, innermost last: the HttpClient hides what the channel threw behind its own message. */
    private static String causes(Throwable failure) {
        StringBuilder chain = new StringBuilder(failure.toString());
        Throwable innermost = failure;
        for (Throwable cause = failure.getCause(); cause != null && cause != innermost; cause = cause.getCause()) {
            chain.append(" <- ").append(cause);
            innermost = cause;
        }
        for (StackTraceElement frame : innermost.getStackTrace()) {
            chain.append("\n    at ").append(frame);
        }
        return chain.toString();
    }

    interface SizeOf {
        int size(long id);
    }

    /** {@code n} requests, at most {@code inFlight} outstanding, each answer checked; latencies when asked. */
    private static void run(HttpClient client, URI uri, int n, int inFlight, SizeOf sizes, long[] latencies)
            throws InterruptedException {
        Semaphore window = new Semaphore(inFlight);
        CountDownLatch done = new CountDownLatch(n);
        for (int k = 0; k < n; k++) {
            long id = nextId++;
            byte[] body = EchoBodies.body(id, sizes.size(id));
            int slot = k;
            window.acquire();
            long sent = System.nanoTime();
            HttpRequest request = HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(60))
                    .header("X-Request-Id", String.valueOf(id))
                    .POST(HttpRequest.BodyPublishers.ofByteArray(body)).build();
            client.sendAsync(request, HttpResponse.BodyHandlers.ofByteArray()).whenComplete((response, failure) -> {
                try {
                    if (latencies != null) {
                        latencies[slot] = System.nanoTime() - sent;
                    }
                    if (failure != null) {
                        ERRORS.add("request " + id + " (" + body.length + " B) failed: " + causes(failure));
                    } else if (response.statusCode() != 200) {
                        ERRORS.add("request " + id + ": status " + response.statusCode());
                    } else if (!String.valueOf(id).equals(response.headers().firstValue("X-Request-Id").orElse(null))) {
                        ERRORS.add("request " + id + ": answer for " + response.headers().firstValue("X-Request-Id"));
                    } else if (!Arrays.equals(body, response.body())) {
                        ERRORS.add("request " + id + ": body of " + body.length + " B came back as "
                                + response.body().length + " B, first difference at " + Arrays.mismatch(body, response.body()));
                    }
                } finally {
                    window.release();
                    done.countDown();
                }
            });
        }
        if (!done.await(120, TimeUnit.SECONDS)) {
            ERRORS.add("requests still outstanding: " + done.getCount() + " of " + n);
        }
    }
}
