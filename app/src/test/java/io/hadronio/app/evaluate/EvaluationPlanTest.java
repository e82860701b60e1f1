package io.hadronio.app.evaluate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.hadronio.app.HadronioCommand;
import java.util.EnumSet;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What an evaluation runs, without running it: series by metric, the binding's arguments, bad options. */
class EvaluationPlanTest {

    @Test
    void shouldRunOnlyTheMetricsAskedFor() {
        Evaluation e = new Evaluation(Profile.STEADY, Profile.STEADY.sizes(), 5,
                EnumSet.of(Mode.BLOCKING, Mode.NETTY, Mode.RAW), EnumSet.allOf(Provider.class), EnumSet.of(Metric.THROUGHPUT));
        // blocking and Netty on the JDK and hadroNIO, the binding on raw: 5 series of 2 sizes, each 5 times
        assertEquals(5, e.series().size());
        assertTrue(e.points().stream().allMatch(p -> p.metric() == Metric.THROUGHPUT));
        assertEquals(5 * 2 * 5, e.runs());
        assertEquals(List.of(65536, 1 << 20), Profile.STEADY.sizes());
    }

    @Test
    void shouldStreamFreshDataOnTheBinding() {
        List<Point> points = List.of(new Point(Provider.UCX, Mode.RAW, Metric.THROUGHPUT, 65536));
        List<List<String>> args = BenchmarkPair.arguments(points, new RunSizing(10, 10), List.of(new RunSizing(10, 10)), 1234);
        List<String> client = args.get(1);
        assertTrue(client.contains("--fresh"), client.toString());
        List<Point> latency = List.of(new Point(Provider.UCX, Mode.RAW, Metric.LATENCY, 65536));
        assertTrue(!BenchmarkPair.arguments(latency, new RunSizing(10, 10), List.of(new RunSizing(10, 10)), 1234)
                .get(1).contains("--fresh"));
    }

    @Test
    void shouldRejectAnUnknownMetricOrProfile() {
        assertEquals(2, HadronioCommand.commandLine().execute("evaluate", "--metrics", "speed", "-o", "/nonexistent/x"));
        assertEquals(2, HadronioCommand.commandLine().execute("evaluate", "--profile", "fast", "-o", "/nonexistent/x"));
    }
}
