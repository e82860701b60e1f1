package io.hadronio.it.selector;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/** Starting the selector peers on hadroNIO. */
final class SelectorPeers {
    private SelectorPeers() {
    }

    static List<String> hadronio(String... more) {
        List<String> options = new ArrayList<>();
        options.add("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER);
        options.addAll(List.of(more));
        return options;
    }

    /**
     * A {@link SelectorEchoServer}; when the options name hadroNIO, checked to select with
     * our selector.
     */
    static ChildJvm server(List<String> options) throws IOException, InterruptedException {
        ChildJvm server = ChildJvm.start(SelectorEchoServer.class, options);
        String provider = server.expect("PROVIDER ");
        if (options.contains("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER)) {
            assertTrue(provider.equals(ChildJvm.PROVIDER + " io.hadronio.nio.HadronioSelector"), server::report);
        }
        return server;
    }

    static ChildJvm client(List<String> options, Object... args) throws IOException {
        String[] a = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            a[i] = String.valueOf(args[i]);
        }
        return ChildJvm.start(SelectorClient.class, options, a);
    }

    static void assertNoConnectionErrors(ChildJvm server) {
        assertFalse(server.output().contains("CONN_ERROR") || server.printedErrors(), server::report);
    }
}
