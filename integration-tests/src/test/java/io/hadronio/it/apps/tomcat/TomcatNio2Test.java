package io.hadronio.it.apps.tomcat;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.AppJvm;
import io.hadronio.it.apps.CompatRecord;
import io.hadronio.it.apps.Pairing;
import io.hadronio.it.apps.Side;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Embedded Tomcat's NIO.2 connector ({@code Http11Nio2Protocol}: {@code AsynchronousServerSocketChannel}s
 * in a group on Tomcat's executor) as the server and the JDK's {@link java.net.http.HttpClient}
 * as the client, in two JVMs in every {@link Pairing}. The hadroNIO server names both
 * providers, the selector provider and {@code io.hadronio.HadronioAsynchronousChannelProvider};
 * the client is the one of {@link TomcatTest}: bodies 0 B..10 MiB and many small requests in
 * flight over kept-alive connections, each answer checked byte for byte.
 */
@Tag("slow")
@Timeout(120)
class TomcatNio2Test {
    static final String ASYNC_PROVIDER = "io.hadronio.HadronioAsynchronousChannelProvider";

    static Stream<Pairing> pairings() {
        return Pairing.all();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("pairings")
    void shouldEchoEveryBodyByteForByte(Pairing pairing) throws Exception {
        boolean hadronioServer = pairing.server() == Side.HADRONIO;
        List<String> serverOptions = hadronioServer
                ? List.of("-Djava.nio.channels.spi.AsynchronousChannelProvider=" + ASYNC_PROVIDER) : List.of();
        try (CompatRecord record = CompatRecord.start("Tomcat (NIO.2 connector) + JDK HttpClient (HTTP/1.1)", pairing);
             ChildJvm server = AppJvm.start(pairing.server(), TomcatEchoServer.class, serverOptions,
                     "org.apache.coyote.http11.Http11Nio2Protocol")) {
            String async = server.expect("ASYNC ");
            if (hadronioServer) {
                assertEquals(ASYNC_PROVIDER, async, server::report);
            } else {
                assertTrue(async.startsWith("sun.nio.ch."), async);
            }
            TomcatTest.echoEveryBody(pairing, record, server);
            record.pass();
        }
    }
}
