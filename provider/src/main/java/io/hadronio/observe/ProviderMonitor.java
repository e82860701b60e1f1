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
import javax.management.ObjectName;

/**
 * The MBean {@code io.hadronio:type=Provider} ({@link ProviderMXBean}) over the JVM's
 * {@link Counters} and {@link OpenConnections}. Registered once per JVM, when a provider's
 * runtime starts ({@link #register}), in the platform MBeanServer; a JVM where JMX is missing
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

    /**
     * Registers the MBean for {@code config} unless this JVM has it already (the first
     * provider's configuration is the one shown). Never throws: without JMX the application
     * runs on, unobserved.
     */
    public static void register(HadronioConfig config) {
        if (!REGISTERED.compareAndSet(false, true)) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(new ProviderMonitor(config), new ObjectName(NAME));
        } catch (Exception | LinkageError e) {
            LOG.log(System.Logger.Level.DEBUG, () -> "hadroNIO: no MBean " + NAME + ": " + e);
        }
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
