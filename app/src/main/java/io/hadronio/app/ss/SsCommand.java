package io.hadronio.app.ss;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.sun.tools.attach.VirtualMachine;
import com.sun.tools.attach.VirtualMachineDescriptor;
import java.io.PrintWriter;
import java.time.Instant;
import java.time.ZoneId;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import javax.management.MBeanServerConnection;
import javax.management.ObjectName;
import javax.management.openmbean.CompositeData;
import javax.management.remote.JMXConnector;
import javax.management.remote.JMXConnectorFactory;
import javax.management.remote.JMXServiceURL;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio ss [PID]} (after {@code ss} and SMC's {@code smcss}): the connections of running
 * hadroNIO JVMs, one row each: local and remote address, state, path, the reason it is not on
 * UCX (a stable code; its words under the row), bytes in and out, the time of its upgrade. It
 * reaches a JVM through the JDK's own means: the attach API starts the JVM's local management
 * agent ({@code VirtualMachine.startLocalManagementAgent}), whose JMX connector is local to this
 * user, and reads the MBean {@code io.hadronio:type=Provider}. Without a PID, every JVM of this
 * user that has the MBean.
 */
@Command(name = "ss", mixinStandardHelpOptions = true,
        description = {"Lists the connections of running hadroNIO JVMs (all of this user's, or PID's):",
            "addresses, state, path (ucx, kernel-tcp, kernel-unix), why not on UCX, bytes, upgrade time.",
            "Exit status 0; 2 when PID is not a hadroNIO JVM this user can attach to."})
public final class SsCommand implements Callable<Integer> {
    /** The MBean every hadroNIO JVM registers (io.hadronio.observe.ProviderMonitor). */
    static final String MBEAN = "io.hadronio:type=Provider";
    // the system property a hadroNIO JVM carries (ProviderMonitor.MARKER_PROPERTY)
    static final String MARKER = "io.hadronio.provider";
    // how long the MBean may take to appear once the agent made the JVM's JMX (its watch looks every 0.5 s)
    private static final long MBEAN_WAIT_NANOS = 3_000_000_000L;
    private static final DateTimeFormatter TIME = DateTimeFormatter.ofPattern("yyyy-MM-dd HH:mm:ss.SSS")
            .withZone(ZoneId.systemDefault());

    @Spec
    CommandSpec spec;

    @Parameters(arity = "0..1", paramLabel = "PID", description = "One JVM; default: every hadroNIO JVM of this user.")
    String pid;

    @Option(names = "--json", description = "One JSON array: each JVM's pid and its connections.")
    boolean json;

    /** One JVM's connections, as its MBean lists them. */
    record Jvm(String pid, String name, List<Map<String, Object>> connections) {
    }

    @Override
    public Integer call() throws Exception {
        List<Jvm> jvms = new ArrayList<>();
        PrintWriter out = spec.commandLine().getOut();
        if (pid != null) {
            try {
                Jvm j = read(pid, pid);
                if (j == null) {
                    spec.commandLine().getErr().println("hadronio ss: JVM " + pid + " has no MBean " + MBEAN
                            + " (not a hadroNIO JVM, or its provider has not started)");
                    return 2;
                }
                jvms.add(j);
            } catch (Exception e) {
                spec.commandLine().getErr().println("hadronio ss: cannot attach to JVM " + pid + ": " + e);
                return 2;
            }
        } else {
            String self = String.valueOf(ProcessHandle.current().pid());
            for (VirtualMachineDescriptor d : VirtualMachine.list()) {
                if (d.id().equals(self)) {
                    continue;
                }
                try {
                    Jvm j = read(d.id(), d.displayName());
                    if (j != null) {
                        jvms.add(j);
                    }
                } catch (Exception e) {
                    // not ours to read (another user's, attach disabled, gone meanwhile)
                }
            }
        }
        if (json) {
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(jvms));
        } else {
            print(out, jvms);
        }
        out.flush();
        return 0;
    }

    /** The connections of JVM {@code id}, or null when it has no hadroNIO MBean. */
    private static Jvm read(String id, String name) throws Exception {
        VirtualMachine vm = VirtualMachine.attach(id);
        String address;
        try {
            // a JVM without hadroNIO is left as it is: no management agent started in it
            if (vm.getSystemProperties().getProperty(MARKER) == null) {
                return null;
            }
            address = vm.startLocalManagementAgent();
        } finally {
            vm.detach();
        }
        try (JMXConnector c = JMXConnectorFactory.connect(new JMXServiceURL(address))) {
            MBeanServerConnection s = c.getMBeanServerConnection();
            ObjectName mbean = new ObjectName(MBEAN);
            // the provider registers its MBean only once the JVM's JMX is up, which the agent just
            // brought about: its watch looks twice a second
            long deadline = System.nanoTime() + MBEAN_WAIT_NANOS;
            while (!s.isRegistered(mbean)) {
                if (System.nanoTime() - deadline > 0) {
                    return null;
                }
                Thread.sleep(50);
            }
            List<Map<String, Object>> rows = new ArrayList<>();
            for (CompositeData d : (CompositeData[]) s.getAttribute(mbean, "Connections")) {
                Map<String, Object> row = new LinkedHashMap<>();
                for (String key : new String[] {"local", "remote", "state", "path", "transport", "reasonCode", "reason",
                    "bytesIn", "bytesOut", "openedAt", "upgradedAt"}) {
                    row.put(key, d.get(key));
                }
                rows.add(row);
            }
            rows.sort((a, b) -> String.valueOf(a.get("local")).compareTo(String.valueOf(b.get("local"))));
            return new Jvm(id, name, rows);
        }
    }

    private static void print(PrintWriter out, List<Jvm> jvms) {
        if (jvms.isEmpty()) {
            out.println("no hadroNIO JVM of this user has connections to show");
            return;
        }
        String format = "%-8s %-22s %-22s %-8s %-11s %-22s %-10s %10s %10s  %s%n";
        out.printf(format, "PID", "LOCAL", "REMOTE", "STATE", "PATH", "REASON", "TRANSPORT", "BYTES-IN", "BYTES-OUT",
                "UPGRADED");
        for (Jvm j : jvms) {
            for (Map<String, Object> r : j.connections()) {
                long upgraded = (Long) r.get("upgradedAt");
                String reason = (String) r.get("reasonCode");
                out.printf(format, j.pid(), r.get("local"), r.get("remote"), r.get("state"), r.get("path"),
                        reason.isEmpty() ? "-" : reason, r.get("transport"), r.get("bytesIn"), r.get("bytesOut"),
                        upgraded == 0 ? "-" : TIME.format(Instant.ofEpochMilli(upgraded)));
                if (!reason.isEmpty()) {
                    out.printf("%8s why: %s%n", "", r.get("reason"));
                }
            }
        }
    }
}
