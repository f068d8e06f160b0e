package io.sparkgpu.jobs;

import java.awt.Color;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.knowm.xchart.XYChart;
import org.knowm.xchart.XYSeries;

/**
 * The plots of {@code sparkgpu spline} and {@code sparkgpu cdf}: a sample of the data, the fitted curve and its
 * derivative (on a second y axis), evaluated on a uniform grid of the knots' range.
 */
final class SplinePlots {
    /** Seed of the plots' sample of points. */
    static final long PLOT_SEED = 42;
    /** Points of the curves. */
    static final int GRID = 1000;
    static final Color DERIVATIVE_COLOR = new Color(0x2c, 0x8c, 0x3c);

    private SplinePlots() {
    }

    /** The rules of --plot and --plot-points, as usage errors of {@code cmd}. */
    static void checkPlot(SparkCommand cmd, java.nio.file.Path png, int points) {
        if (points < 1) {
            throw cmd.usage("Invalid value for option '--plot-points': must be >= 1, got " + points);
        }
        cmd.checkPng(png);
    }

    /** At most {@code max} rows (x, y) of the non-null numeric columns (y may be null: the data's x only). */
    static double[][] sample(Dataset<Row> data, String x, String y, long rows, int max) {
        double frac = Math.min(1.0, 1.2 * max / Math.max(1.0, rows));
        Dataset<Row> s = frac < 1 ? data.sample(false, frac, PLOT_SEED) : data;
        List<Row> got = (y == null ? s.select(x) : s.select(x, y)).limit(max).collectAsList();
        double[] xs = new double[got.size()];
        double[] ys = new double[got.size()];
        int k = 0;
        for (Row r : got) {
            if (r.isNullAt(0) || (y != null && r.isNullAt(1))) {
                continue;
            }
            xs[k] = ((Number) r.get(0)).doubleValue();
            ys[k++] = y == null ? 0 : ((Number) r.get(1)).doubleValue();
        }
        return new double[][] {Arrays.copyOf(xs, k), Arrays.copyOf(ys, k)};
    }

    /** A uniform grid of [lo, hi]. */
    static double[] grid(double lo, double hi) {
        double[] g = new double[GRID];
        for (int i = 0; i < GRID; i++) {
            g[i] = lo + (hi - lo) * i / (GRID - 1);
        }
        g[GRID - 1] = hi;
        return g;
    }

    /**
     * The chart: points (x, y) (for a CDF, the data's empirical CDF), the curve {@code values} over {@code g} and
     * the derivative on a second axis.
     */
    static XYChart chart(String title, String xTitle, String yTitle, String dataName, double[][] pts, String curve,
                         double[] g, Function<double[], double[][]> valuesAndDerivatives, String derivName) {
        XYChart chart = Plots.fitChart(title, xTitle, yTitle, dataName, pts[0], pts[1]);
        double[][] vd = valuesAndDerivatives.apply(g);
        Plots.addFit(chart, curve, g, vd[0], Plots.FIT_COLOR);
        XYSeries d = Plots.addFit(chart, derivName, g, vd[1], DERIVATIVE_COLOR);
        d.setYAxisGroup(1);
        chart.setYAxisGroupTitle(1, derivName);
        return chart;
    }

    /** The empirical CDF of xs as points (sorted x, rank / n). */
    static double[][] empirical(double[] xs) {
        double[] s = xs.clone();
        Arrays.sort(s);
        double[] p = new double[s.length];
        for (int i = 0; i < s.length; i++) {
            p[i] = (i + 1.0) / s.length;
        }
        return new double[][] {s, p};
    }

    static String name(String input) {
        return new org.apache.hadoop.fs.Path(input).getName();
    }

    static String fmt(double v) {
        return String.format(Locale.ROOT, "%.6g", v);
    }
}
