package io.hadronio.it.apps.jetty;

import io.hadronio.it.apps.ProviderProbe;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Jetty;

/**
 * An unmodified Jetty 12 server (its NIO {@link ServerConnector}) on 127.0.0.1 that answers
 * every request with its own body, and the request's {@code X-Request-Id}. Prints
 * {@code PORT n} and {@code VERSION v}; on {@code STATS} from stdin prints
 * {@code STATS requests connections bytes transport} (the distinct connections requests came
 * on, and the paths of those still open); stops when stdin closes.
 */
public final class JettyEchoServer {
    private static final AtomicLong REQUESTS = new AtomicLong();
    private static final AtomicLong BYTES = new AtomicLong();
    private static final Set<String> CONNECTIONS = ConcurrentHashMap.newKeySet();
    // the NIO channel under each connection, looked at when asked (in upgrade mode a connection
    // moves to UCX with its traffic, so its path at the first request says little)
    private static final Set<SocketChannel> CHANNELS = ConcurrentHashMap.newKeySet();

    private JettyEchoServer() {
    }

    /** The distinct paths of the connections still open ("none" when all are closed). */
    private static String transports() {
        String paths = CHANNELS.stream().filter(SocketChannel::isOpen).map(ProviderProbe::transport).distinct().sorted()
                .collect(Collectors.joining(","));
        return paths.isEmpty() ? "none" : paths;
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(0);
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) throws Exception {
                byte[] body = Content.Source.asInputStream(request).readAllBytes();
                if (CONNECTIONS.add(request.getConnectionMetaData().getId())) {
                    EndPoint endPoint = request.getConnectionMetaData().getConnection().getEndPoint();
                    if (endPoint instanceof SocketChannelEndPoint socket) {
                        CHANNELS.add(socket.getChannel());
                    }
                }
                REQUESTS.incrementAndGet();
                BYTES.addAndGet(body.length);
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, body.length);
                String id = request.getHeaders().get("X-Request-Id");
                if (id != null) {
                    response.getHeaders().put("X-Request-Id", id);
                }
                response.write(true, ByteBuffer.wrap(body), callback);
                return true;
            }
        });
        server.start();
        System.out.println("VERSION " + Jetty.VERSION);
        System.out.println("PORT " + connector.getLocalPort());
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.equals("STATS")) {
                System.out.println("STATS " + REQUESTS.get() + " " + CONNECTIONS.size() + " " + BYTES.get() + " "
                        + transports());
                System.out.flush();
            }
        }
        server.stop();
    }
}
