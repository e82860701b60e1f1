package io.hadronio.app.evaluate;

import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.function.Function;
import java.util.regex.Pattern;
import org.knowm.xchart.BitmapEncoder;
import org.knowm.xchart.VectorGraphicsEncoder;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYChartBuilder;
import org.knowm.xchart.XYSeries;
import org.knowm.xchart.style.Styler;
import org.knowm.xchart.style.XYStyler;
import org.knowm.xchart.style.lines.SeriesLines;
import org.knowm.xchart.style.markers.SeriesMarkers;

/**
 * The evaluation's figures, drawn with XChart and saved as SVG and PNG, all in one style:
 * message size on a log₂ axis (labelled in B/KiB/MiB), one colour per provider (the UCX
 * binding is the ceiling line), a left and a right value axis told apart by line style
 * (solid or dotted, named in the legend and the axis titles), error bars of one standard
 * deviation over the repetitions, and the transport in each series' name.
 */
final class Charts {
    static final int WIDTH = 900;
    static final int HEIGHT = 680;
    private static final BasicStroke SOLID = SeriesLines.SOLID;
    private static final BasicStroke DOTTED = new BasicStroke(2.0f, BasicStroke.CAP_ROUND, BasicStroke.JOIN_ROUND, 10f,
            new float[] {2f, 4f}, 0f);

    private Charts() {
    }

    /** One figure: a name (file stem), a title, and how to draw it. */
    record Figure(String name, String title, XYChart chart) {
        /** Saves {@code <dir>/<name>.svg} and {@code <dir>/<name>.png}. */
        void save(Path dir) throws IOException {
            Files.createDirectories(dir);
            Path svg = dir.resolve(name + ".svg");
            VectorGraphicsEncoder.saveVectorGraphic(chart, svg.toString(), VectorGraphicsEncoder.VectorGraphicsFormat.SVG);
            Files.writeString(svg, roundCoordinates(Files.readString(svg, StandardCharsets.UTF_8)), StandardCharsets.UTF_8);
            BitmapEncoder.saveBitmap(chart, dir.resolve(name + ".png").toString(), BitmapEncoder.BitmapFormat.PNG);
        }
    }

    // a number with more than one decimal
    private static final Pattern LONG_DECIMAL = Pattern.compile("(\\d\\.\\d)\\d+");

    /**
     * Every number of an SVG to one decimal. XChart draws every letter as an outline with
     * coordinates to up to 8 decimals, which made one figure ~0.9 MB, most of it digits; a
     * tenth of a pixel on a 900 x 680 figure cannot be seen, and the files are half as large.
     */
    static String roundCoordinates(String svg) {
        return LONG_DECIMAL.matcher(svg).replaceAll("$1");
    }

    static Color color(Provider p) {
        return switch (p) {
            case JDK -> new Color(0x1f, 0x77, 0xb4);
            case HADRONIO -> new Color(0xd6, 0x27, 0x28);
            case UCX -> new Color(0x2c, 0xa0, 0x2c);
        };
    }

    /** The figures of a mode that has results: throughput and latency against message size. */
    static List<Figure> forMode(Mode mode, List<PointSummary> summaries) {
        List<PointSummary> inMode = summaries.stream()
                .filter(s -> s.point().mode() == mode || s.point().mode() == Mode.RAW).toList();
        List<Figure> figures = new ArrayList<>();
        if (inMode.stream().anyMatch(s -> s.point().mode() == mode && s.point().metric() == Metric.THROUGHPUT)) {
            figures.add(throughput(mode, inMode));
        }
        if (inMode.stream().anyMatch(s -> s.point().mode() == mode && s.point().metric() == Metric.LATENCY)) {
            figures.add(latency(mode, inMode));
        }
        return figures;
    }

    /** Streaming throughput: Mop/s (left, dotted) and GB/s (right, solid) against size. */
    static Figure throughput(Mode mode, List<PointSummary> summaries) {
        XYChart chart = newChart(mode.label() + ": unidirectional streaming throughput", "operations (Mop/s, dotted)",
                "bandwidth (GB/s = 10⁹ B/s, solid)");
        for (Provider p : Provider.values()) {
            List<PointSummary> line = line(summaries, p, Metric.THROUGHPUT);
            if (line.isEmpty()) {
                continue;
            }
            String name = seriesName(p, line);
            add(chart, name + " Mop/s", line, s -> s.opsPerSec(), 1e-6, 0, DOTTED, color(p));
            add(chart, name + " GB/s", line, s -> s.bytesPerSec(), 1e-9, 1, SOLID, color(p));
        }
        return new Figure("throughput-" + mode.id(), chart.getTitle(), chart);
    }

