package io.hadronio.it.logging;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import java.io.File;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.ZipEntry;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * hadroNIO's jar lands on every application's class path, so it must bring nothing an
 * application may carry itself: an application's SLF4J use (or non-use) is the same with
 * and without it (JGroups, which logs through SLF4J only when SLF4J is present, went
 * silent when the jar bundled the SLF4J API). hadroNIO logs through {@link System.Logger}.
 *
 * <p>The children run on the shaded {@code provider/target/hadronio.jar} (built in the
 * package phase, before these tests) and this module's test classes, with and without
 * SLF4J's jars.
 */
@Timeout(90)
class ApplicationLoggingTest {
    private static final String HADRONIO = "-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER;

    private static Path shadedJar() {
        String property = System.getProperty("it.shaded.provider.jar");
        assertTrue(property != null, "surefire sets it.shaded.provider.jar");
        Path jar = Path.of(property);
        assertTrue(Files.isRegularFile(jar), jar + " missing: build the provider with ./mvnw package (or verify)");
        return jar;
    }

    private static String testClasses() throws URISyntaxException {
        return Path.of(Slf4jProbe.class.getProtectionDomain().getCodeSource().getLocation().toURI()).toString();
    }

    /** slf4j-api and slf4j-simple, from this JVM's class path (the app module brings them, for Netty). */
    private static List<String> slf4jJars() {
        List<String> jars = Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> Path.of(e).getFileName().toString().startsWith("slf4j-"))
                .toList();
        assertTrue(jars.stream().anyMatch(j -> j.contains("slf4j-api")), "slf4j-api on the test class path: " + jars);
        assertTrue(jars.stream().anyMatch(j -> j.contains("slf4j-simple")), "slf4j-simple on the test class path: " + jars);
        return jars;
    }

    private static String classPath(List<String> entries) {
        return String.join(File.pathSeparator, entries);
    }

    /** Runs the probe to its end and returns its output. */
    private static String run(String classPath, List<String> options) throws Exception {
        try (ChildJvm child = ChildJvm.start(Slf4jProbe.class, classPath, options)) {
            child.expect("DONE");
            assertEquals(0, child.awaitExit(), child::report);
            return child.output();
        }
    }

    /** The lines that say what the application saw of SLF4J and how it logged. */
    private static List<String> applicationView(String output) {
        return output.lines().filter(l -> l.startsWith("SLF4J") || l.contains("APPLOG")).toList();
    }

    private static void assertAccelerated(String output) {
        assertTrue(output.contains("PROVIDER " + ChildJvm.PROVIDER), output);
        // a HadronioSocketChannel, of the subclass FileChannel.transferTo trusts (SocketChannelFactory)
        assertTrue(output.contains("CHANNEL io.hadronio.nio.TrustedSocketChannel"), output);
        assertTrue(output.contains("ECHO ping"), output);
    }

    /**
     * hadroNIO's start-up line, through System.Logger's default backend (java.util.logging:
     * a line naming the source, then {@code INFO: message}), exactly once.
     */
    private static void assertStartupLineThroughSystemLogger(String output) {
        List<String> lines = output.lines().toList();
        List<Integer> found = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            if (lines.get(i).startsWith("INFO: hadroNIO ") && lines.get(i).contains(" on UCX ")) {
                found.add(i);
            }
        }
        assertEquals(1, found.size(), output);
        int at = found.getFirst();
        assertTrue(at > 0 && lines.get(at - 1).contains("io.hadronio.HadronioProvider"), output);
    }

    @Test
    void shadedJarHoldsOnlyHadronio() throws Exception {
        List<String> foreign = new ArrayList<>();
        try (ZipFile zip = new ZipFile(shadedJar().toFile())) {
            assertTrue(zip.getEntry("io/hadronio/HadronioProvider.class") != null, "the provider is in the jar");
            assertTrue(zip.getEntry("io/hadronio/ucx/Ucx.class") != null, "the UCX binding is in the jar");
            zip.stream().map(ZipEntry::getName)
                    .filter(n -> n.startsWith("org/slf4j/") || n.contains("slf4j")
                            || (n.endsWith(".class") && !n.startsWith("io/hadronio/")))
                    .forEach(foreign::add);
        }
        assertEquals(List.of(), foreign, "the jar must hold hadroNIO's classes only");
    }

    @Test
    void applicationWithoutSlf4jSeesNoneUnderHadronio() throws Exception {
        String jar = shadedJar().toString();
        String classes = testClasses();
        String plain = run(classPath(List.of(classes)), List.of());
        String accelerated = run(classPath(List.of(jar, classes)), List.of(HADRONIO));

        assertTrue(plain.contains("PROVIDER sun.nio.ch"), plain);
        assertAccelerated(accelerated);
        assertTrue(accelerated.lines().anyMatch(l -> l.equals("SLF4J absent")), accelerated);
        assertEquals(List.of("SLF4J absent", "APPLOG through System.out: no SLF4J"), applicationView(plain), plain);
        assertEquals(applicationView(plain), applicationView(accelerated), accelerated);
        assertStartupLineThroughSystemLogger(accelerated);
    }

    @Test
    void applicationWithItsOwnSlf4jKeepsItUnderHadronio() throws Exception {
        String jar = shadedJar().toString();
        String classes = testClasses();
        List<String> slf4j = slf4jJars();
        List<String> own = new ArrayList<>(List.of(classes));
        own.addAll(slf4j);
        // hadroNIO's jar first: whatever it carried would win over the application's
        List<String> withHadronio = new ArrayList<>(List.of(jar));
        withHadronio.addAll(own);
        String plain = run(classPath(own), List.of());
        String accelerated = run(classPath(withHadronio), List.of(HADRONIO));

        assertAccelerated(accelerated);
        List<String> view = applicationView(plain);
        assertEquals(2, view.size(), plain);
        String api = slf4j.stream().filter(j -> j.contains("slf4j-api")).findFirst().orElseThrow();
        assertTrue(view.get(0).startsWith("SLF4J present from ") && view.get(0).contains(Path.of(api).getFileName().toString())
                && view.get(0).endsWith(" bound to org.slf4j.simple.SimpleLoggerFactory"), plain);
        assertTrue(view.get(1).contains("INFO probe - APPLOG through SLF4J"), plain);
        assertEquals(view, applicationView(accelerated), accelerated);
        assertStartupLineThroughSystemLogger(accelerated);
        assertFalse(accelerated.contains("org.slf4j.helpers.NOP"), accelerated);
    }
}
