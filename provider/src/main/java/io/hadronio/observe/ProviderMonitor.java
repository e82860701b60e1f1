package io.hadronio.observe;

import io.hadronio.config.HadronioConfig;
import io.hadronio.platform.LazyLogger;
import java.lang.management.ManagementFactory;
import java.lang.reflect.RecordComponent;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicBoolean;
import javax.management.MBeanServerFactory;
import javax.management.ObjectName;

/**
 * The MBean {@code io.hadronio:type=Provider} ({@link ProviderMXBean}) over the JVM's
 * {@link Counters} and {@link OpenConnections}. Registered once per JVM, in the platform
 * MBeanServer once something made it ({@link #registerWhenJmxIsUp}); a JVM where JMX is missing
 * or refuses it runs on without it (one DEBUG line).
 */
public final class ProviderMonitor implements ProviderMXBean {
    /** The MBean's name. */
    public static final String NAME = "io.hadronio:type=Provider";
    private static final System.Logger LOG = LazyLogger.of(ProviderMonitor.class);
    private static final AtomicBoolean REGISTERED = new AtomicBoolean();

    private final HadronioConfig config;

    private ProviderMonitor(HadronioConfig config) {
        this.config = config;
    }

    /** The system property a hadroNIO JVM carries (its version): {@code hadronio ss} reads it through the attach API before it starts anything in a JVM. */
    public static final String MARKER_PROPERTY = "io.hadronio.provider";
    // how often the watch looks whether this JVM's JMX is up
    private static final long WATCH_MILLIS = 500;

    /**
     * Registers the MBean for {@code config} (the first provider's configuration is the one shown)
     * once this JVM's JMX is up: at once if an MBeanServer exists, else from a daemon thread that
     * looks twice a second and ends with the registration. Making the platform MBeanServer costs
     * a short JVM ~0.1 s of CPU, so hadroNIO never makes it: the application does, or a tool that
     * attaches (JConsole, {@code hadronio ss}: the JDK's local management agent makes it). Never
     * throws: without JMX the application runs on, unobserved.
     */
    public static void registerWhenJmxIsUp(HadronioConfig config, String version) {
        if (!REGISTERED.compareAndSet(false, true)) {
            return;
        }
        try {
            System.setProperty(MARKER_PROPERTY, version);
        } catch (RuntimeException e) {
            // a property the application forbids: ss finds this JVM by its MBean only
        }
        if (registeredNow(config)) {
            return;
        }
        Thread watch = new Thread(() -> {
            try {
                while (!registeredNow(config)) {
                    Thread.sleep(WATCH_MILLIS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "hadronio-jmx-watch");
        watch.setDaemon(true);
        watch.start();
    }

    /** True when the MBean is registered, or never will be (JMX refused it); false while no MBeanServer exists. */
    private static boolean registeredNow(HadronioConfig config) {
        try {
            if (MBeanServerFactory.findMBeanServer(null).isEmpty()) {
                return false;
            }
            ManagementFactory.getPlatformMBeanServer().registerMBean(new ProviderMonitor(config), new ObjectName(NAME));
        } catch (Exception | LinkageError e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: no MBean " + NAME + ": " + e);
        }
        return true;
    }

    @Override
    public long getConnectionsOpened() {
        return Counters.jvm().opened();
    }

    @Override
    public long getConnectionsClosed() {
        return Counters.jvm().closed();
    }

    @Override
    public Map<String, Long> getConnectionsOpenByPath() {
        return Counters.jvm().openByPath();
    }

    @Override
    public Map<String, Long> getFallbacksByReason() {
        return Counters.jvm().fallbacks();
    }

    @Override
    public Map<String, String> getFallbackReasons() {
        Map<String, String> m = new LinkedHashMap<>();
        for (Fallback f : Fallback.values()) {
            m.put(f.code(), f.words());
        }
        return m;
    }

    @Override
    public long getUpgradesStarted() {
        return Counters.jvm().upgradesStarted();
    }

    @Override
    public long getUpgradesFinished() {
        return Counters.jvm().upgradesFinished();
    }

    @Override
    public long getUpgradesAbandoned() {
        return Counters.jvm().upgradesAbandoned();
    }

    @Override
    public long getHandshakeFailures() {
        return Counters.jvm().handshakeFailures();
    }

    @Override
    public long getResets() {
        return Counters.jvm().resets();
    }

    @Override
    public Map<String, Long> getBytesInByPath() {
        return Counters.jvm().bytesIn();
    }

    @Override
    public Map<String, Long> getBytesOutByPath() {
        return Counters.jvm().bytesOut();
    }

    @Override
    public Map<String, String> getConfiguration() {
        return configuration(config);
    }

    /** The record's components by name ({@code sliceSize=65536}, ...), as text. */
    static Map<String, String> configuration(HadronioConfig config) {
        Map<String, String> m = new LinkedHashMap<>();
        for (RecordComponent c : HadronioConfig.class.getRecordComponents()) {
            try {
                m.put(c.getName(), String.valueOf(c.getAccessor().invoke(config)));
            } catch (ReflectiveOperationException e) {
                m.put(c.getName(), "?");
            }
        }
        return m;
    }

    @Override
    public Map<String, String> getPropertiesSet() {
        Map<String, String> m = new TreeMap<>();
        for (String name : System.getProperties().stringPropertyNames()) {
            if (name.startsWith(HadronioConfig.PREFIX)) {
                m.put(name, System.getProperty(name));
            }
        }
        return m;
    }

    @Override
    public List<ConnectionInfo> getConnections() {
        return OpenConnections.jvm().infos();
    }
}