    /** Round-trip latency: mean µs (left, solid) and round trips in Mop/s (right, dotted) against size. */
    static Figure latency(Mode mode, List<PointSummary> summaries) {
        XYChart chart = newChart(mode.label() + ": round-trip latency", "mean round trip (µs, solid)",
                "round trips (Mop/s, dotted)");
        for (Provider p : Provider.values()) {
            List<PointSummary> line = line(summaries, p, Metric.LATENCY);
            if (line.isEmpty()) {
                continue;
            }
            String name = seriesName(p, line);
            add(chart, name + " µs", line, s -> s.latencyMeanUs(), 1, 0, SOLID, color(p));
            add(chart, name + " Mop/s", line, s -> s.opsPerSec(), 1e-6, 1, DOTTED, color(p));
        }
        return new Figure("latency-" + mode.id(), chart.getTitle(), chart);
    }

    /** The load mode's figures for one server model: response time against offered load, and CPU per request. */
    static List<Figure> forLoad(Mode mode, List<LoadRecord> load) {
        List<LoadRecord> inMode = load.stream().filter(r -> r.mode() == mode && r.ok()).toList();
        if (inMode.isEmpty()) {
            return List.of();
        }
        XYChart latency = newLoadChart("load, " + mode.label() + " server: response time against offered load",
                "response time (µs; p99 solid, p50 dotted)");
        XYChart cpu = newLoadChart("load, " + mode.label() + " server: CPU per request",
                "server CPU per request (µs)");
        List<Integer> counts = inMode.stream().map(LoadRecord::connections).distinct().sorted().toList();
        for (Provider p : List.of(Provider.JDK, Provider.HADRONIO)) {
            for (int i = 0; i < counts.size(); i++) {
                int connections = counts.get(i);
                List<LoadRecord> line = inMode.stream().filter(r -> r.provider() == p && r.connections() == connections)
                        .sorted(java.util.Comparator.comparingDouble(LoadRecord::offeredPerSec)).toList();
                if (line.isEmpty()) {
                    continue;
                }
                Color color = shade(color(p), i, counts.size());
                String name = p.label() + ", " + connections + " conn. [" + line.getFirst().transport() + "]";
                addLoad(latency, name + " p99", line, LoadRecord::latencyP99Us, SOLID, color, i);
                addLoad(latency, name + " p50", line, LoadRecord::latencyP50Us, DOTTED, color, i);
                addLoad(cpu, name, line, LoadRecord::serverCpuUsPerRequest, SOLID, color, i);
            }
        }
        return List.of(new Figure("load-latency-" + mode.id(), latency.getTitle(), latency),
                new Figure("load-cpu-" + mode.id(), cpu.getTitle(), cpu));
    }

