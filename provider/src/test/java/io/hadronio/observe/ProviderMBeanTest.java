package io.hadronio.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.HadronioProvider;
import io.hadronio.config.HadronioConfig;
import io.hadronio.path.UpgradedPairs;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Path;
import java.util.Map;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.openmbean.TabularData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXConnectorServer;
import javax.management.remote.JMXConnectorServerFactory;
import javax.management.remote.JMXServiceURL;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The counters and the listing of connections, read as a monitoring tool reads them: through a
 * real JMX connection (an RMI connector server on a local port) to the MBean
 * {@code io.hadronio:type=Provider}. One connection moves to UCX, one goes to a plain (JDK)
 * server, one to a hadroNIO server with another key; every field of their rows and the counters'
 * changes are checked.
 */
// its providers come from its own Properties, never the JVM's: test.sh's eager pass leaves it out
@Tag("own-properties")
@Timeout(120)
class ProviderMBeanTest {
    private static HadronioProvider provider;
    private static JMXConnectorServer server;
    private static JMXConnector connector;
    private static MBeanServerConnection jmx;
    private static final ObjectName NAME = name();

    private static ObjectName name() {
        try {
            return new ObjectName(ProviderMonitor.NAME);
        } catch (Exception e) {
            throw new AssertionError(e);
        }
    }

    @BeforeAll
    static void start() throws Exception {
        provider = UpgradedPairs.upgradingAtOnce();
        assertTrue(provider.isAccelerated());
        server = JMXConnectorServerFactory.newJMXConnectorServer(new JMXServiceURL("rmi", "127.0.0.1", 0), null,
                ManagementFactory.getPlatformMBeanServer());
        server.start();
        connector = JMXConnectorFactory.connect(server.getAddress());
        jmx = connector.getMBeanServerConnection();
        // registered once this JVM's JMX is up (the platform MBeanServer made just above): the
        // provider's watch looks twice a second; bounded by the test's own deadline
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (!jmx.isRegistered(NAME)) {
            assertTrue(System.nanoTime() - deadline < 0, "the MBean was not registered once JMX was up");
            Thread.sleep(20);
        }
    }

    @AfterAll
    static void stop() throws Exception {
        connector.close();
        server.stop();
    }

    private static long number(String attribute) throws Exception {
        return (Long) jmx.getAttribute(NAME, attribute);
    }

    @SuppressWarnings("unchecked")
    private static long entry(String attribute, String key) throws Exception {
        TabularData t = (TabularData) jmx.getAttribute(NAME, attribute);
        CompositeData row = t.get(new Object[] {key});
        return row == null ? 0 : (Long) row.get("value");
    }

    private static CompositeData row(SocketChannel c) throws Exception {
        String local = c.getLocalAddress().toString();
        String remote = c.getRemoteAddress().toString();
        for (CompositeData d : (CompositeData[]) jmx.getAttribute(NAME, "Connections")) {
            if (local.equals(d.get("local")) && remote.equals(d.get("remote"))) {
                return d;
            }
        }
        return null;
    }

