package io.hadronio.it.apps;

import java.lang.reflect.Field;
import java.net.SocketOption;
import java.nio.channels.NetworkChannel;
import java.nio.channels.spi.SelectorProvider;
import java.util.Map;

/**
 * What an application's JVM reports about the provider under it, without a compile-time
 * reference to hadroNIO (the JDK side runs without its jar): the provider class, the
 * path of a connected channel, and the UCX endpoints the JVM holds.
 */
public final class ProviderProbe {
    private ProviderProbe() {
    }

    /** Prints {@code PROVIDER class}, the line {@link AppJvm#start} checks; call it before the application starts. */
    public static void announce() {
        System.out.println("PROVIDER " + SelectorProvider.provider().getClass().getName());
        System.out.flush();
    }

    /**
     * The path of a connected channel: hadroNIO's {@code HadronioSocketOptions.TRANSPORT}
     * ({@code ucx:cma,sysv}, {@code tcp}), or {@code tcp} on the JDK's provider.
     */
    @SuppressWarnings("unchecked")
    public static String transport(NetworkChannel channel) {
        try {
            Class<?> options = Class.forName("io.hadronio.HadronioSocketOptions");
            Field f = options.getField("TRANSPORT");
            SocketOption<String> transport = (SocketOption<String>) f.get(null);
            if (channel.supportedOptions().contains(transport)) {
                return channel.getOption(transport);
            }
        } catch (ClassNotFoundException e) {
            return "tcp";
        } catch (ReflectiveOperationException | java.io.IOException e) {
            return "unknown (" + e + ")";
        }
        return "tcp";
    }

    /**
     * The UCX endpoints hadroNIO holds in this JVM (a connection carried by UCX holds one),
     * 0 on the JDK's provider: for applications whose channels are out of reach.
     */
    @SuppressWarnings("unchecked")
    public static long ucxEndpoints() {
        try {
            Object resources = SelectorProvider.provider().getClass().getMethod("resources")
                    .invoke(SelectorProvider.provider());
            Long n = ((Map<String, Long>) resources).get("ucx.endpoints");
            return n == null ? 0 : n;
        } catch (NoSuchMethodException e) {
            return 0;
        } catch (ReflectiveOperationException e) {
            return -1;
        }
    }

    /** {@code ucx} when this JVM holds UCX endpoints, else {@code tcp}. */
    public static String transportByEndpoints() {
        long n = ucxEndpoints();
        return n > 0 ? "ucx (" + n + " endpoints)" : "tcp";
    }
}
