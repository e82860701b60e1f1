package io.hadronio.platform;

import java.nio.channels.spi.AsynchronousChannelProvider;
import java.nio.channels.spi.SelectorProvider;

/**
 * Access to the JDK's own NIO implementation ({@code sun.nio.ch}), which a replacement
 * provider needs and the JDK offers no public API for: once
 * {@code -Djava.nio.channels.spi.SelectorProvider} names our class,
 * {@link SelectorProvider#provider()} returns us, and the platform's provider (for the
 * kernel TCP bootstrap, {@code DatagramChannel}, {@code Pipe}) is only reachable as
 * {@code sun.nio.ch.DefaultSelectorProvider.get()}, in a package {@code java.base}
 * does not export.
 *
 * <p>When the application was started with
 * {@code --add-exports java.base/sun.nio.ch=ALL-UNNAMED}, plain reflection works.
 * Otherwise we export the package ourselves, so that one system property is all an
 * application needs: through JNI, which is not subject to module checks, we call
 * {@code java.base}'s {@code Module.implAddExportsToAllUnnamed("sun.nio.ch")} - what the
 * launcher itself does for {@code --add-exports}: with our JNI library
 * ({@link NativeGrant}) where the jar has one for this machine, else through FFM
 * ({@link JniThroughFfm}), which costs a cold JVM far more.
 */
public final class JdkInternals {
    private static final String PACKAGE = "sun.nio.ch";
    private JdkInternals() {
    }

    /** The platform's default provider, or throws explaining why it is out of reach. */
    public static synchronized SelectorProvider platformProvider() {
        try {
            ensureExported();
            Object provider = Class.forName(PACKAGE + ".DefaultSelectorProvider").getMethod("get").invoke(null);
            return (SelectorProvider) provider;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the JDK's default SelectorProvider; start the JVM with "
                    + "--add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /**
     * The platform's default {@code AsynchronousChannelProvider} (its own epoll port, kernel
     * sockets only), or throws explaining why it is out of reach: what NIO.2 falls back to.
     */
    public static synchronized AsynchronousChannelProvider platformAsynchronousProvider() {
        try {
            ensureExported();
            Object provider = Class.forName(PACKAGE + ".DefaultAsynchronousChannelProvider").getMethod("create")
                    .invoke(null);
            return (AsynchronousChannelProvider) provider;
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException("cannot reach the JDK's default AsynchronousChannelProvider; start the JVM "
                    + "with --add-exports java.base/sun.nio.ch=ALL-UNNAMED", e);
        }
    }

    /** Exports sun.nio.ch to the unnamed modules unless it already is. */
    public static void ensureExported() {
        ensureExported(PACKAGE);
    }

    /**
     * Exports {@code java.base}'s package {@code pkg} to the unnamed modules unless it
     * already is ({@code --add-exports java.base/pkg=ALL-UNNAMED}).
     */
    static void ensureExported(String pkg) {
        grantToAllUnnamed(pkg, false);
    }

    /**
     * Opens {@code java.base}'s package {@code pkg} to the unnamed modules unless it already
     * is ({@code --add-opens java.base/pkg=ALL-UNNAMED}): for a package-private method that a
     * lookup must reach ({@link VirtualThreadParking}).
     */
    static void ensureOpened(String pkg) {
        grantToAllUnnamed(pkg, true);
    }

    /** Exports ({@code open} false) or opens {@code pkg} to the unnamed modules, as the launcher's option would. */
    private static void grantToAllUnnamed(String pkg, boolean open) {
        Module base = Object.class.getModule();
        Module us = JdkInternals.class.getModule();
        if (open ? base.isOpen(pkg, us) : base.isExported(pkg, us)) {
            return;
        }
        String method = open ? "implAddOpensToAllUnnamed" : "implAddExportsToAllUnnamed";
        try {
            if (NativeGrant.available()) {
                NativeGrant.call(base, method, pkg);
            } else {
                JniThroughFfm.call(pkg, method);
            }
        } catch (Throwable t) {
            throw new IllegalStateException(method + "(" + pkg + ") failed: " + t + "; start the JVM with "
                    + option(pkg, open), t);
        }
        if (!(open ? base.isOpen(pkg, us) : base.isExported(pkg, us))) {
            throw new IllegalStateException(pkg + " still not " + (open ? "open" : "exported")
                    + "; start the JVM with " + option(pkg, open));
        }
    }

    /** The launcher's option that grants what {@link #grantToAllUnnamed} could not (only for a message: a
     * cold JVM's first string concatenation links its bootstrap, ~10 ms in front of its first connect). */
    private static String option(String pkg, boolean open) {
        return (open ? "--add-opens" : "--add-exports") + " java.base/" + pkg + "=ALL-UNNAMED";
    }
}
