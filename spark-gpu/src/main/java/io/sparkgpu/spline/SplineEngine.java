package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.isotonic.IsotonicConfig;
import io.sparkgpu.isotonic.IsotonicEngine;
import io.sparkgpu.isotonic.IsotonicResult;
import java.util.Arrays;
import java.util.Comparator;

/**
 * Monotone splines of data held in arrays, without Spark: the surface the estimators, SQL functions, CLI and
 * benchmarks share. {@link #prepare} turns raw rows into spline data, {@link #fit} builds the spline
 * ({@link SplineStep}, GPU or CPU twin), {@link #eval} and {@link #inverse} evaluate it.
 *
 * <p><b>Duplicate x.</b> Rows are sorted by (x, y, slope, weight) and rows of equal x are merged into one point whose
 * y (and slope) is the weighted mean of theirs, summed in that order, so the result does not depend on the row
 * order. Every x, y, slope and weight must be finite and every weight &gt; 0; nothing is dropped.
 *
 * <p><b>Smoothing.</b> {@code none}: the merged y must be monotone (either direction), else an error says so.
 * {@code isotonic}: the merged points are first replaced by their weighted least-squares isotonic regression (the
 * direction from the sign of Spearman's correlation; {@link IsotonicEngine#fit}, GPU or CPU), and the spline interpolates
 * the regression's breakpoints: a C1 monotone smoothing of noisy data (Beliakov and Liu's route).
 */
public final class SplineEngine {
    private SplineEngine() {
    }

    /** Column names used in error messages. */
    public static final class Columns implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        public static final Columns DEFAULT = new Columns("x", "y", "slope", "weight");
        public final String x;
        public final String y;
        public final String slope;
        public final String weight;

