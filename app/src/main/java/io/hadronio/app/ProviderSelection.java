package io.hadronio.app;

/**
 * Chooses the NIO provider for the commands that run plain NIO code: hadroNIO unless
 * the environment says {@code DISABLE_HADRONIO=true} (or 1, yes: then the JDK's), or the JVM was
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
        if (!disabled(System.getenv("DISABLE_HADRONIO"))) {
            System.setProperty(PROPERTY, HADRONIO);
        }
    }

    /** The NIO.2 provider property, and hadroNIO's class for it. */
    public static final String ASYNC_PROPERTY = "java.nio.channels.spi.AsynchronousChannelProvider";
    public static final String HADRONIO_ASYNC = "io.hadronio.HadronioAsynchronousChannelProvider";

    /**
     * {@link #apply()} for programs on NIO.2 too: hadroNIO's {@code AsynchronousChannelProvider}
     * beside its {@code SelectorProvider}, unless {@code DISABLE_HADRONIO} or the property says otherwise.
     */
    public static void applyAsynchronous() {
        apply();
        if (System.getProperty(ASYNC_PROPERTY) == null && !disabled(System.getenv("DISABLE_HADRONIO"))) {
            System.setProperty(ASYNC_PROPERTY, HADRONIO_ASYNC);
        }
    }

    /**
     * What {@code DISABLE_HADRONIO} says: true, 1 or yes disable hadroNIO; false, 0, no or unset
     * leave it on; anything else is refused (it was read with {@code Boolean.parseBoolean} once,
     * and {@code DISABLE_HADRONIO=1} silently ran hadroNIO).
     */
    static boolean disabled(String value) {
        if (value == null) {
            return false;
        }
        return switch (value.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true", "1", "yes" -> true;
            case "false", "0", "no", "" -> false;
            default -> throw new IllegalArgumentException("invalid value for environment variable DISABLE_HADRONIO: '"
                    + value + "' (expected true or false)");
        };
    }
}
