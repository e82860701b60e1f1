package io.hadronio.it.fallback;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * With libucp unloadable (broken stand-ins found first through LD_LIBRARY_PATH) the
 * provider logs one WARNING (System.Logger, printed by java.util.logging by default) and the
 * application keeps working on the JDK's channels.
 */
@Timeout(60)
class UcxMissingTest {
    @Test
    void shouldWarnOnceAndRunUnacceleratedWhenUcxCannotBeLoaded(@TempDir Path dir) throws Exception {
        for (String lib : List.of("libucs.so.0", "libuct.so.0", "libucp.so.0")) {
            Files.writeString(dir.resolve(lib), "not a shared object");
        }
        String java = ProcessHandle.current().info().command().orElseThrow();
        ProcessBuilder pb = new ProcessBuilder(java, "--enable-native-access=ALL-UNNAMED",
                "-Djava.nio.channels.spi.SelectorProvider=io.hadronio.HadronioProvider",
                "-cp", System.getProperty("java.class.path"), FallbackPeer.class.getName())
                .redirectErrorStream(true);
        pb.environment().put("LD_LIBRARY_PATH", dir.toString());
        Process p = pb.start();
        try {
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(p.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, p.exitValue(), out);
            assertTrue(out.contains("PROVIDER io.hadronio.HadronioProvider"), out);
            assertTrue(out.contains("ECHO ping"), out);
            assertTrue(out.contains("PIPE 42"), out);
            assertFalse(out.contains("CHANNEL io.hadronio"), "must fall back to the JDK's channels:\n" + out);
            long warnings = out.lines().filter(l -> l.startsWith("WARNING: ") && l.contains("UCX unavailable")).count();
            assertEquals(1, warnings, out);
        } finally {
            p.destroyForcibly();
        }
    }
}
