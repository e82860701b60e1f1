package io.hadronio.app.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hadronio.app.HadronioCommand;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/**
 * {@code hadronio doctor} on this machine, and with what an operator gets wrong, each reported
 * as FAIL (or WARN) with its fix: a key file others can read, a key too short, an unreadable
 * {@code /dev/shm}, {@code hadronio.ucx.TLS=bogus}, an invalid property, remote networks this host
 * is not in, a ptrace restriction.
 * The command runs in this JVM, its properties set for the run only.
 */
class DoctorCommandTest {
    @TempDir
    Path dir;

    /** The command's exit status and its output. */
    private record Run(int exit, String out) {
        JsonNode json() throws Exception {
            return new ObjectMapper().readTree(out);
        }

        JsonNode check(String name) throws Exception {
            for (JsonNode c : json().get("checks")) {
                if (c.get("name").asText().equals(name)) {
                    return c;
                }
            }
            throw new AssertionError("no check " + name + " in " + out);
        }
    }

    private static Run doctor(Map<String, String> properties, String... args) {
        for (Map.Entry<String, String> e : properties.entrySet()) {
            System.setProperty(e.getKey(), e.getValue());
        }
        try {
            StringWriter out = new StringWriter();
            CommandLine cl = HadronioCommand.commandLine();
            cl.setOut(new PrintWriter(out));
            List<String> all = new ArrayList<>(List.of("doctor"));
            all.addAll(List.of(args));
            int exit = cl.execute(all.toArray(String[]::new));
            return new Run(exit, out.toString());
        } finally {
            properties.keySet().forEach(System::clearProperty);
        }
    }

    @Test
    void shouldCheckThisMachine() throws Exception {
        Run text = doctor(Map.of());
        System.out.print(text.out());
        assertNotEquals(2, text.exit(), "this machine runs the test suite on UCX: " + text.out());
        for (String name : new String[] {"properties", "jdk", "native-access", "ucx", "ucx-transports", "ucx-settings",
            "cma", "rdma", "dev-shm", "key-file", "remote-networks", "huge-pages", "memlock"}) {
            assertTrue(text.out().lines().anyMatch(l -> l.matches("(OK|WARN|FAIL) +" + name + " .*")), name + " in " + text.out());
        }
        assertTrue(text.out().contains("hadronio doctor: " + (text.exit() == 0 ? "OK" : "WARN")), text.out());
        Run json = doctor(Map.of(), "--json");
        assertEquals(text.exit(), json.exit());
        assertEquals("OK", json.check("ucx").get("status").asText());
        assertTrue(json.check("ucx").get("detail").asText().startsWith("UCX 1."));
        assertTrue(json.check("ucx-transports").get("detail").asText().contains("sysv"));
        assertEquals(json.exit() == 0 ? "OK" : "WARN", json.json().get("status").asText());
    }

    @Test
    void shouldFailAKeyFileOthersCanRead() throws Exception {
        Path key = dir.resolve("secret");
        Files.write(key, new byte[32]);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-r--r--"));
        Run r = doctor(Map.of("hadronio.secret.file", key.toString()), "--json");
        assertEquals(2, r.exit());
        JsonNode c = r.check("key-file");
        assertEquals("FAIL", c.get("status").asText());
        assertTrue(c.get("detail").asText().contains("accessible to other users"), c.toString());
        assertEquals("chmod 600 " + key, c.get("fix").asText());
    }

    @Test
    void shouldFailAKeyTooShort() throws Exception {
        Path key = dir.resolve("short");
        Files.write(key, new byte[5]);
        Files.setPosixFilePermissions(key, PosixFilePermissions.fromString("rw-------"));
        JsonNode c = doctor(Map.of("hadronio.secret.file", key.toString()), "--json").check("key-file");
        assertEquals("FAIL", c.get("status").asText());
        assertTrue(c.get("detail").asText().contains("holds 5 bytes"), c.toString());
        assertTrue(c.get("fix").asText().startsWith("delete " + key), c.toString());
    }

    @Test
    void shouldFailAnUnreadableDevShm() throws Exception {
        Path missing = dir.resolve("no-shm-here");
        Run r = doctor(Map.of(), "--json", "--dev-shm", missing.toString());
        assertEquals(2, r.exit());
        JsonNode c = r.check("dev-shm");
        assertEquals("FAIL", c.get("status").asText());
        assertTrue(c.get("detail").asText().startsWith("cannot read " + missing), c.toString());
        assertTrue(c.get("fix").asText().contains("tmpfs"), c.toString());
    }

    @Test
    void shouldFailTransportsUcxDoesNotHave() throws Exception {
        Run r = doctor(Map.of("hadronio.ucx.TLS", "bogus"), "--json");
        assertEquals(2, r.exit());
        JsonNode c = r.check("ucx-settings");
        assertEquals("FAIL", c.get("status").asText());
        assertTrue(c.get("detail").asText().contains("TLS=bogus"), c.toString());
        assertTrue(c.get("fix").asText().contains("ucx_info -d"), c.toString());
    }

    @Test
    void shouldFailAnInvalidPropertyWithTheProvidersOwnWords() throws Exception {
        Run r = doctor(Map.of("hadronio.slice.count", "1"));
        assertEquals(2, r.exit());
        assertTrue(r.out().lines().anyMatch(l -> l.startsWith("FAIL  properties")
                && l.contains("invalid value for system property hadronio.slice.count: '1'")), r.out());
        assertTrue(r.out().contains("fix: correct or remove the property"), r.out());
        assertTrue(r.out().contains("hadronio doctor: FAIL"), r.out());
    }

    @Test
    void shouldWarnOfRemoteNetworksNoInterfaceIsIn() throws Exception {
        // a unique-local IPv6 host no interface here has
        Run r = doctor(Map.of("hadronio.remote.networks", "fd00:dead:beef::1/128"), "--json");
        JsonNode c = r.check("remote-networks");
        assertEquals("WARN", c.get("status").asText(), c.toString());
        assertTrue(c.get("detail").asText().contains("no interface of this host"), c.toString());
        // one of this host's own addresses: an interface is in it
        java.net.InetAddress own = java.util.Collections.list(java.net.NetworkInterface.getNetworkInterfaces()).stream()
                .flatMap(i -> java.util.Collections.list(i.getInetAddresses()).stream())
                .filter(a -> !a.isLoopbackAddress() && a instanceof java.net.Inet4Address).findFirst().orElse(null);
        if (own != null) {
            JsonNode ok = doctor(Map.of("hadronio.remote.networks", own.getHostAddress() + "/32"), "--json")
                    .check("remote-networks");
            assertEquals("OK", ok.get("status").asText(), ok.toString());
        }
        JsonNode invalid = doctor(Map.of("hadronio.remote.networks", "not-a-network"), "--json").check("properties");
        assertEquals("FAIL", invalid.get("status").asText(), invalid.toString());
    }

    @Test
    void shouldWarnThatCmaNeedsPtracePermission() throws Exception {
        Path scope = dir.resolve("ptrace_scope");
        Files.writeString(scope, "1\n");
        JsonNode c = doctor(Map.of(), "--json", "--ptrace-scope", scope.toString()).check("cma");
        assertEquals("WARN", c.get("status").asText());
        assertTrue(c.get("detail").asText().contains("ptrace_scope=1"), c.toString());
        assertTrue(c.get("fix").asText().contains("kernel.yama.ptrace_scope=0"), c.toString());
    }
}