    @Test
    void shouldListAConnectionOnUcxAndCountItsUpgradeAndBytes() throws Exception {
        long opened = number("ConnectionsOpened");
        long closed = number("ConnectionsClosed");
        long started = number("UpgradesStarted");
        long finished = number("UpgradesFinished");
        long ucxIn = entry("BytesInByPath", "ucx");
        long ucxOut = entry("BytesOutByPath", "ucx");
        try (ServerSocketChannel listener = provider.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(listener.getLocalAddress());
                try (SocketChannel accepted = listener.accept()) {
                    UpgradedPairs.moveToUcx(client, accepted);
                    long before = System.currentTimeMillis();
                    ByteBuffer b = ByteBuffer.allocate(1000);
                    client.write(b);
                    b.clear();
                    while (b.hasRemaining()) {
                        accepted.read(b);
                    }
                    assertEquals(opened + 2, number("ConnectionsOpened"));
                    assertEquals(started + 2, number("UpgradesStarted"), "each side's session opened");
                    assertEquals(finished + 2, number("UpgradesFinished"), "both sides on UCX both ways");
                    assertTrue(entry("BytesOutByPath", "ucx") >= ucxOut + 1000, "the 1000 bytes over UCX");
                    assertTrue(entry("BytesInByPath", "ucx") >= ucxIn + 1000);
                    for (SocketChannel c : new SocketChannel[] {client, accepted}) {
                        CompositeData d = row(c);
                        assertNotNull(d, "listed: " + c);
                        assertEquals("OPEN", d.get("state"));
                        assertEquals("ucx", d.get("path"));
                        assertTrue(((String) d.get("transport")).startsWith("ucx:"), d.toString());
                        assertEquals("", d.get("reasonCode"));
                        assertTrue((Long) d.get("upgradedAt") > 0 && (Long) d.get("upgradedAt") <= before,
                                "upgraded before the last write: " + d.get("upgradedAt"));
                        assertTrue((Long) d.get("openedAt") <= (Long) d.get("upgradedAt"));
                    }
                    CompositeData c = row(client);
                    CompositeData a = row(accepted);
                    assertTrue((Long) c.get("bytesOut") >= 1000 + 8, "the ping-pong's and the 1000: " + c);
                    assertEquals(c.get("bytesOut"), a.get("bytesIn"), "what one wrote the other read");
                    assertEquals(c.get("bytesIn"), a.get("bytesOut"));
                    assertTrue(entry("ConnectionsOpenByPath", "ucx") >= 2);
                }
            }
        }
        assertEquals(closed + 2, number("ConnectionsClosed"));
    }

    @Test
    void shouldSayWhyAConnectionToAPlainServerStaysOnTheKernel() throws Exception {
        long peerPlain = entry("FallbacksByReason", Fallback.PEER_PLAIN.code());
        long tcpOut = entry("BytesOutByPath", "kernel-tcp");
        SelectorProvider jdk = provider.platform();
        try (ServerSocketChannel listener = jdk.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = provider.openSocketChannel()) {
                client.connect(listener.getLocalAddress());
                try (SocketChannel accepted = listener.accept()) {
                    ByteBuffer b = ByteBuffer.allocate(100);
                    // with no delay the upgrade begins at the connect, and finds no listener of ours
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    do {
                        assertTrue(System.nanoTime() < deadline, "no fallback counted");
                        b.clear();
                        client.write(b);
                        b.clear();
                        while (b.hasRemaining()) {
                            accepted.read(b);
                        }
                        Thread.sleep(1);
                    } while (entry("FallbacksByReason", Fallback.PEER_PLAIN.code()) == peerPlain);
                    CompositeData d = row(client);
                    assertNotNull(d);
                    assertEquals("kernel-tcp", d.get("path"));
                    assertEquals("tcp", d.get("transport"));
                    assertEquals("peer-plain", d.get("reasonCode"));
                    assertTrue(((String) d.get("reason")).startsWith(Fallback.PEER_PLAIN.words()), d.toString());
                    assertEquals(0L, d.get("upgradedAt"));
                    assertTrue((Long) d.get("bytesOut") >= 100, d.toString());
                    assertTrue(entry("BytesOutByPath", "kernel-tcp") >= tcpOut + 100);
                }
            }
        }
    }

    /** Upgrade mode: the upgrade's session is refused; eager mode: the rendezvous refuses the registration. */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void shouldSayWhenThePeerRunsHadronioWithAnotherKey(boolean upgrade, @TempDir Path dir) throws Exception {
        java.util.Properties p = new java.util.Properties();
        p.setProperty("hadronio.upgrade", String.valueOf(upgrade));
        p.setProperty("hadronio.upgrade.delay", "0");
        HadronioProvider ours = upgrade ? provider : new HadronioProvider(HadronioConfig.from(p));
        p.setProperty("hadronio.secret.file", dir.resolve("other-secret").toString());
        HadronioProvider other = new HadronioProvider(HadronioConfig.from(p));
        assertTrue(other.isAccelerated() && ours.isAccelerated());
        long otherKeys = entry("FallbacksByReason", Fallback.OTHER_KEY.code());
        try (ServerSocketChannel listener = other.openServerSocketChannel()) {
            listener.bind(new InetSocketAddress("127.0.0.1", 0));
            try (SocketChannel client = ours.openSocketChannel()) {
                client.connect(listener.getLocalAddress());
                try (SocketChannel accepted = listener.accept()) {
                    ByteBuffer b = ByteBuffer.allocate(100);
                    long deadline = System.nanoTime() + 10_000_000_000L;
                    do {
                        assertTrue(System.nanoTime() < deadline, "no fallback counted: " + row(client));
                        b.clear();
                        client.write(b);
                        b.clear();
                        while (b.hasRemaining()) {
                            accepted.read(b);
                        }
                        Thread.sleep(1);
                    } while (entry("FallbacksByReason", Fallback.OTHER_KEY.code()) == otherKeys);
                    CompositeData d = row(client);
                    assertEquals("other-key", d.get("reasonCode"), d.toString());
                    assertTrue(((String) d.get("path")).startsWith("kernel-"), d.toString());
                    assertEquals(0L, d.get("upgradedAt"));
                }
            }
        }
    }

    @Test
    void shouldShowTheConfigurationInForceAndEveryReason() throws Exception {
        @SuppressWarnings("unchecked")
        TabularData config = (TabularData) jmx.getAttribute(NAME, "Configuration");
        assertNotNull(config.get(new Object[] {"sliceSize"}), config.toString());
        TabularData reasons = (TabularData) jmx.getAttribute(NAME, "FallbackReasons");
        for (Fallback f : Fallback.values()) {
            assertEquals(f.words(), reasons.get(new Object[] {f.code()}).get("value"));
        }
        Map<String, Long> open = Counters.jvm().openByPath();
        assertFalse(open.isEmpty());
        for (String attribute : new String[] {"HandshakeFailures", "Resets", "UpgradesAbandoned"}) {
            assertTrue(number(attribute) >= 0);
        }
    }
}
