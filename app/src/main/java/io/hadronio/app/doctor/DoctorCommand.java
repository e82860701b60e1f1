package io.hadronio.app.doctor;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import java.io.PrintWriter;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code hadronio doctor}: is this machine, with this JVM's {@code hadronio.*} properties, able to
 * accelerate, and what to fix if not ({@link MachineChecks}). One line per check, OK / WARN /
 * FAIL, the fix under each that is not OK; {@code --json} for scripts. Exit status: 0 all OK, 1 a
 * warning, 2 a failure.
 */
@Command(name = "doctor", mixinStandardHelpOptions = true,
        description = {"Checks this machine and the hadronio.* properties of this JVM (pass them as -D...):",
            "UCX and its transports, cma's ptrace permission, RDMA, /dev/shm, the key file, remote.networks,",
            "huge pages, locked memory, the JDK and native access. Exit status 0 OK, 1 WARN, 2 FAIL."})
public final class DoctorCommand implements Callable<Integer> {
    @Spec
    CommandSpec spec;

    @Option(names = "--json", description = "One JSON object: the overall status and every check.")
    boolean json;

    // where the machine is read (tests point these at broken files)
    @Option(names = "--dev-shm", hidden = true)
    Path devShm;

    @Option(names = "--ptrace-scope", hidden = true)
    Path ptraceScope;

    @Override
    public Integer call() throws Exception {
        MachineChecks.Machine real = MachineChecks.Machine.real();
        MachineChecks.Machine m = new MachineChecks.Machine(devShm != null ? devShm : real.devShm(),
                ptraceScope != null ? ptraceScope : real.ptraceScope(), real.infiniband(), real.transparentHugePages(),
                real.limits());
        List<Check> checks = new MachineChecks(System.getProperties(), m).run();
        Check.Status worst = Check.Status.OK;
        for (Check c : checks) {
            if (c.status().compareTo(worst) > 0) {
                worst = c.status();
            }
        }
        PrintWriter out = spec.commandLine().getOut();
        if (json) {
            Map<String, Object> doc = new LinkedHashMap<>();
            doc.put("status", worst);
            doc.put("checks", checks);
            out.println(new ObjectMapper().enable(SerializationFeature.INDENT_OUTPUT).writeValueAsString(doc));
        } else {
            for (Check c : checks) {
                out.printf("%-5s %-16s %s%n", c.status(), c.name(), c.detail());
                if (!c.fix().isEmpty()) {
                    out.printf("      %-16s fix: %s%n", "", c.fix());
                }
            }
            long warnings = checks.stream().filter(c -> c.status() == Check.Status.WARN).count();
            long failures = checks.stream().filter(c -> c.status() == Check.Status.FAIL).count();
            out.println("hadronio doctor: " + worst + " (" + checks.size() + " checks, " + warnings + " warnings, "
                    + failures + " failures)");
        }
        out.flush();
        return worst.exitCode();
    }
}
