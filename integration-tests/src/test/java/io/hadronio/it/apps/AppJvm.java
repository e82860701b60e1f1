package io.hadronio.it.apps;

import io.hadronio.HadronioProvider;
import io.hadronio.app.HadronioCommand;
import io.hadronio.it.ChildJvm;
import io.hadronio.ucx.Ucx;
import java.io.File;
import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

/**
 * Starts an application's JVM as a user would: the application's class path (this test
 * class path without hadroNIO's own classes), and on the hadroNIO side nothing more than
 * the shaded {@code hadronio.jar} in front of it and the provider property. Every child
 * says which provider it got ({@code PROVIDER class}), which {@link #start} checks.
 */
public final class AppJvm {
    private AppJvm() {
    }

    /** Starts {@code main} on {@code side} with the application's own JVM options; checks its provider. */
    public static ChildJvm start(Side side, Class<?> main, List<String> appOptions, String... args)
            throws IOException, InterruptedException {
        return start(side, classPath(side, entry -> true), main, appOptions, args);
    }

    /** {@link #start(Side, Class, List, String...)} with a class path of {@link #classPath(Side, Predicate)}. */
    public static ChildJvm start(Side side, String classPath, Class<?> main, List<String> appOptions, String... args)
            throws IOException, InterruptedException {
        List<String> options = new ArrayList<>(side.jvmOptions());
        options.addAll(appOptions);
        ChildJvm jvm = ChildJvm.start(main, classPath, options, args);
        try {
            String provider = jvm.expect("PROVIDER ");
            if (!side.runs(provider)) {
                throw new AssertionError(side + " child runs on " + provider + ": " + jvm.report());
            }
            return jvm;
        } catch (AssertionError | InterruptedException e) {
            jvm.close();
            throw e;
        }
    }

    /**
     * The application's class path: the entries of this test class path that {@code keep}
     * accepts (an application without SLF4J, say), never hadroNIO's own classes or application, and on the
     * hadroNIO side hadronio.jar first (whatever it carried would win over the application's).
     */
    public static String classPath(Side side, Predicate<String> keep) {
        List<String> entries = new ArrayList<>();
        if (side == Side.HADRONIO) {
            entries.add(shadedJar().toString());
        }
        // hadroNIO's classes, and the hadronio application, whose jar's manifest would bring its
        // lib/ (SLF4J, Netty, ...) into every application
        List<String> ours = List.of(location(HadronioProvider.class), location(Ucx.class),
                location(HadronioCommand.class));
        Arrays.stream(System.getProperty("java.class.path").split(File.pathSeparator))
                .filter(e -> !ours.contains(Path.of(e).toAbsolutePath().normalize().toString()))
                .filter(keep)
                .forEach(entries::add);
        return String.join(File.pathSeparator, entries);
    }

    /** provider/target/hadronio.jar, as applications get it (surefire names it in it.shaded.provider.jar). */
    public static Path shadedJar() {
        String property = System.getProperty("it.shaded.provider.jar");
        if (property == null || !Files.isRegularFile(Path.of(property))) {
            throw new AssertionError("no shaded provider jar at " + property + ": build with ./mvnw package (or verify)");
        }
        return Path.of(property);
    }

    private static String location(Class<?> c) {
        try {
            return Path.of(c.getProtectionDomain().getCodeSource().getLocation().toURI()).toAbsolutePath().normalize()
                    .toString();
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }
}
