package io.hadronio.observe;

/**
 * Which of the JDK modules the observation needs this runtime has: a {@code jlink}ed image may
 * leave out {@code jdk.jfr} or {@code java.management}, and then the events and the MBean are
 * off (the classes that name those modules are never loaded), not a {@link NoClassDefFoundError}
 * at the first read.
 */
public final class JdkModules {
    /** {@code jdk.jfr}: the JFR events. */
    public static final boolean JFR = present("jdk.jfr");
    /** {@code java.management}: the MBean. */
    public static final boolean MANAGEMENT = present("java.management");

    private JdkModules() {
    }

    private static boolean present(String name) {
        return ModuleLayer.boot().findModule(name).isPresent();
    }
}
