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

    /**
     * Whether JFR has started in this JVM (a recording at start-up, or one begun later with
     * {@code jcmd JFR.start}): until then no event can be enabled, and nothing of JFR is touched.
     * Making the first event object registers the event classes with JFR, which cost a short JVM
     * ~0.2 s of CPU (an echo of 1,000 round trips: 0.76 s without the events, 0.96 s with them).
     * A volatile read once JFR's class is loaded; false without {@code jdk.jfr}.
     */
    public static boolean jfrStarted() {
        return JFR && jdk.jfr.FlightRecorder.isInitialized();
    }

    private static boolean present(String name) {
        return ModuleLayer.boot().findModule(name).isPresent();
    }
}
