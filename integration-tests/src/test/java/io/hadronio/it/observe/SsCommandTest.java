package io.hadronio.it.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.hadronio.app.HadronioCommand;
import io.hadronio.it.ChildJvm;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import picocli.CommandLine;

/**
 * {@code hadronio ss PID} against a child JVM holding one connection on each path
 * ({@link ObservedWorkload} with {@code hold}, in the upgrade mode with local streams): a blocking
 * pair moved to UCX, a connection to {@code java.net.ServerSocket} on kernel TCP (a plain peer), and
 * a local-stream pair before its upgrade; every field of their rows is checked, as the command
 * reads them through the attach API and the JVM's local JMX agent. Without a PID it lists every
 * hadroNIO JVM of this user and starts no management agent in a JVM without hadroNIO.
 */
@Timeout(120)
class SsCommandTest {
    private record Run(int exit, String out, String err) {
    }

    private static Run ss(String... args) {
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        CommandLine cl = HadronioCommand.commandLine();
        cl.setOut(new PrintWriter(out));
        cl.setErr(new PrintWriter(err));
        String[] all = new String[args.length + 1];
        all[0] = "ss";
        System.arraycopy(args, 0, all, 1, args.length);
        return new Run(cl.execute(all), out.toString(), err.toString());
    }

    /** The row whose {@code field} address ends with {@code :port}, or null. */
    private static JsonNode row(JsonNode jvms, String field, int port) {
        for (JsonNode c : jvms.get(0).get("connections")) {
            if (c.get(field).asText().endsWith(":" + port)) {
                return c;
            }
        }
        return null;
    }

    @Test
    void shouldListEveryConnectionOfAJvmWithItsPathAndReason() throws Exception {
        // the workload's connections make tens of writes: they move at their second
        // (hadronio.upgrade.writes), so that the listing has moved ones beside plain ones
        try (ChildJvm child = ChildJvm.start(ObservedWorkload.class, List.of(
                "-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER, "-Dhadronio.upgrade=true",
                "-Dhadronio.local.stream=true", "-Dhadronio.upgrade.writes=1"), "hold")) {
            int blocking = Integer.parseInt(child.expect("BLOCKING ").split(" ")[0]);
            int plain = Integer.parseInt(child.expect("PLAIN ").split(" ")[0]);
            int local = Integer.parseInt(child.expect("LOCAL ").split(" ")[0]);
            child.expect("READY");
            String pid = String.valueOf(child.process().pid());
            long total = (long) ObservedWorkload.ROUNDS * ObservedWorkload.REQUEST;

            JsonNode jvms = null;
            JsonNode moved = null;
            long deadline = System.nanoTime() + 30_000_000_000L;
            // the blocking pair's last direction may move a moment after the workload said so
            while (moved == null || !moved.get("path").asText().equals("ucx")) {
                assertTrue(System.nanoTime() < deadline, "the blocking client never listed on UCX: " + jvms);
                Run r = ss(pid, "--json");
                assertEquals(0, r.exit(), r.err());
                jvms = new ObjectMapper().readTree(r.out());
                moved = row(jvms, "local", blocking);
                Thread.sleep(100);
            }
            assertEquals(1, jvms.size());
            assertEquals(pid, jvms.get(0).get("pid").asText());

            assertEquals("OPEN", moved.get("state").asText());
            assertTrue(moved.get("transport").asText().startsWith("ucx:"), moved.toString());
            assertEquals("", moved.get("reasonCode").asText());
            assertEquals(total, moved.get("bytesIn").asLong());
            assertEquals(total, moved.get("bytesOut").asLong());
            assertTrue(moved.get("upgradedAt").asLong() >= moved.get("openedAt").asLong(), moved.toString());
            assertTrue(moved.get("remote").asText().startsWith("/127.0.0.1:"), moved.toString());

            JsonNode toPlain = row(jvms, "local", plain);
            assertNotNull(toPlain, jvms.toString());
            assertEquals("OPEN", toPlain.get("state").asText());
            assertEquals("kernel-tcp", toPlain.get("path").asText());
            assertEquals("tcp", toPlain.get("transport").asText());
            assertEquals("peer-plain", toPlain.get("reasonCode").asText());
            assertTrue(toPlain.get("reason").asText().contains("does not run hadroNIO"), toPlain.toString());
            assertEquals(200, toPlain.get("bytesOut").asLong());
            assertEquals(0, toPlain.get("bytesIn").asLong());
            assertEquals(0, toPlain.get("upgradedAt").asLong());

            for (JsonNode idle : new JsonNode[] {row(jvms, "local", local), row(jvms, "remote", local)}) {
                assertNotNull(idle, jvms.toString());
                assertEquals("OPEN", idle.get("state").asText());
                assertEquals("kernel-unix", idle.get("path").asText(), idle.toString());
                assertEquals("unix", idle.get("transport").asText());
                assertEquals("upgrade-not-triggered", idle.get("reasonCode").asText(), idle.toString());
                assertEquals(10, idle.get("bytesOut").asLong() + idle.get("bytesIn").asLong());
                assertEquals(0, idle.get("upgradedAt").asLong());
            }

            Run text = ss(pid);
            System.out.print(text.out());
            assertEquals(0, text.exit(), text.err());
            assertTrue(text.out().startsWith("PID "), text.out());
            assertTrue(text.out().lines().anyMatch(l -> l.startsWith(pid) && l.contains(":" + plain + " ")
                    && l.contains("kernel-tcp") && l.contains("peer-plain")), text.out());
            assertTrue(text.out().contains("why: the peer does not run hadroNIO"), text.out());
        }
    }

    @Test
    void withoutAPidShouldListTheHadronioJvmAndLeaveAJvmWithoutItAlone() throws Exception {
        try (ChildJvm plain = ChildJvm.start(ObservedWorkload.class, List.of(), "hold");
             ChildJvm ours = ChildJvm.start(ObservedWorkload.class, List.of(
                     "-D" + ChildJvm.PROVIDER_PROPERTY + "=" + ChildJvm.PROVIDER, "-Dhadronio.upgrade=true",
                     "-Dhadronio.local.stream=true"), "hold")) {
            plain.expect("READY");
            ours.expect("READY");
            String plainPid = String.valueOf(plain.process().pid());
            String ourPid = String.valueOf(ours.process().pid());
            Run r = ss("--json");
            assertEquals(0, r.exit(), r.err());
            JsonNode jvms = new ObjectMapper().readTree(r.out());
            boolean listed = false;
            for (JsonNode j : jvms) {
                assertTrue(!j.get("pid").asText().equals(plainPid), "a JVM without hadroNIO was listed: " + r.out());
                listed |= j.get("pid").asText().equals(ourPid) && j.get("connections").size() > 0;
            }
            assertTrue(listed, "the hadroNIO JVM and its connections are listed: " + r.out());
            com.sun.tools.attach.VirtualMachine vm = com.sun.tools.attach.VirtualMachine.attach(plainPid);
            try {
                assertEquals(null, vm.getAgentProperties().getProperty("com.sun.management.jmxremote.localConnectorAddress"),
                        "ss started a management agent in a JVM without hadroNIO");
            } finally {
                vm.detach();
            }
        }
    }

    @Test
    void shouldFailForAJvmWithoutHadronio() throws Exception {
        try (ChildJvm child = ChildJvm.start(ObservedWorkload.class, List.of(), "hold")) {
            child.expect("READY");
            Run r = ss(String.valueOf(child.process().pid()));
            assertEquals(2, r.exit(), r.out());
            assertTrue(r.err().contains("has no MBean io.hadronio:type=Provider"), r.err());
        }
    }
}
