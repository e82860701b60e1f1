package io.hadronio.app.evaluate;

import java.util.Arrays;

/**
 * Mean, sample standard deviation and median of one value over a point's runs (NaN values,
 * from failed runs, left out).
 *
 * @param n      values that went in
 * @param mean   arithmetic mean
 * @param sd     sample standard deviation (n - 1); 0 for a single value
 * @param median middle value (mean of the middle two for an even count)
 * @param min    smallest value
 * @param max    largest value
 */
public record Stat(int n, double mean, double sd, double median, double min, double max) {
    static final Stat NONE = new Stat(0, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN);

    static Stat of(double[] values) {
        double[] v = Arrays.stream(values).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) {
            return NONE;
        }
        double mean = Arrays.stream(v).sum() / v.length;
        double sq = 0;
        for (double x : v) {
            sq += (x - mean) * (x - mean);
        }
        double sd = v.length > 1 ? Math.sqrt(sq / (v.length - 1)) : 0;
        double median = v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
        return new Stat(v.length, mean, sd, median, v[0], v[v.length - 1]);
    }
}
