package io.hadronio.it.apps;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.app.HadronioCommand;
import io.hadronio.it.ChildJvm;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The {@code hadronio} command in a child JVM on one {@link Side}, as the README runs it: with
 * the provider property on hadroNIO's side, with {@code DISABLE_HADRONIO=true} on the JDK's.
 */
public final class HadronioCommandJvm {
    private HadronioCommandJvm() {
    }

    /** {@code hadronio <args>} on {@code side}. */
    public static ChildJvm start(Side side, String... args) throws Exception {
        List<String> options = side == Side.HADRONIO
                ? List.of("-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER) : List.of();
        Map<String, String> env = side == Side.HADRONIO ? Map.of() : Map.of("DISABLE_HADRONIO", "true");
        return ChildJvm.start(List.of(), HadronioCommand.class, System.getProperty("java.class.path"), options, env, args);
    }

    /**
     * Waits for the server's "listening on /127.0.0.1:PORT (provider CLASS)" (or
     * "(provider CLASS, more)"), checks that the provider is {@code side}'s, returns the port.
     */
    public static int listening(ChildJvm server, Side side) throws InterruptedException {
        String line = server.expect("listening on ");
        int from = line.indexOf("(provider ") + "(provider ".length();
        int comma = line.indexOf(',', from);
        String provider = line.substring(from, comma >= 0 ? comma : line.length() - 1);
        assertTrue(side.runs(provider), server::report);
        return Integer.parseInt(line.substring(line.lastIndexOf(':', line.indexOf(' ')) + 1, line.indexOf(' ')));
    }

    /** The {@code key=value} fields of a RESULT line. */
    public static Map<String, String> fields(String result) {
        Map<String, String> m = new HashMap<>();
        for (String kv : result.split(" ")) {
            int eq = kv.indexOf('=');
            if (eq > 0) {
                m.put(kv.substring(0, eq), kv.substring(eq + 1));
            }
        }
        return m;
    }
}
