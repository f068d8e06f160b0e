package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.storage.StorageLevel;

/**
 * The maths of a smooth monotone CDF, shared by {@link GpuMonotoneCdf}, its model, the SQL functions and the quantile
 * range partitioner.
 *
 * <p><b>Quantiles.</b> The sorted values v_0 &lt;= ... &lt;= v_n-1 with weights w_i (1 when unweighted) get the
 * plotting positions u_i = (S_i + w_i / 2 - w_0 / 2) / (W - w_0 / 2 - w_n-1 / 2), S_i the weight before row i and W
 * the total: u_0 = 0, u_n-1 = 1, and unweighted u_i = i / (n - 1). The quantile at level p is the linear
 * interpolation of v over u (unweighted: Hyndman and Fan's type 7, R's and NumPy's default), so it is exact: it
 * depends on the multiset of values only (for unweighted data, also not on the partitioning).
 *
 * <p><b>The CDF.</b> The knots are the quantiles x_k at the levels p_k = k / (K - 1), k = 0..K-1; equal x_k (ties,
 * atoms) keep the largest level, so the CDF is right-continuous at an atom. The spline through (x_k, p_k) is by
 * default Gregory and Delbourgo's monotone rational quadratic with Butland's slopes, i.e. the density estimated at
 * each knot as the harmonic mean of the two neighbouring secants (p_k+1 - p_k) / (x_k+1 - x_k): C1, strictly
 * increasing, and flat nowhere inside the data. Below the first knot the CDF is 0 and from the last knot on 1; the
 * density is 0 outside the knots.
 *
 * <p><b>Whole column.</b> Unweighted: {@link CountedQuantiles} finds the order statistics the levels need from
 * exact counts per bin of a sampled CDF and the values of those bins only (no sort; the same bits). Weighted:
 * {@link #quantileKnots(Dataset, String, String, int, StorageLevel)} sorts the column with
 * Spark (a range-partitioned sort by value, then weight, so that equal values are in an order given by the data,
 * not by the input's order), counts and sums the weights per partition, then each partition emits only the
 * rows next to a level: K levels cost O(K) rows on the driver, whatever n.
 */
public final class SplineCdf {
    private SplineCdf() {
    }

    /** The probability level k of K: k / (K - 1). */
    static double level(int k, int numKnots) {
        return k == numKnots - 1 ? 1.0 : (double) k / (numKnots - 1);
    }

    /** The index of the first level &gt;= u (K when none), levels k / (K - 1). */
    static int firstLevelAtOrAbove(double u, int numKnots) {
        if (!(u > 0)) {
            return 0;
        }
        if (u > 1) {
            return numKnots;
        }
        int k = (int) Math.ceil(u * (numKnots - 1));
        while (k > 0 && level(k - 1, numKnots) >= u) {
            k--;
        }
        while (k < numKnots && level(k, numKnots) < u) {
            k++;
        }
        return k;
    }

    /**
     * The quantiles at the K levels of points (u_j, v_j) that include, for every level, the two consecutive rows
     * bracketing it (u non-decreasing, from 0 to 1).
     */
    static double[] interpolate(double[] u, double[] v, int numKnots) {
        int m = u.length;
        double[] q = new double[numKnots];
        for (int k = 0; k < numKnots; k++) {
            double p = level(k, numKnots);
            int j = lowerBound(u, Math.nextUp(p)) - 1; // last index with u_j <= p
            if (j < 0) {
                q[k] = v[0];
            } else if (j >= m - 1) {
                q[k] = v[m - 1];
            } else {
                double f = (p - u[j]) / (u[j + 1] - u[j]);
                double x = v[j] + f * (v[j + 1] - v[j]);
                q[k] = Math.min(Math.max(x, v[j]), v[j + 1]);
            }
        }
        return q;
    }

