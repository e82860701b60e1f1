package io.hadronio.it.apps.jgroups;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.it.ChildJvm;
import io.hadronio.it.apps.AppJvm;
import io.hadronio.it.apps.Side;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * JGroups logs the same with and without hadronio.jar: through SLF4J when the application
 * carries SLF4J, through java.util.logging when it does not (a copy of the SLF4J API in our
 * jar once made JGroups pick SLF4J and go silent). Compares what JGroups chose and how its
 * record came out on the JDK's provider and on hadroNIO.
 */
@Tag("slow")
@Timeout(90)
class JGroupsLoggingTest {
    private static boolean isSlf4j(String entry) {
        return Path.of(entry).getFileName().toString().startsWith("slf4j-");
    }

    // JGroups prefers Log4j 2 when log4j-core is present, and the test class path carries it
    // for Kafka: this application is JGroups with or without SLF4J only
    private static boolean isLog4j(String entry) {
        return Path.of(entry).getFileName().toString().startsWith("log4j-");
    }

    /** JGroups' log class and its record's lines, as the probe printed them. */
    private static List<String> loggingView(Side side, Predicate<String> classPath) throws Exception {
        int port = JGroupsTest.freePorts(1)[0];
        try (ChildJvm probe = AppJvm.start(side, AppJvm.classPath(side, classPath), JGroupsLogProbe.class,
                List.of("-Djava.net.preferIPv4Stack=true"), String.valueOf(port))) {
            probe.expect("DONE");
            assertEquals(0, probe.awaitExit(), probe::report);
            return probe.output().lines().filter(l -> l.startsWith("LOG ") || l.contains("APPLOG")
                    || l.startsWith("WARNING: APPLOG")).toList();
        }
    }

    @ParameterizedTest(name = "SLF4J on the class path: {0}")
    @ValueSource(booleans = {true, false})
    void jgroupsShouldLogTheSameWayWithHadronio(boolean withSlf4j) throws Exception {
        Predicate<String> classPath = withSlf4j ? e -> !isLog4j(e) : e -> !isSlf4j(e) && !isLog4j(e);
        List<String> plain = loggingView(Side.JDK, classPath);
        List<String> accelerated = loggingView(Side.HADRONIO, classPath);
        String expected = withSlf4j ? "LOG org.jgroups.logging.Slf4jLogImpl" : "LOG org.jgroups.logging.JDKLogImpl";
        assertTrue(plain.contains(expected), plain::toString);
        assertTrue(plain.stream().anyMatch(l -> l.contains("APPLOG from JGroups")), plain::toString);
        assertEquals(plain, accelerated);
    }
}