    private static XYChart newLoadChart(String title, String yAxis) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT + 120).title(title)
                .xAxisTitle("offered load (requests/s, all connections; log scale)").yAxisTitle(yAxis).build();
        XYStyler styler = chart.getStyler();
        style(styler);
        styler.setXAxisLogarithmic(true);
        styler.setYAxisLogarithmic(true);
        styler.setXAxisDecimalPattern("#,###");
        styler.setYAxisDecimalPattern("#,###.###");
        return chart;
    }

    /** Lighter shades of a provider's colour for more connections, so that one provider's lines read as a family. */
    private static Color shade(Color base, int i, int of) {
        float f = of <= 1 ? 0 : 0.55f * i / (of - 1);
        return new Color(Math.round(base.getRed() + (255 - base.getRed()) * f),
                Math.round(base.getGreen() + (255 - base.getGreen()) * f),
                Math.round(base.getBlue() + (255 - base.getBlue()) * f));
    }

    private static void addLoad(XYChart chart, String name, List<LoadRecord> line,
                                java.util.function.ToDoubleFunction<LoadRecord> value, BasicStroke stroke, Color color,
                                int markerIndex) {
        // a run that answered nothing has no response time: left out, not drawn at a made-up value
        List<LoadRecord> drawn = line.stream().filter(r -> value.applyAsDouble(r) > 0).toList();
        if (drawn.isEmpty()) {
            return;
        }
        double[] x = drawn.stream().mapToDouble(LoadRecord::offeredPerSec).toArray();
        double[] y = drawn.stream().mapToDouble(value).toArray();
        XYSeries series = chart.addSeries(name, x, y);
        series.setLineStyle(stroke);
        series.setLineColor(color);
        series.setMarkerColor(color);
        series.setMarker(switch (markerIndex % 4) {
            case 0 -> SeriesMarkers.CIRCLE;
            case 1 -> SeriesMarkers.SQUARE;
            case 2 -> SeriesMarkers.DIAMOND;
            default -> SeriesMarkers.TRIANGLE_UP;
        });
    }

    /** A provider's points of one metric (within the summaries given), by size. */
    static List<PointSummary> line(List<PointSummary> summaries, Provider p, Metric metric) {
        return summaries.stream()
                .filter(s -> s.point().provider() == p && s.point().metric() == metric && s.runs() > 0)
                .sorted(Comparator.comparingInt(s -> s.point().size())).toList();
    }

    /** "hadroNIO [cma,sysv]": the provider and the transports its runs reported. */
    static String seriesName(Provider p, List<PointSummary> line) {
        List<String> transports = line.stream().flatMap(s -> List.of(s.transports().split(" / ")).stream())
                .filter(t -> !t.isBlank()).distinct().toList();
        return p.label() + " [" + String.join(" | ", transports) + "]";
    }

    private static XYChart newChart(String title, String leftAxis, String rightAxis) {
        XYChart chart = new XYChartBuilder().width(WIDTH).height(HEIGHT).title(title)
                .xAxisTitle("message size (log₂ scale)").yAxisTitle(leftAxis).build();
        chart.setYAxisGroupTitle(0, leftAxis);
        chart.setYAxisGroupTitle(1, rightAxis);
        XYStyler styler = chart.getStyler();
        style(styler);
        styler.setYAxisGroupPosition(1, Styler.YAxisPosition.Right);
        styler.setYAxisLogarithmic(true);
        styler.setErrorBarsColorSeriesColor(true);
        styler.setxAxisTickLabelsFormattingFunction(x -> Sizes.human(Math.round(Math.pow(2, x))));
        return chart;
    }

    /** The look every figure shares: white, light grid, legend below in one column, readable fonts. */
    private static void style(XYStyler styler) {
        styler.setChartBackgroundColor(Color.WHITE);
        styler.setPlotBackgroundColor(Color.WHITE);
        styler.setPlotGridLinesColor(new Color(0xdd, 0xdd, 0xdd));
        styler.setLegendPosition(Styler.LegendPosition.OutsideS);
        styler.setLegendLayout(Styler.LegendLayout.Vertical);
        styler.setLegendBorderColor(Color.WHITE);
        styler.setChartTitleFont(new Font(Font.SANS_SERIF, Font.BOLD, 16));
        styler.setAxisTitleFont(new Font(Font.SANS_SERIF, Font.PLAIN, 13));
        styler.setAxisTickLabelsFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
        styler.setLegendFont(new Font(Font.SANS_SERIF, Font.PLAIN, 12));
    }

    /**
     * Adds one series: {@code value} scaled by {@code scale}, error bars one standard deviation
     * (kept below 90 % of the value: a log axis cannot draw a bar that reaches zero).
     */
    private static void add(XYChart chart, String name, List<PointSummary> line, Function<PointSummary, Stat> value,
                            double scale, int axis, BasicStroke stroke, Color color) {
        // a log axis cannot show zero (a value printed as 0.000) or a missing value: such points are left out
        List<PointSummary> drawn = line.stream().filter(p -> value.apply(p).mean() > 0).toList();
        if (drawn.isEmpty()) {
            return;
        }
        double[] x = new double[drawn.size()];
        double[] y = new double[drawn.size()];
        double[] e = new double[drawn.size()];
        for (int i = 0; i < drawn.size(); i++) {
            Stat s = value.apply(drawn.get(i));
            x[i] = Math.log(drawn.get(i).point().size()) / Math.log(2);
            y[i] = s.mean() * scale;
            e[i] = Math.min(s.sd() * scale, 0.9 * y[i]);
        }
        XYSeries series = chart.addSeries(name, x, y, e);
        series.setYAxisGroup(axis);
        series.setLineStyle(stroke);
        series.setLineColor(color);
        series.setMarkerColor(color);
        series.setMarker(axis == 0 ? SeriesMarkers.CIRCLE : SeriesMarkers.DIAMOND);
    }
}