    /** The first index i of the non-decreasing a with a[i] &gt;= x (a.length when none). */
    public static int lowerBound(double[] a, double x) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] < x) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    /** The quantiles at the K levels of values held in an array (weights may be null); both are checked. */
    public static double[] quantileKnots(double[] values, double[] weights, int numKnots, String col, String wCol) {
        SplineConfig.checkNumKnots(numKnots);
        int n = values.length;
        for (int i = 0; i < n; i++) {
            SplineEngine.checkFinite(values[i], col, i);
            if (weights != null) {
                checkWeight(weights[i], wCol, i);
            }
        }
        if (n < 2) {
            throw new IllegalArgumentException(col + " must hold at least 2 values, got " + n);
        }
        if (weights == null) { // the same order as below: by value, -0.0 read as 0.0
            double[] v = new double[n];
            for (int i = 0; i < n; i++) {
                v[i] = values[i] + 0.0;
            }
            Arrays.parallelSort(v);
            double[] u = new double[n];
            for (int i = 0; i < n; i++) {
                u[i] = position(i, 1.0, 1.0, n - 1.0);
            }
            return interpolate(u, v, numKnots);
        }
        Integer[] order = new Integer[n];
        for (int i = 0; i < n; i++) {
            order[i] = i;
        }
        // ties by weight: the positions depend on the order of equal values, which must not be the input's
        Arrays.sort(order, (i, j) -> {
            int c = Double.compare(values[i] + 0.0, values[j] + 0.0);
            return c != 0 || weights == null ? c : Double.compare(weights[i], weights[j]);
        });
        double[] v = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            v[i] = values[order[i]] + 0.0;
            w[i] = weights == null ? 1.0 : weights[order[i]];
        }
        double total = 0;
        for (double x : w) {
            total += x;
        }
        double d = total - w[0] / 2 - w[n - 1] / 2;
        double[] u = new double[n];
        double s = 0;
        for (int i = 0; i < n; i++) {
            u[i] = position(s, w[i], w[0], d);
            s += w[i];
        }
        return interpolate(u, v, numKnots);
    }

    static double position(double before, double w, double w0, double d) {
        return (before + w / 2 - w0 / 2) / d;
    }

    static void checkWeight(double w, String wCol, long row) {
        if (!(w > 0 && w < Double.POSITIVE_INFINITY)) {
            throw new IllegalArgumentException(wCol + " must be finite and > 0, got " + w + " (row " + row + ")");
        }
    }

    /** Per-partition totals of the sorted column (pass 1). */
    static final class PartStats implements Serializable {
        private static final long serialVersionUID = 1L;
        long count;
        double weight;
        double firstW = Double.NaN;
        double lastW = Double.NaN;
        long bad;
        String firstBad;
    }

    /** What a partition needs to place its rows (pass 2). */
    static final class PartPlace implements Serializable {
        private static final long serialVersionUID = 1L;
        double before;
        double prevW = Double.NaN;
        double nextW = Double.NaN;
    }

    /**
     * The quantiles at the K levels of a whole column, through a Spark sort (see the class comment). Null, NaN or
     * infinite values and weights that are not finite and &gt; 0 are refused, naming the column and the count.
     */
    public static double[] quantileKnots(Dataset<?> df, String col, String wCol, int numKnots, StorageLevel level) {
        return quantileKnots(df, col, wCol, numKnots, level, null);
    }

    /**
     * The same, with the counted path's map evaluated on backend (null: the Spark setting, else auto; every backend
     * gives the same bits): an unweighted column takes {@link CountedQuantiles} (two scans, no sort), a weighted one
     * (or one whose needed bins are too full) the Spark sort.
     */
    public static double[] quantileKnots(Dataset<?> df, String col, String wCol, int numKnots, StorageLevel level,
                                         Backend backend) {
        SplineConfig.checkNumKnots(numKnots);
        SplineTransform.checkNumeric(df.schema(), "inputCol", col);
        if (wCol != null) {
            SplineTransform.checkNumeric(df.schema(), "weightCol", wCol);
        } else {
            double[] q;
            try {
                q = CountedQuantiles.knots(df, col, numKnots, io.sparkgpu.cuda.SparkGpuConf.backend(backend));
            } catch (Exception e) {
                throw io.sparkgpu.common.SparkErrors.unwrap(e);
            }
            if (q != null) {
                return q;
            }
        }
        Column v = quoted(df, col).cast(DataTypes.DoubleType);
        Column w = wCol == null ? org.apache.spark.sql.functions.lit(1.0) : quoted(df, wCol).cast(DataTypes.DoubleType);
        // the sorted column cached as a Dataset (columnar, 16 bytes a row), not as an RDD of Row objects (~100
        // bytes a row on the heap: 10 GB at 10^8 rows); both passes read it as rows
        Dataset<Row> sortedDs = df.select(v.as("v"), w.as("w")).sort("v", "w").persist(level);
        JavaRDD<Row> sorted = sortedDs.javaRDD();
        try {
            List<PartStats> stats = sorted.mapPartitions((Iterator<Row> it) -> {
                PartStats s = new PartStats();
                while (it.hasNext()) {
                    Row r = it.next();
                    Double x = r.isNullAt(0) ? null : r.getDouble(0);
                    Double wt = r.isNullAt(1) ? null : r.getDouble(1);
                    if (x == null || !Double.isFinite(x)) {
                        s.bad++;
                        if (s.firstBad == null) {
                            s.firstBad = col + " must be finite and not null, got " + x;
                        }
                        continue;
                    }
                    if (wt == null || !(wt > 0 && wt < Double.POSITIVE_INFINITY)) {
                        s.bad++;
                        if (s.firstBad == null) {
                            s.firstBad = wCol + " must be finite and > 0, got " + wt;
                        }
                        continue;
                    }
                    if (s.count == 0) {
                        s.firstW = wt;
                    }
                    s.lastW = wt;
                    s.count++;
                    s.weight += wt;
                }
                return List.of(s).iterator();
            }).collect();
            long n = 0;
            long bad = 0;
            String firstBad = null;
            double total = 0;
            double w0 = Double.NaN;
            double wLast = Double.NaN;
            for (PartStats s : stats) {
                bad += s.bad;
                if (firstBad == null) {
                    firstBad = s.firstBad;
                }
                if (s.count > 0) {
                    if (n == 0) {
                        w0 = s.firstW;
                    }
                    wLast = s.lastW;
                    n += s.count;
                    total += s.weight;
                }
            }
            if (bad > 0) {
                throw new IllegalArgumentException(firstBad + " (" + bad + " bad row" + (bad == 1 ? "" : "s")
                        + "; nothing is dropped: filter them out first)");
            }
            if (n < 2) {
                throw new IllegalArgumentException(col + " must hold at least 2 values, got " + n);
            }
            double d = total - w0 / 2 - wLast / 2;
            List<PartPlace> places = new ArrayList<>();
            double before = 0;
            double prevLast = Double.NaN;
            for (int i = 0; i < stats.size(); i++) {
                PartPlace pl = new PartPlace();
                pl.before = before;
                pl.prevW = prevLast;
                for (int j = i + 1; j < stats.size(); j++) {
                    if (stats.get(j).count > 0) {
                        pl.nextW = stats.get(j).firstW;
                        break;
                    }
                }
                places.add(pl);
                if (stats.get(i).count > 0) {
                    before += stats.get(i).weight;
                    prevLast = stats.get(i).lastW;
                }
            }
            final double dd = d;
            final double fw0 = w0;
            List<double[]> near = sorted.mapPartitionsWithIndex((Integer idx, Iterator<Row> it) -> {
                PartPlace pl = places.get(idx);
                List<double[]> out = new ArrayList<>();
                double s = pl.before;
                double prevW = pl.prevW;
                Row cur = it.hasNext() ? it.next() : null;
                while (cur != null) {
                    Row next = it.hasNext() ? it.next() : null;
                    double x = cur.getDouble(0);
                    double wt = cur.getDouble(1);
                    double nextW = next != null ? next.getDouble(1) : pl.nextW;
                    double ui = position(s, wt, fw0, dd);
                    double lo = Double.isNaN(prevW) ? Double.NEGATIVE_INFINITY : position(s - prevW, prevW, fw0, dd);
                    double hi = Double.isNaN(nextW) ? Double.POSITIVE_INFINITY : position(s + wt, nextW, fw0, dd);
                    int k = firstLevelAtOrAbove(lo, numKnots);
                    if (k < numKnots && level(k, numKnots) <= hi) {
                        out.add(new double[] {ui, x});
                    }
                    s += wt;
                    prevW = wt;
                    cur = next;
                }
                return out.iterator();
            }, true).collect();
            double[] u = new double[near.size()];
            double[] x = new double[near.size()];
            for (int i = 0; i < u.length; i++) {
                u[i] = near.get(i)[0];
                x[i] = near.get(i)[1];
            }
            return interpolate(u, x, numKnots);
        } finally {
            sortedDs.unpersist(false);
        }
    }

    static Column quoted(Dataset<?> df, String col) {
        return df.col("`" + col.replace("`", "``") + "`");
    }

    /**
     * The CDF spline through the quantiles q at the K levels (ties keep the largest level); {@code col} names the
     * column in the error when fewer than 2 distinct values remain.
     */
    public static Spline build(double[] q, SplineConfig.Kind kind, Backend backend, String col) {
        int numKnots = q.length;
        double[] x = new double[numKnots];
        double[] p = new double[numKnots];
        int m = 0;
        for (int k = 0; k < numKnots; k++) {
            if (m > 0 && x[m - 1] == q[k]) {
                p[m - 1] = level(k, numKnots);
            } else {
                x[m] = q[k];
                p[m] = level(k, numKnots);
                m++;
            }
        }
        if (m < 2) {
            throw new IllegalArgumentException(col + " must hold at least 2 distinct values, got only " + q[0]);
        }
        return SplineStep.build(backend, kind, Arrays.copyOf(x, m), Arrays.copyOf(p, m), null).value;
    }

    /** CDF values at xs: 0 below the first knot, 1 from the last, NaN for NaN. */
    public static double[] cdf(Spline s, double[] xs, Backend backend, double[] density) {
        double[] v = new double[xs.length];
        SplineStep.eval(backend, s, xs, SplineConfig.Extrapolate.CLIP, v, density);
        for (int i = 0; i < xs.length; i++) {
            double z = xs[i];
            if (z < s.xMin()) {
                v[i] = 0;
            } else if (z >= s.xMax()) {
                v[i] = 1;
            }
            if (density != null && !(z >= s.xMin() && z <= s.xMax()) && !Double.isNaN(z)) {
                density[i] = 0;
            }
        }
        return v;
    }

    /** The CDF at one point (the CPU twin's bits), e.g. per row in SQL. */
    public static double cdfAt(Spline s, double z) {
        if (z < s.xMin()) {
            return 0;
        }
        if (z >= s.xMax()) {
            return 1;
        }
        return SplineEngine.valueAt(s, z, SplineConfig.Extrapolate.CLIP);
    }

    /** Quantiles at ps, each in [0, 1] (else the rule's error): the smallest x with cdf(x) &gt;= p. */
    public static double[] quantile(Spline s, double[] ps, Backend backend) {
        for (double p : ps) {
            SplineConfig.checkProbability(p);
        }
        return SplineEngine.inverse(s, ps, SplineConfig.Extrapolate.CLIP, backend);
    }

    /** The quantile at one level (the CPU twin's bits), e.g. per row in SQL. */
    public static double quantileAt(Spline s, double p) {
        SplineConfig.checkProbability(p);
        double[] out = new double[1];
        SplineCpu.inverse(s, new double[] {p}, SplineConfig.Extrapolate.CLIP, out);
        return out[0];
    }
}
