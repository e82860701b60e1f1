package io.hadronio.app;

/**
 * Chooses the NIO provider for the commands that run plain NIO code: hadroNIO unless
 * the environment says {@code DISABLE_HADRONIO=true} (then the JDK's), or the JVM was
 * started with {@code -Djava.nio.channels.spi.SelectorProvider} already. Must run
 * before the first use of NIO in the JVM.
 */
public final class ProviderSelection {
    public static final String PROPERTY = "java.nio.channels.spi.SelectorProvider";
    public static final String HADRONIO = "io.hadronio.HadronioProvider";

    private ProviderSelection() {
    }

    public static void apply() {
        if (System.getProperty(PROPERTY) != null) {
            return;
        }
        if (!Boolean.parseBoolean(System.getenv("DISABLE_HADRONIO"))) {
            System.setProperty(PROPERTY, HADRONIO);
        }
    }
}
