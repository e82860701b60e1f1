package io.hadronio.it.selector;

import io.hadronio.HadronioProvider;
import java.io.IOException;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.nio.channels.spi.SelectorProvider;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Everything a peer JVM holds that a leak would grow, as one line of {@code name=value}
 * pairs for the test to parse: Linux's view ({@code fds} in /proc/self/fd, {@code tasks}
 * in /proc/self/task, {@code rssKiB}, {@code maps}: lines of /proc/self/maps, {@code sysv}:
 * those of System V shared memory, which UCX's sysv transport maps), the JVM's
 * ({@code threads}: live Java threads, {@code heapKiB} after a full GC, {@code directKiB},
 * {@code directBuffers}, {@code mappedKiB}, {@code mappedBuffers} of the buffer pools), and
 * on hadroNIO what it holds for connections ({@link HadronioProvider#resources()}: UCX
 * requests and endpoints, connections' native memory, the control thread's connections).
 */
final class ResourceFigures {
    private ResourceFigures() {
    }

    /** Resident memory of this process, KiB ({@code VmRSS}). */
    static long rssKiB() throws IOException {
        for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
            if (line.startsWith("VmRSS:")) {
                return Long.parseLong(line.substring(6).trim().split("\\s+")[0]);
            }
        }
        return -1;
    }

    /** Entries of a /proc/self directory (fd, task). */
    static int count(String dir) throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self", dir))) {
            return (int) s.count();
        }
    }

    /** This JVM now, after a full GC (so that heap and direct buffers count what is live). */
    static String take() throws IOException, InterruptedException {
        System.gc();
        // direct buffers are freed by the Cleaner thread once the GC found them unreachable
        Thread.sleep(100);
        System.gc();
        Map<String, Long> f = new LinkedHashMap<>();
        f.put("fds", (long) count("fd"));
        f.put("tasks", (long) count("task"));
        f.put("threads", (long) ManagementFactory.getThreadMXBean().getThreadCount());
        f.put("rssKiB", rssKiB());
        f.put("heapKiB", ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed() / 1024);
        for (BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class)) {
            if (pool.getName().equals("direct") || pool.getName().equals("mapped")) {
                f.put(pool.getName() + "KiB", pool.getMemoryUsed() / 1024);
                f.put(pool.getName() + "Buffers", pool.getCount());
            }
        }
        List<String> maps = Files.readAllLines(Path.of("/proc/self/maps"));
        f.put("maps", (long) maps.size());
        f.put("sysv", maps.stream().filter(l -> l.contains("/SYSV")).count());
        if (SelectorProvider.provider() instanceof HadronioProvider p) {
            f.putAll(p.resources());
        }
        StringBuilder sb = new StringBuilder();
        f.forEach((k, v) -> sb.append(sb.isEmpty() ? "" : " ").append(k).append('=').append(v));
        return sb.toString();
    }

    /** The pairs of a line {@link #take()} made (other words are skipped). */
    static Map<String, Long> parse(String line) {
        Map<String, Long> f = new LinkedHashMap<>();
        for (String word : line.trim().split("\\s+")) {
            int eq = word.indexOf('=');
            if (eq > 0) {
                f.put(word.substring(0, eq), Long.parseLong(word.substring(eq + 1)));
            }
        }
        return f;
    }
}
