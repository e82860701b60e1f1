package io.hadronio.app.tomcat;

import io.hadronio.app.LoopOptions;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import io.hadronio.app.jetty.HttpBenchmarkOptions;
import io.hadronio.app.jetty.HttpClientLoops;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;
import org.apache.catalina.util.ServerInfo;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio tomcat benchmark}: HTTP/1.1 GET requests on keep-alive connections, each
 * answered with {@code --size} bytes. The server (-s) is an embedded Tomcat 11 with one
 * connector of {@code --protocol} ({@code nio2}: {@code Http11Nio2Protocol}, on
 * {@code AsynchronousServerSocketChannel}s in a group on Tomcat's executor; {@code nio}:
 * {@code Http11NioProtocol}, on a {@code Selector}), its defaults otherwise, and a servlet that
 * writes the body. The client (-r) is the one of {@code jetty benchmark} ({@link HttpClientLoops}).
 * On hadroNIO the NIO.2 server names hadroNIO's {@code AsynchronousChannelProvider} beside its
 * {@code SelectorProvider}; with {@code DISABLE_HADRONIO=true} both are the JDK's. The server
 * answers until it is stopped.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"Tomcat HTTP/1.1 requests/s with requests in flight (async API of Jetty's HttpClient) and one "
                + "at a time (blocking API), with latency; the server (-s) answers every GET with --size bytes.",
            "DISABLE_HADRONIO=true: on the JDK's providers."})
public final class TomcatBenchmark implements Callable<Integer> {
    /** The connectors of Tomcat's HTTP/1.1 protocol handler this benchmark runs. */
    enum Protocol {
        nio2("org.apache.coyote.http11.Http11Nio2Protocol"),
        nio("org.apache.coyote.http11.Http11NioProtocol");

        final String className;

        Protocol(String className) {
            this.className = className;
        }
    }

    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Spec
    CommandSpec spec;

    @Mixin
    HttpBenchmarkOptions http;

    @Option(names = "--protocol", defaultValue = "nio2",
            description = "Server: Tomcat's connector, nio2 (Http11Nio2Protocol) or nio (Http11NioProtocol) "
                    + "(default: ${DEFAULT-VALUE}).")
    Protocol protocol;

    @Option(names = "--max-keep-alive-requests", paramLabel = "N", defaultValue = "100",
            description = "Server: requests on a connection before Tomcat closes it, -1 for no limit (Tomcat's "
                    + "maxKeepAliveRequests; default: ${DEFAULT-VALUE}, Tomcat's own).")
    int maxKeepAliveRequests;

    @Mixin
    LoopOptions loops;

    @Override
    public Integer call() throws Exception {
        http.validate(spec.commandLine());
        loops.validate(spec.commandLine());
        if (role.server && protocol == Protocol.nio2) {
            ProviderSelection.applyAsynchronous();
        } else {
            ProviderSelection.apply();
        }
        return role.server ? serve() : HttpClientLoops.run("tomcat", role.remote, http.size(), http.inFlight(), loops) == 0 ? 0 : 1;
    }

    /** The servlet: {@code body} to every GET. */
    private static final class Body extends HttpServlet {
        private final byte[] body;

        Body(byte[] body) {
            this.body = body;
        }

        @Override
        protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {
            response.setStatus(200);
            response.setContentType("application/octet-stream");
            response.setContentLength(body.length);
            response.getOutputStream().write(body);
        }
    }

    private int serve() throws Exception {
        byte[] bytes = new byte[http.size()];
        Arrays.fill(bytes, (byte) 't');
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("hadronio-tomcat").toString());
        Connector connector = new Connector(protocol.className);
        connector.setProperty("address", http.address().getHostString());
        connector.setPort(http.address().getPort());
        connector.setProperty("maxKeepAliveRequests", Integer.toString(maxKeepAliveRequests));
        tomcat.getService().addConnector(connector);
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "body", new Body(bytes));
        context.addServletMappingDecoded("/", "body");
        tomcat.start();
        String channels = protocol == Protocol.nio2
                ? "AsynchronousChannelProvider " + AsynchronousChannelProvider.provider().getClass().getName()
                : "SelectorProvider " + SelectorProvider.provider().getClass().getName();
        System.out.println("listening on " + http.address().getHostString() + ":" + connector.getLocalPort() + " (Tomcat "
                + ServerInfo.getServerNumber() + ", " + protocol.className + ", " + channels + ")");
        System.out.flush();
        tomcat.getServer().await();
        return 0;
    }
}
