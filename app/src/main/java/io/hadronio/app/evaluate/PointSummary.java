package io.hadronio.app.evaluate;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.ToDoubleFunction;

/**
 * A point's runs summarised: each value as mean, standard deviation and median
 * ({@link Stat}), the most memory any run's processes held, and the transports seen.
 */
public record PointSummary(Point point, int runs, int failed, Stat opsPerSec, Stat bytesPerSec, Stat latencyMeanUs,
                           Stat latencyP50Us, Stat latencyP99Us, Stat latencyP999Us, Stat clientCpuUsPerOp,
                           Stat serverCpuUsPerOp, long clientPeakRssKb, long serverPeakRssKb, String transports) {

    /** One summary per point, in the order the points first appear in {@code records}. */
    static List<PointSummary> of(List<RunRecord> records) {
        Map<Point, List<RunRecord>> byPoint = new LinkedHashMap<>();
        for (RunRecord r : records) {
            byPoint.computeIfAbsent(r.point(), k -> new ArrayList<>()).add(r);
        }
        List<PointSummary> out = new ArrayList<>();
        byPoint.forEach((p, rs) -> out.add(of(p, rs)));
        return out;
    }

    static PointSummary of(Point point, List<RunRecord> runs) {
        List<RunRecord> ok = runs.stream().filter(RunRecord::ok).toList();
        Set<String> transports = new LinkedHashSet<>();
        ok.forEach(r -> transports.add(r.transport()));
        return new PointSummary(point, ok.size(), runs.size() - ok.size(), stat(ok, RunRecord::opsPerSec),
                stat(ok, RunRecord::bytesPerSec), stat(ok, RunRecord::latencyMeanUs), stat(ok, RunRecord::latencyP50Us),
                stat(ok, RunRecord::latencyP99Us), stat(ok, RunRecord::latencyP999Us),
                stat(ok, RunRecord::clientCpuUsPerOp), stat(ok, RunRecord::serverCpuUsPerOp),
                ok.stream().mapToLong(RunRecord::clientPeakRssKb).max().orElse(-1),
                ok.stream().mapToLong(RunRecord::serverPeakRssKb).max().orElse(-1), String.join(" / ", transports));
    }

    private static Stat stat(List<RunRecord> runs, ToDoubleFunction<RunRecord> value) {
        return Stat.of(runs.stream().mapToDouble(value).toArray());
    }
}
