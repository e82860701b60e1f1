package io.hadronio.it.apps.tomcat;

import io.hadronio.it.apps.ProviderProbe;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.util.ServerInfo;

/**
 * An unmodified embedded Tomcat with its NIO connector ({@code Http11NioProtocol}) on
 * 127.0.0.1 and one servlet that answers every POST with its body and the request's
 * {@code X-Request-Id}. Prints {@code PORT n} and {@code VERSION v}; on {@code STATS} from
 * stdin prints {@code STATS requests connections bytes transport} (connections: distinct
 * client ports; transport: whether this JVM holds UCX endpoints at that moment); stops when
 * stdin closes.
 *
 * <p>Arguments: none, or the connector's protocol class ({@code Http11Nio2Protocol}: the NIO.2
 * connector, on {@code AsynchronousServerSocketChannel}s); with a protocol it also prints
 * {@code ASYNC class}, the JVM's {@code AsynchronousChannelProvider}.
 */
public final class TomcatEchoServer {
    private static final AtomicLong REQUESTS = new AtomicLong();
    private static final AtomicLong BYTES = new AtomicLong();
    private static final Set<Integer> CONNECTIONS = ConcurrentHashMap.newKeySet();

    private TomcatEchoServer() {
    }

    /** The servlet: the body back, byte for byte. */
    public static final class Echo extends HttpServlet {
        @Override
        protected void doPost(HttpServletRequest request, HttpServletResponse response) throws IOException {
            byte[] body = request.getInputStream().readAllBytes();
            REQUESTS.incrementAndGet();
            BYTES.addAndGet(body.length);
            CONNECTIONS.add(request.getRemotePort());
            response.setStatus(200);
            response.setContentType("application/octet-stream");
            response.setContentLength(body.length);
            String id = request.getHeader("X-Request-Id");
            if (id != null) {
                response.setHeader("X-Request-Id", id);
            }
            response.getOutputStream().write(body);
        }
    }

    public static void main(String[] args) throws Exception {
        ProviderProbe.announce();
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("tomcat-echo").toString());
        String protocol = args.length > 0 ? args[0] : "org.apache.coyote.http11.Http11NioProtocol";
        if (args.length > 0) {
            System.out.println("ASYNC " + AsynchronousChannelProvider.provider().getClass().getName());
        }
        Connector connector = new Connector(protocol);
        connector.setPort(0);
        connector.setProperty("address", "127.0.0.1");
        // bodies up to 10 MiB
        connector.setMaxPostSize(-1);
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "echo", new Echo());
        context.addServletMappingDecoded("/echo", "echo");
        tomcat.start();
        System.out.println("VERSION " + ServerInfo.getServerNumber());
        System.out.println("PORT " + connector.getLocalPort());
        System.out.flush();
        BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = stdin.readLine()) != null) {
            if (line.equals("STATS")) {
                System.out.println("STATS " + REQUESTS.get() + " " + CONNECTIONS.size() + " " + BYTES.get() + " "
                        + ProviderProbe.transportByEndpoints());
                System.out.flush();
            }
        }
        tomcat.stop();
        tomcat.destroy();
    }
}
