package io.hadronio.app.doctor;

import io.hadronio.config.HadronioConfig;
import io.hadronio.connection.Secret;
import io.hadronio.ucx.Feature;
import io.hadronio.ucx.Ucx;
import io.hadronio.ucx.UcxContext;
import java.io.IOException;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * The checks of {@code hadronio doctor}, each of this machine and of the configuration in
 * {@code properties} (the {@code hadronio.*} system properties of the JVM that runs it): UCX and
 * its version, its transports (shared memory, cma and the ptrace permission it needs between
 * processes, RDMA devices), {@code /dev/shm}, the key file, {@code hadronio.remote.networks},
 * huge pages and the locked-memory limit, the JDK and native access, and the properties set,
 * validated as the provider validates them (and {@code hadronio.ucx.*} by UCX itself).
 *
 * <p>Where the machine is read is a parameter ({@link Machine}), so that a test can point a check
 * at a broken {@code /dev/shm} or an unreadable file.
 */
public final class MachineChecks {
    /** Where the checks read the machine: the real paths, or a test's. */
    public record Machine(Path devShm, Path ptraceScope, Path infiniband, Path transparentHugePages, Path limits) {
        /** This machine. */
        public static Machine real() {
            return new Machine(Path.of("/dev/shm"), Path.of("/proc/sys/kernel/yama/ptrace_scope"),
                    Path.of("/sys/class/infiniband"), Path.of("/sys/kernel/mm/transparent_hugepage/enabled"),
                    Path.of("/proc/self/limits"));
        }
    }

    private final Properties properties;
    private final Machine machine;
    // the transports ucx_info -d lists, or null when it cannot be asked
    private Set<String> transports;

    public MachineChecks(Properties properties, Machine machine) {
        this.properties = properties;
        this.machine = machine;
    }

    /** Every check, in the order a person reads them. */
    public List<Check> run() {
        List<Check> checks = new ArrayList<>();
        HadronioConfig config = null;
        try {
            config = HadronioConfig.from(properties);
            checks.add(Check.ok("properties", propertiesSet().isEmpty() ? "no hadronio.* property set: the defaults"
                    : "set and valid: " + propertiesSet()));
        } catch (IllegalArgumentException e) {
            checks.add(Check.fail("properties", e.getMessage(),
                    "correct or remove the property (docs/configuration.md lists each and its values)"));
        }
        checks.add(jdk());
        checks.add(nativeAccess());
        boolean ucx = Ucx.isAvailable();
        checks.add(ucx ? Check.ok("ucx", "UCX " + Ucx.version())
                : Check.fail("ucx", "UCX cannot be loaded: " + Ucx.unavailableReason().getMessage(),
                "install UCX 1.13 or later (Debian/Ubuntu: apt-get install libucx0 ucx-utils); everything runs on the JDK's provider meanwhile"));
        if (ucx) {
            checks.add(transportsOffered());
            checks.add(ucxSettings(config));
        }
        checks.add(cma());
        checks.add(rdma(config));
        checks.add(devShm());
        checks.add(keyFile(config));
        checks.add(remoteNetworks(config));
        checks.add(hugePages());
        checks.add(lockedMemory());
        return checks;
    }

    private Map<String, String> propertiesSet() {
        Map<String, String> m = new TreeMap<>();
        for (String name : properties.stringPropertyNames()) {
            if (name.startsWith(HadronioConfig.PREFIX)) {
                m.put(name, properties.getProperty(name));
            }
        }
        return m;
    }

    private static Check jdk() {
        Runtime.Version v = Runtime.version();
        return v.feature() >= 22 ? Check.ok("jdk", "Java " + v + " (" + System.getProperty("java.vm.name") + ")")
                : Check.fail("jdk", "Java " + v + ": hadroNIO needs 22 or later (the FFM API)", "run it on JDK 22 or later");
    }

    private static Check nativeAccess() {
        return MachineChecks.class.getModule().isNativeAccessEnabled()
                ? Check.ok("native-access", "enabled for the class path (--enable-native-access=ALL-UNNAMED)")
                : Check.warn("native-access", "not enabled: the JDK warns at hadroNIO's first native call, and a later JDK refuses it",
                "start the JVM with --enable-native-access=ALL-UNNAMED (or Enable-Native-Access: ALL-UNNAMED in the jar's manifest)");
    }

