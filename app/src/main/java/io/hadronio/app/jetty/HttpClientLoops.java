package io.hadronio.app.jetty;

import io.hadronio.app.CallLoop;
import io.hadronio.app.LoopOptions;
import io.hadronio.app.Transports;
import java.net.InetSocketAddress;
import java.nio.channels.SocketChannel;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.client.BufferingResponseListener;
import org.eclipse.jetty.client.ContentResponse;
import org.eclipse.jetty.client.HttpClient;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.Jetty;

/**
 * The client of the HTTP benchmarks ({@code jetty benchmark -r}, {@code tomcat benchmark -r}):
 * Jetty's {@link HttpClient} with its defaults (a connection per outstanding request, up to 64)
 * sending GETs to one server over HTTP/1.1 keep-alive. It first keeps {@code inFlight} requests
 * outstanding through the asynchronous API ({@code send(listener)}), then sends one at a time
 * through the blocking one ({@code send()}); every answer's status (200) and length are checked.
 * It prints a {@code RESULT} line per loop with the paths its connections took.
 */
public final class HttpClientLoops {
    private HttpClientLoops() {
    }

    /**
     * Runs {@code loops} against {@code http://server/}, each answer {@code size} bytes, and
     * prints a {@code RESULT app=app ...} line per loop.
     *
     * @return the failed requests of all loops
     */
    public static long run(String app, InetSocketAddress server, int size, int inFlight, LoopOptions loops)
            throws Exception {
        Set<SocketChannel> connections = ConcurrentHashMap.newKeySet();
        HttpClient client = new HttpClient();
        // Connection.Listener beans of the client are added to each connection it opens
        client.addBean(new Connection.Listener() {
            @Override
            public void onOpened(Connection connection) {
                if (connection.getEndPoint() instanceof SocketChannelEndPoint e) {
                    connections.add(e.getChannel());
                }
            }
        });
        client.start();
        String uri = "http://" + server.getHostString() + ":" + server.getPort() + "/";
        long failures = 0;
        try {
            System.out.println("Jetty " + Jetty.VERSION + " HttpClient, GET " + uri + " (" + Transports.provider() + ")");
            for (LoopOptions.Mode mode : loops.modes()) {
                CallLoop.Outcome outcome = switch (mode) {
                    case concurrent -> CallLoop.concurrent(done -> client.newRequest(uri).timeout(30, TimeUnit.SECONDS)
                            .send(new BufferingResponseListener() {
                                @Override
                                public void onComplete(Result result) {
                                    done.complete(!result.isFailed() && result.getResponse().getStatus() == 200
                                            && getContent().length == size);
                                }
                            }), inFlight, loops.warmup(), loops.duration());
                    case sequential -> CallLoop.sequential(() -> {
                        ContentResponse r = client.newRequest(uri).timeout(30, TimeUnit.SECONDS).send();
                        return r.getStatus() == 200 && r.getContent().length == size;
                    }, loops.warmup(), loops.duration());
                };
                failures += outcome.failures();
                System.out.println(mode + ": " + outcome.describe());
                System.out.println("RESULT app=" + app + " mode=" + mode + " provider=" + Transports.provider() + " size="
                        + size + " " + outcome.resultFields() + " transport=" + Transports.summary(connections.stream()
                        .filter(SocketChannel::isOpen).map(Transports::path).toList()));
                System.out.flush();
            }
        } finally {
            client.stop();
        }
        return failures;
    }
}
