package io.hadronio.app.evaluate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * The load mode's runs of one point (provider, server model, connections, offered rate)
 * summarised over the repetitions: each value as mean, standard deviation and median. A
 * repetition whose server saturated at a lower rate has no run at this one: {@code runs}
 * counts those that ran it.
 */
public record LoadSummary(Provider provider, Mode mode, int connections, int length, double offeredPerSec, int runs,
                          int failed, Stat achievedPerSec, Stat latencyMeanUs, Stat latencyP50Us, Stat latencyP99Us,
                          Stat latencyP999Us, Stat clientCpuUsPerRequest, Stat serverCpuUsPerRequest,
                          long clientPeakRssKb, long serverPeakRssKb, String transports) {

    private record Key(Provider provider, Mode mode, int connections, int length, double offered) {
    }

    /** One summary per point, in the order the points first appear in {@code records}. */
    static List<LoadSummary> of(List<LoadRecord> records) {
        Map<Key, List<LoadRecord>> byPoint = new LinkedHashMap<>();
        for (LoadRecord r : records) {
            byPoint.computeIfAbsent(new Key(r.provider(), r.mode(), r.connections(), r.length(), r.offeredPerSec()),
                    k -> new ArrayList<>()).add(r);
        }
        List<LoadSummary> out = new ArrayList<>();
        byPoint.forEach((k, rs) -> out.add(of(k, rs)));
        return out;
    }

    private static LoadSummary of(Key k, List<LoadRecord> runs) {
        List<LoadRecord> ok = runs.stream().filter(LoadRecord::ok).toList();
        Set<String> transports = new LinkedHashSet<>();
        ok.forEach(r -> transports.add(r.transport()));
        return new LoadSummary(k.provider(), k.mode(), k.connections(), k.length(), k.offered(), ok.size(),
                runs.size() - ok.size(), stat(ok, LoadRecord::achievedPerSec), stat(ok, LoadRecord::latencyMeanUs),
                stat(ok, LoadRecord::latencyP50Us), stat(ok, LoadRecord::latencyP99Us),
                stat(ok, LoadRecord::latencyP999Us), stat(ok, LoadRecord::clientCpuUsPerRequest),
                stat(ok, LoadRecord::serverCpuUsPerRequest),
                ok.stream().mapToLong(LoadRecord::clientPeakRssKb).max().orElse(-1),
                ok.stream().mapToLong(LoadRecord::serverPeakRssKb).max().orElse(-1), String.join(" / ", transports));
    }

    private static Stat stat(List<LoadRecord> runs, ToDoubleFunction<LoadRecord> value) {
        return Stat.of(runs.stream().mapToDouble(value).toArray());
    }

    /**
     * The point as one record of the medians of every value (repetition 0), for figures and
     * tables that draw one value per point; a point none of whose runs succeeded is a failed
     * record.
     */
    LoadRecord medians() {
        if (runs == 0) {
            return LoadRecord.failed(0, provider, mode, connections, length, offeredPerSec, Double.NaN,
                    failed + " of " + failed + " runs failed");
        }
        return new LoadRecord(0, provider, mode, connections, length, offeredPerSec, achievedPerSec.median(),
                latencyMeanUs.median(), latencyP50Us.median(), latencyP99Us.median(), latencyP999Us.median(),
                clientCpuUsPerRequest.median(), serverCpuUsPerRequest.median(), clientPeakRssKb, serverPeakRssKb,
                Objects.requireNonNullElse(transports, ""), Double.NaN, null);
    }
}
