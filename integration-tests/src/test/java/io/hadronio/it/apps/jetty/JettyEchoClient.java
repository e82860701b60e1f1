package io.hadronio.it.apps.jetty;

import io.hadronio.it.apps.EchoBodies;
import io.hadronio.it.apps.ProviderProbe;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.BytesRequestContent;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpMethod;

/**
 * Jetty 12's {@link HttpClient} (HTTP/1.1, keep-alive, at most {@code connections}
 * connections) against {@link JettyEchoServer}: first one request of each size from
 * 0 B to 10 MiB, then {@code count} requests of 0..4 KiB with {@code inFlight} outstanding.
 * Every response must be 200 with the request's id and, byte for byte, the request's body.
 * Prints {@code CHECKED n} per phase, then
 * {@code RESULT requests/s p50_us p99_us} for the second phase and {@code DONE}, then keeps
 * its connections until stdin closes (so the server can look at them); any mismatch is an {@code ERROR} line and exit status 1.
 *
 * <p>Arguments: {@code port connections inFlight count}.
 */
public final class JettyEchoClient {
    private static final ConcurrentLinkedQueue<String> ERRORS = new ConcurrentLinkedQueue<>();
    // the id of the next request: ids run on across phases, so each body is unique
    private static long nextId;

    private JettyEchoClient() {
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        int port = Integer.parseInt(args[0]);
        int connections = Integer.parseInt(args[1]);
        int inFlight = Integer.parseInt(args[2]);
        int count = Integer.parseInt(args[3]);
        HttpClient client = new HttpClient();
        client.setMaxConnectionsPerDestination(connections);
        client.setMaxRequestsQueuedPerDestination(Math.max(1024, inFlight * 2));
        client.start();
        String uri = "http://127.0.0.1:" + port + "/echo";
        try {
            // every size, a few at a time (10 MiB bodies: bounded memory)
            int[] sizes = EchoBodies.SIZES;
            run(client, uri, sizes.length, 4, i -> sizes[(int) i], null);
            System.out.println("CHECKED " + sizes.length);
            long[] latencies = new long[count];
            Random random = new Random(42);
            int[] small = new int[count];
            Arrays.setAll(small, i -> random.nextInt(4097));
            long start = System.nanoTime();
            run(client, uri, count, inFlight, i -> small[(int) i - sizes.length], latencies);
            long elapsed = System.nanoTime() - start;
            System.out.println("CHECKED " + count);
            if (!ERRORS.isEmpty()) {
                ERRORS.stream().limit(20).forEach(e -> System.out.println("ERROR " + e));
                System.exit(1);
            }
            Arrays.sort(latencies);
            System.out.printf("RESULT %.0f %d %d%n", count * 1e9 / elapsed,
                    latencies[count / 2] / 1000, latencies[(int) (count * 0.99)] / 1000);
            System.out.println("DONE");
            System.out.flush();
            while (System.in.read() >= 0) {
                // keep the connections open until the test is done with the server
            }
        } finally {
            client.stop();
        }
    }

    interface SizeOf {
        int size(long id);
    }

    /**
     * Sends {@code n} requests (ids continue from those sent before), at most {@code inFlight}
     * outstanding, checks each response, and records each one's latency when asked.
     */
    private static void run(HttpClient client, String uri, int n, int inFlight, SizeOf sizes, long[] latencies)
            throws InterruptedException {
        Semaphore window = new Semaphore(inFlight);
        CountDownLatch done = new CountDownLatch(n);
        for (int k = 0; k < n; k++) {
            long id = nextId++;
            int size = sizes.size(id);
            byte[] body = EchoBodies.body(id, size);
            int slot = k;
            window.acquire();
            long sent = System.nanoTime();
            client.newRequest(uri).method(HttpMethod.POST).headers(h -> h.put("X-Request-Id", String.valueOf(id)))
                    .body(new BytesRequestContent("application/octet-stream", body))
                    .timeout(60, TimeUnit.SECONDS)
                    .send(new BufferingResponseListener(11 << 20) {
                        @Override
                        public void onComplete(Result result) {
                            try {
                                if (latencies != null) {
                                    latencies[slot] = System.nanoTime() - sent;
                                }
                                check(id, body, result, getContent());
                            } finally {
                                window.release();
                                done.countDown();
                            }
                        }
                    });
        }
        if (!done.await(120, TimeUnit.SECONDS)) {
            ERRORS.add("requests still outstanding: " + done.getCount() + " of " + n);
        }
    }

    private static void check(long id, byte[] body, Result result, byte[] content) {
        if (result.isFailed()) {
            ERRORS.add("request " + id + " (" + body.length + " B) failed: " + result.getFailure());
        } else if (result.getResponse().getStatus() != 200) {
            ERRORS.add("request " + id + ": status " + result.getResponse().getStatus());
        } else if (!String.valueOf(id).equals(result.getResponse().getHeaders().get("X-Request-Id"))) {
            ERRORS.add("request " + id + ": answer for " + result.getResponse().getHeaders().get("X-Request-Id"));
        } else if (!Arrays.equals(body, content)) {
            ERRORS.add("request " + id + ": body of " + body.length + " B came back as " + content.length
                    + " B, first difference at " + Arrays.mismatch(body, content));
        }
    }
}