    /** The transports of {@code ucx_info -d}, or null when it cannot be run. */
    private Set<String> transports() {
        if (transports != null) {
            return transports;
        }
        try {
            Process p = new ProcessBuilder("ucx_info", "-d").redirectErrorStream(true).start();
            Set<String> found = new LinkedHashSet<>();
            for (String line : new String(p.getInputStream().readAllBytes()).split("\n")) {
                String l = line.replace("#", "").trim();
                if (l.startsWith("Transport:")) {
                    found.add(l.substring("Transport:".length()).trim());
                }
            }
            if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
                return null;
            }
            transports = found;
            return found;
        } catch (IOException e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private Check transportsOffered() {
        Set<String> t = transports();
        if (t == null) {
            return Check.warn("ucx-transports", "ucx_info -d cannot be run: the transports are not known",
                    "install UCX's tools (Debian/Ubuntu: ucx-utils) to see them");
        }
        boolean sharedMemory = t.contains("sysv") || t.contains("posix") || t.contains("cma") || t.contains("xpmem")
                || t.contains("knem");
        if (!sharedMemory) {
            return Check.warn("ucx-transports", "UCX offers " + t + ": no shared memory, so local connections stay on the kernel",
                    "install or enable UCX's shared-memory transports (sysv, posix, cma)");
        }
        return Check.ok("ucx-transports", String.join(", ", t));
    }

    /** hadronio.ucx.* as UCX judges them: a context opened with them, as the provider's start does. */
    private Check ucxSettings(HadronioConfig config) {
        if (config == null || config.ucx().isEmpty()) {
            return Check.ok("ucx-settings", "no hadronio.ucx.* set: UCX's defaults (and UCX_* in the environment)");
        }
        UcxContext.Builder b = UcxContext.builder().features(Feature.TAG, Feature.WAKEUP).name("hadronio-doctor");
        try {
            config.ucx().forEach(b::config);
            try (UcxContext c = b.open()) {
                return Check.ok("ucx-settings", "UCX takes " + config.ucx());
            }
        } catch (Exception e) {
            return Check.fail("ucx-settings", "UCX refuses " + config.ucx() + ": " + e.getMessage(),
                    "correct the hadronio.ucx.* value (TLS: a list of ucx_info -d's transports, e.g. sm,self or ^tcp)");
        }
    }

    private Check cma() {
        Set<String> t = transports();
        if (t != null && !t.contains("cma")) {
            return Check.ok("cma", "UCX offers no cma: shared memory copies go through sysv/posix");
        }
        if (!Files.exists(machine.ptraceScope())) {
            return Check.ok("cma", "no Yama ptrace restriction (" + machine.ptraceScope() + " absent): cma works between a user's processes");
        }
        String scope = read(machine.ptraceScope());
        if (scope == null) {
            return Check.warn("cma", "cannot read " + machine.ptraceScope(), "check that the file is readable");
        }
        return switch (scope.trim()) {
            case "0" -> Check.ok("cma", "kernel.yama.ptrace_scope=0: cma works between a user's processes");
            default -> Check.warn("cma", "kernel.yama.ptrace_scope=" + scope.trim()
                    + ": cma (one-copy shared memory) fails between processes that are not parent and child; UCX falls back to sysv/posix",
                    "sysctl -w kernel.yama.ptrace_scope=0 (or leave it: sysv/posix still carry the bytes)");
        };
    }

    private Check rdma(HadronioConfig config) {
        List<String> devices = new ArrayList<>();
        if (Files.isDirectory(machine.infiniband())) {
            try (var s = Files.list(machine.infiniband())) {
                s.forEach(p -> devices.add(p.getFileName().toString()));
            } catch (IOException e) {
                // none listed
            }
        }
        Collections.sort(devices);
        if (!devices.isEmpty()) {
            return Check.ok("rdma", "RDMA devices: " + String.join(", ", devices));
        }
        if (config != null && config.hasRemoteNetworks()) {
            return Check.warn("rdma", "no RDMA device, and hadronio.remote.networks is set: across hosts UCX has tcp only, "
                    + "so those connections stay on the kernel's TCP", "add RDMA hardware, or drop hadronio.remote.networks");
        }
        return Check.ok("rdma", "no RDMA device (connections on this host use shared memory)");
    }

    private Check devShm() {
        Path shm = machine.devShm();
        try {
            FileStore store = Files.getFileStore(shm);
            long total = store.getTotalSpace();
            long free = store.getUsableSpace();
            if (!Files.isWritable(shm)) {
                return Check.fail("dev-shm", shm + " is not writable", "mount a tmpfs there writable by all (mode 1777)");
            }
            if (total < 64L << 20) {
                return Check.warn("dev-shm", shm + ": " + mib(total) + " in all: UCX's posix transport may run out",
                        "enlarge it (mount -o remount,size=1g " + shm + "; Docker: --shm-size=1g)");
            }
            return Check.ok("dev-shm", shm + ": " + mib(total) + ", " + mib(free) + " free");
        } catch (IOException e) {
            return Check.fail("dev-shm", "cannot read " + shm + ": " + e, "mount a tmpfs on /dev/shm (UCX's posix transport needs it)");
        }
    }

    private static String mib(long bytes) {
        return (bytes >> 20) + " MiB";
    }

    private Check keyFile(HadronioConfig config) {
        Path file = config != null ? config.secretFile() : Path.of(System.getProperty("user.home"), ".hadronio", "secret");
        if (!Files.exists(file, LinkOption.NOFOLLOW_LINKS)) {
            return Check.ok("key-file", file + " not made yet: the first hadroNIO process makes it (mode 0600)");
        }
        try {
            if (!Files.isReadable(file)) {
                return Check.fail("key-file", file + " is not readable by this user",
                        "chown $(id -un) " + file + " (each process of a deployment must read the same key)");
            }
            String owner = Files.getOwner(file, LinkOption.NOFOLLOW_LINKS).getName();
            String me = System.getProperty("user.name");
            Set<PosixFilePermission> perms = Files.getPosixFilePermissions(file, LinkOption.NOFOLLOW_LINKS);
            // the provider's own checks: mode and length
            Secret.load(file);
            if (!owner.equals(me)) {
                return Check.warn("key-file", file + " belongs to " + owner + ", not to " + me,
                        "chown " + me + " " + file + " (a key another user can change is not yours to trust)");
            }
            return Check.ok("key-file", file + " (" + PosixFilePermissions.toString(perms) + ", owner " + owner + ")");
        } catch (IOException e) {
            return Check.fail("key-file", e.getMessage(), fixOf(e.getMessage(), file));
        }
    }

    private static String fixOf(String message, Path file) {
        if (message != null && message.contains("chmod")) {
            return "chmod 600 " + file;
        }
        return "delete " + file + " to have a new one made (and copy it to every host of the deployment), "
                + "or point hadronio.secret.file at the right one";
    }

    private Check remoteNetworks(HadronioConfig config) {
        if (config == null) {
            return Check.warn("remote-networks", "not judged: the properties are invalid", "see the properties check");
        }
        if (!config.hasRemoteNetworks()) {
            return Check.ok("remote-networks", "not set: only connections on this host are accelerated");
        }
        List<String> inside = new ArrayList<>();
        try {
            for (NetworkInterface i : Collections.list(NetworkInterface.getNetworkInterfaces())) {
                for (InetAddress a : Collections.list(i.getInetAddresses())) {
                    if (!a.isLoopbackAddress() && config.isRemoteAccelerated(a)) {
                        inside.add(i.getName() + " " + a.getHostAddress());
                    }
                }
            }
        } catch (IOException e) {
            return Check.warn("remote-networks", "cannot list this host's interfaces: " + e, "check the network configuration");
        }
        if (inside.isEmpty()) {
            return Check.warn("remote-networks", "hadronio.remote.networks=" + config.remoteNetworks()
                    + ": no interface of this host is in them", "name the networks this host and its peers share (a typo?)");
        }
        return Check.ok("remote-networks", config.remoteNetworks() + " via " + String.join(", ", inside));
    }

    private Check hugePages() {
        String thp = read(machine.transparentHugePages());
        if (thp == null) {
            return Check.warn("huge-pages", "no transparent huge pages (" + machine.transparentHugePages() + ")",
                    "hadronio.hugepages has no effect here; large messages over shared memory are ~30 % slower");
        }
        if (thp.contains("[never]")) {
            return Check.warn("huge-pages", "transparent huge pages are off (" + thp.trim() + ")",
                    "echo madvise > " + machine.transparentHugePages() + " (hadronio.hugepages has no effect meanwhile)");
        }
        String kernel = System.getProperty("os.version", "");
        if (!atLeast(kernel, 6, 1)) {
            return Check.warn("huge-pages", "Linux " + kernel + ": MADV_COLLAPSE needs 6.1 or later",
                    "a newer kernel (hadronio.hugepages has no effect meanwhile)");
        }
        return Check.ok("huge-pages", "transparent huge pages " + thp.trim() + ", Linux " + kernel);
    }

    private static boolean atLeast(String version, int major, int minor) {
        String[] p = version.split("[.-]");
        try {
            int a = Integer.parseInt(p[0]);
            int b = p.length > 1 ? Integer.parseInt(p[1]) : 0;
            return a > major || a == major && b >= minor;
        } catch (NumberFormatException e) {
            return false;
        }
    }

    private Check lockedMemory() {
        String limits = read(machine.limits());
        if (limits == null) {
            return Check.warn("memlock", "cannot read " + machine.limits(), "check that /proc is mounted");
        }
        for (String line : limits.split("\n")) {
            if (line.startsWith("Max locked memory")) {
                String soft = line.substring("Max locked memory".length()).trim().split("\\s+")[0];
                if (soft.equals("unlimited")) {
                    return Check.ok("memlock", "unlimited");
                }
                long bytes = Long.parseLong(soft);
                boolean rdma = Files.isDirectory(machine.infiniband());
                if (rdma && bytes < 64L << 20) {
                    return Check.warn("memlock", mib(bytes) + " of locked memory: RDMA registrations of connections' areas may fail",
                            "raise RLIMIT_MEMLOCK (ulimit -l unlimited; systemd: LimitMEMLOCK=infinity)");
                }
                return Check.ok("memlock", mib(bytes) + " of locked memory (shared memory needs none; RDMA would)");
            }
        }
        return Check.warn("memlock", "no 'Max locked memory' in " + machine.limits(), "check /proc");
    }

    private static String read(Path p) {
        try {
            return Files.readString(p);
        } catch (IOException e) {
            return null;
        }
    }
}
