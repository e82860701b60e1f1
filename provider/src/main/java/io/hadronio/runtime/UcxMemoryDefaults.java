package io.hadronio.runtime;

import java.util.LinkedHashMap;
import java.util.Map;

/**
 * UCX settings hadroNIO changes from UCX's own defaults, to make a process's UCX memory smaller,
 * each applied only where the user set neither {@code hadronio.ucx.KEY} nor the environment
 * variable {@code UCX_KEY} (for a shared-memory key: nor its {@code SYSV_}/{@code POSIX_} form),
 * and none where the user chose UCX's transports ({@code TLS}): a key that none of the chosen
 * transports uses would have UCX warn about it ({@code invalid configuration}) at start-up.
 *
 * <ul>
 * <li>{@code MM_RX_BUFS_GROW=128}: the shared-memory transports ({@code sysv}, {@code posix}) keep
 *     their receive buffers (8 KiB each) in a pool that grows by this many at a time, in a
 *     shared-memory segment per step. UCX's 512 made each transport write ~2 MiB of a 4 MiB
 *     segment at start-up, ~4 MiB per process; 128 covers the FIFO's 64 elements and what UCX
 *     holds for early messages, ~0.6 MiB each, and grows in 1 MiB steps as needed
 *     (docs/benchmarks/memory.md). A local setting: peers need not agree on it.
 * </ul>
 */
final class UcxMemoryDefaults {
    /** Key (without {@code UCX_}) and value. */
    static final Map<String, String> DEFAULTS = Map.of("MM_RX_BUFS_GROW", "128");

    private UcxMemoryDefaults() {
    }

    /**
     * The defaults the user left to us: those of {@link #DEFAULTS} whose key is neither in
     * {@code userUcx} (the {@code hadronio.ucx.*} keys, upper case) nor, with {@code UCX_}, in
     * {@code environment}, in either its {@code MM_} form or a transport's ({@code SYSV_}, {@code POSIX_});
     * none when either names the transports ({@code TLS}).
     */
    static Map<String, String> unsetBy(Map<String, String> userUcx, Map<String, String> environment) {
        Map<String, String> result = new LinkedHashMap<>();
        if (userUcx.containsKey("TLS") || environment.containsKey("UCX_TLS")) {
            return result;
        }
        for (Map.Entry<String, String> e : DEFAULTS.entrySet()) {
            String key = e.getKey();
            boolean set = false;
            for (String form : forms(key)) {
                set |= userUcx.containsKey(form) || environment.containsKey("UCX_" + form);
            }
            if (!set) {
                result.put(key, e.getValue());
            }
        }
        return result;
    }

    /** A key and, for the shared-memory table ({@code MM_}), the names of its transports' own tables. */
    private static String[] forms(String key) {
        if (key.startsWith("MM_")) {
            String rest = key.substring(3);
            return new String[] {key, "SYSV_" + rest, "POSIX_" + rest};
        }
        return new String[] {key};
    }
}
