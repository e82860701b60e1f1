package io.hadronio.platform;

import java.util.ResourceBundle;

/**
 * A {@link System.Logger} that asks {@link System#getLogger} for the real one only when
 * something is logged (or asked whether it would be). Why: the first {@code System.getLogger}
 * of a JVM looks for a {@code LoggerFinder} service on the whole class path and starts the
 * logging backend, 50-65 ms with a short class path and 330-410 ms with the app's (measured,
 * docs/benchmarks/connections.md, "The first connection"); as a class's static logger, that
 * cost came with the class, in front of the JVM's first {@code connect}, although nothing was
 * logged.
 */
public final class LazyLogger implements System.Logger {
    private final String name;
    // the real logger, once something asked
    private volatile System.Logger logger;

    private LazyLogger(String name) {
        this.name = name;
    }

    /** The logger named after {@code owner}, made at its first use. */
    public static System.Logger of(Class<?> owner) {
        return new LazyLogger(owner.getName());
    }

    /** The logger named {@code name}, made at its first use. */
    public static System.Logger named(String name) {
        return new LazyLogger(name);
    }

    private System.Logger logger() {
        System.Logger l = logger;
        if (l == null) {
            // two threads may both ask: System.getLogger answers both with equivalent loggers
            l = System.getLogger(name);
            logger = l;
        }
        return l;
    }

    @Override
    public String getName() {
        return name;
    }

    @Override
    public boolean isLoggable(Level level) {
        return logger().isLoggable(level);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String msg, Throwable thrown) {
        logger().log(level, bundle, msg, thrown);
    }

    @Override
    public void log(Level level, ResourceBundle bundle, String format, Object... params) {
        logger().log(level, bundle, format, params);
    }
}