        public Columns(String x, String y, String slope, String weight) {
            this.x = x;
            this.y = y;
            this.slope = slope;
            this.weight = weight;
        }
    }

    /** Sorted distinct x with merged y, slopes (null when none) and weights; rows in and duplicates merged. */
    public static final class Points {
        public final double[] x;
        public final double[] y;
        public final double[] slope;
        public final double[] weight;
        public final long rows;

        Points(double[] x, double[] y, double[] slope, double[] weight, long rows) {
            this.x = x;
            this.y = y;
            this.slope = slope;
            this.weight = weight;
            this.rows = rows;
        }

        /** Rows merged into another row of the same x. */
        public long duplicatesMerged() {
            return rows - x.length;
        }
    }

    /** A fitted spline and what the fit did. */
    public static final class Fit {
        public final Spline spline;
        public final Points points;
        /** Where the spline was built ("gpu" or "cpu"); the isotonic step's backend for smoothing=isotonic. */
        public final String backend;
        public final String smoothingBackend;

        Fit(Spline spline, Points points, String backend, String smoothingBackend) {
            this.spline = spline;
            this.points = points;
            this.backend = backend;
            this.smoothingBackend = smoothingBackend;
        }
    }

    static void checkFinite(double v, String column, int row) {
        if (!Double.isFinite(v)) {
            throw new IllegalArgumentException(column + " must be finite, got " + v + " (row " + row + ")");
        }
    }

    /** Checks the rows and merges duplicate x (see the class comment); slope and weight may be null. */
    public static Points prepare(double[] x, double[] y, double[] slope, double[] weight, Columns cols) {
        int n = x.length;
        if (y.length != n || (slope != null && slope.length != n) || (weight != null && weight.length != n)) {
            throw new IllegalArgumentException("x, y, slope and weight must have the same length");
        }
        for (int i = 0; i < n; i++) {
            checkFinite(x[i], cols.x, i);
            checkFinite(y[i], cols.y, i);
            if (slope != null) {
                checkFinite(slope[i], cols.slope, i);
            }
            if (weight != null && !(weight[i] > 0 && weight[i] < Double.POSITIVE_INFINITY)) {
                throw new IllegalArgumentException(cols.weight + " must be finite and > 0, got " + weight[i] + " (row "
                        + i + ")");
            }
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        Comparator<Integer> byX = Comparator.comparingDouble(i -> x[i] + 0.0);
        Comparator<Integer> cmp = byX.thenComparingDouble(i -> y[i])
                .thenComparingDouble(i -> slope == null ? 0 : slope[i])
                .thenComparingDouble(i -> weight == null ? 1 : weight[i]);
        Arrays.sort(order, cmp);
        double[] mx = new double[n];
        double[] my = new double[n];
        double[] mp = slope == null ? null : new double[n];
        double[] mw = new double[n];
        int m = 0;
        int i = 0;
        while (i < n) {
            double xi = x[order[i]] + 0.0;
            double sw = 0;
            double sy = 0;
            double sp = 0;
            int j = i;
            for (; j < n && x[order[j]] + 0.0 == xi; j++) {
                int r = order[j];
                double w = weight == null ? 1.0 : weight[r];
                sw += w;
                sy += w * y[r];
                if (slope != null) {
                    sp += w * slope[r];
                }
            }
            mx[m] = xi;
            mw[m] = sw;
            my[m] = j - i == 1 ? y[order[i]] : sy / sw;
            if (mp != null) {
                mp[m] = j - i == 1 ? slope[order[i]] : sp / sw;
            }
            m++;
            i = j;
        }
        return new Points(Arrays.copyOf(mx, m), Arrays.copyOf(my, m), mp == null ? null : Arrays.copyOf(mp, m),
                Arrays.copyOf(mw, m), n);
    }

    /** Prepares, smooths when asked, and builds (cfg is validated here). */
    public static Fit fit(double[] x, double[] y, double[] slope, double[] weight, SplineConfig cfg, Columns cols) {
        cfg.validate();
        if (slope != null && cfg.kind == SplineConfig.Kind.SCHUMAKER) {
            throw new IllegalArgumentException("slopeCol applies to kind=rational only (kind=schumaker uses Butland's "
                    + "slopes)");
        }
        Points pts = prepare(x, y, slope, weight, cols);
        double[] kx = pts.x;
        double[] ky = pts.y;
        double[] kp = pts.slope;
        String smoothingBackend = null;
        if (cfg.smoothing == SplineConfig.Smoothing.ISOTONIC) {
            IsotonicConfig ic = new IsotonicConfig();
            ic.direction = IsotonicConfig.Direction.AUTO;
            ic.backend = cfg.backend;
            IsotonicResult r = IsotonicEngine.fit(pts.x, pts.y, pts.weight, ic);
            smoothingBackend = r.backend;
            kx = r.boundaries;
            ky = r.predictions;
            if (kp != null) {
                double[] sel = new double[kx.length];
                for (int k = 0; k < kx.length; k++) {
                    sel[k] = pts.slope[Arrays.binarySearch(pts.x, kx[k])];
                }
                kp = sel;
            }
        }
        if (kx.length < 2) {
            throw new IllegalArgumentException("a spline needs at least 2 points with distinct x, got " + kx.length
                    + (cfg.smoothing == SplineConfig.Smoothing.ISOTONIC && pts.x.length >= 2
                    ? " after isotonic smoothing (the regression is constant)" : ""));
        }
        BackendChooser.Ran<Spline> b;
        try {
            b = SplineStep.build(cfg.backend, cfg.kind, kx, ky, kp);
        } catch (IllegalArgumentException e) { // its x[i] and y[i] are the merged points: name the columns they are from
            throw new IllegalArgumentException("xCol '" + cols.x + "', yCol '" + cols.y + "' (points merged by x and "
                    + "sorted): " + e.getMessage(), e);
        }
        return new Fit(b.value, pts, b.backend(), smoothingBackend);
    }

    /** Values (deriv: derivatives too, when not null) at z. */
    public static BackendChooser.Ran<Void> eval(Spline s, double[] z, SplineConfig.Extrapolate mode, Backend backend,
                                                double[] value, double[] deriv) {
        return SplineStep.eval(backend, s, z, mode, value, deriv);
    }

    /** The value at one point (the CPU twin's bits), e.g. per row in SQL. */
    public static double valueAt(Spline s, double z, SplineConfig.Extrapolate mode) {
        if (mode == SplineConfig.Extrapolate.ERROR && (z < s.xMin() || z > s.xMax())) {
            throw SplineCpu.outsideKnots(s, new double[] {z}, 0);
        }
        double[] out = new double[2];
        SplineCpu.evalOne(s, z, mode, out);
        return out[0];
    }

    /** Inverse at v. */
    public static double[] inverse(Spline s, double[] v, SplineConfig.Extrapolate mode, Backend backend) {
        double[] out = new double[v.length];
        SplineStep.inverse(backend, s, v, mode, out);
        return out;
    }

    /** The spline through an isotonic model's breakpoints (boundaries, predictions). */
    public static Spline fromIsotonic(double[] boundaries, double[] predictions, SplineConfig.Kind kind,
                                      Backend backend) {
        if (boundaries.length < 2) {
            throw new IllegalArgumentException("a spline needs at least 2 points with distinct x; the isotonic model "
                    + "has " + boundaries.length + " boundary");
        }
        return SplineStep.build(backend, kind, boundaries, predictions, null).value;
    }

    /** The spline through (x, y) (slopes p; null: the kind's own), built by the CPU twin. */
    public static Spline buildCpu(SplineConfig.Kind kind, double[] x, double[] y, double[] p) {
        return SplineCpu.build(kind, x, y, p);
    }

    /** Values (deriv: derivatives too, when not null) at z by the CPU twin. */
    public static void evalCpu(Spline s, double[] z, SplineConfig.Extrapolate mode, double[] value, double[] deriv) {
        SplineCpu.eval(s, z, mode, value, deriv);
    }

    /** Inverse at v into out by the CPU twin. */
    public static void inverseCpu(Spline s, double[] v, SplineConfig.Extrapolate mode, double[] out) {
        SplineCpu.inverse(s, v, mode, out);
    }

    // ------------------------------------------------------------------ benchmarks (internal surface)

    /**
     * The GPU build, then the best kernel time in milliseconds of {@code reps} further launches (data kept on the
     * device) into {@code millis[0]}: for benchmarks.
     */
    public static Spline buildTimed(io.sparkgpu.cuda.CudaDevice dev, SplineConfig.Kind kind, double[] x, double[] y,
                                    int reps, double[] millis) {
        return SplineGpu.build(dev, kind, x, y, null, reps, millis);
    }

    /**
     * GPU evaluation (values; inverse when {@code inverse}) of the queries into out, then the best kernel
     * milliseconds of {@code reps} further launches into {@code millis[0]}: for benchmarks.
     */
    public static void queriesTimed(io.sparkgpu.cuda.CudaDevice dev, Spline s, double[] q, boolean inverse,
                                    double[] out, int reps, double[] millis) {
        SplineGpu.queries(dev, s, q, SplineConfig.Extrapolate.CLIP, out, null, inverse, reps, millis);
    }
}
