package io.hadronio.app.jetty;

import io.hadronio.app.LoopOptions;
import io.hadronio.app.ProviderSelection;
import io.hadronio.app.Role;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.Callable;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Jetty;
import picocli.CommandLine.ArgGroup;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio jetty benchmark}: HTTP/1.1 GET requests on keep-alive connections, each
 * answered with {@code --size} bytes. The server (-s) is a Jetty 12 {@link Server} with one
 * {@link ServerConnector} and a handler that writes the body; the client (-r) is Jetty's
 * {@code HttpClient} in {@link HttpClientLoops}: {@code --in-flight} requests outstanding
 * through the asynchronous API, then one at a time through the blocking one, every answer's
 * status and length checked. The server answers until it is stopped.
 */
@Command(name = "benchmark", mixinStandardHelpOptions = true,
        description = {"Jetty HTTP/1.1 requests/s with requests in flight (async API) and one at a time (blocking "
                + "API), with latency; the server (-s) answers every GET with --size bytes.",
            "DISABLE_HADRONIO=true: on the JDK's provider."})
public final class JettyBenchmark implements Callable<Integer> {
    @ArgGroup(exclusive = true, multiplicity = "1")
    Role role;

    @Spec
    CommandSpec spec;

    @Mixin
    HttpBenchmarkOptions http;

    @Mixin
    LoopOptions loops;

    @Override
    public Integer call() throws Exception {
        http.validate(spec.commandLine());
        loops.validate(spec.commandLine());
        ProviderSelection.apply();
        return role.server ? serve() : client();
    }

    private int serve() throws Exception {
        byte[] bytes = new byte[http.size()];
        Arrays.fill(bytes, (byte) 'j');
        ByteBuffer body = ByteBuffer.wrap(bytes).asReadOnlyBuffer();
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost(http.address().getHostString());
        connector.setPort(http.address().getPort());
        server.addConnector(connector);
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                response.setStatus(200);
                response.getHeaders().put(HttpHeader.CONTENT_TYPE, "application/octet-stream");
                response.getHeaders().put(HttpHeader.CONTENT_LENGTH, http.size());
                response.write(true, body.slice(), callback);
                return true;
            }
        });
        server.start();
        System.out.println("listening on " + http.address().getHostString() + ":" + connector.getLocalPort() + " (Jetty "
                + Jetty.VERSION + ", provider " + java.nio.channels.spi.SelectorProvider.provider().getClass().getName() + ")");
        System.out.flush();
        server.join();
        return 0;
    }

    private int client() throws Exception {
        return HttpClientLoops.run("jetty", role.remote, http.size(), http.inFlight(), loops) == 0 ? 0 : 1;
    }
}
