package io.sparkgpu.spline;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.common.Int128;
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
import org.apache.spark.sql.functions;
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
 * depends on the multiset of (value, weight) rows only, not on their order or partitioning. For that, S_i and W are
 * exact sums of the weights in 128-bit fixed point (one shift for the column, see {@link #weightShift}), each
 * rounded once to a double, so the local and the distributed paths give the same bits for any partitioning.
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
 * not by the input's order), finds the fixed-point scale from the row count and largest weight, counts and sums
 * the weights per partition exactly, then each partition emits only the rows next to a level: K levels cost O(K)
 * rows on the driver, whatever n.
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
            return c != 0 ? c : Double.compare(weights[i], weights[j]);
        });
        double[] v = new double[n];
        double[] w = new double[n];
        double maxW = 0;
        for (int i = 0; i < n; i++) {
            v[i] = values[order[i]] + 0.0;
            w[i] = weights[order[i]];
            maxW = Math.max(maxW, w[i]);
        }
        // the weight before each row and the total, exact in fixed point (see weightShift): the bits of the
        // distributed path's, which sums the same integers partition by partition
        int shift = weightShift(n, maxW);
        double[] m = FixedPoint.multipliers(shift);
        long[] acc = new long[2];
        double[] before = new double[n];
        for (int i = 0; i < n; i++) {
            before[i] = fixedToDouble(acc, shift);
            FixedPoint.add(acc, 0, w[i], m[0], m[1]);
        }
        double total = checkTotal(fixedToDouble(acc, shift), wCol);
        double d = total - w[0] / 2 - w[n - 1] / 2;
        double[] u = new double[n];
        for (int i = 0; i < n; i++) {
            u[i] = position(before[i], w[i], w[0], d);
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

    /**
     * The fixed-point shift for the weight sums of a column of at most n rows with weights at most maxW.
     *
     * <p>Why fixed point: the plotting positions need S_i, the weight before each sorted row, and W, the total. As
     * ordinary double sums their bits would depend on where the sorted rows are split into partitions (the
     * distributed path adds partition totals, then runs within each partition), and Spark's range partitioner
     * samples with a seed that changes from one fit to the next. Each weight is therefore quantized once, as
     * trunc(w * 2^shift) in a 128-bit integer ({@link FixedPoint}); integer sums are exact and associative, so every
     * prefix sum has the same bits whatever the partitioning, locally or distributed, and is rounded to a double
     * only where a double is needed.
     *
     * <p>The shift: the total is below n * maxW &lt; 2^bitLength(n) * 2^(e+1), e = the exponent of maxW, so
     * {@code FixedPoint.shiftFor(maxW) - bitLength(n)} (the scale of shiftFor(n * maxW), at most one bit coarser,
     * computed without overflow) keeps every sum below 2^124. A weight of maxW becomes an integer of
     * 124 - bitLength(n) &gt;= 61 bits, and every weight of at least maxW * 2^(bitLength(n) - 71) is kept exactly;
     * smaller ones lose low bits, less than 2^-shift each, so the total is off by less than n * 2^-shift &lt; W *
     * 2^-(123 - 2 bitLength(n)): far under the rounding of a double sum.
     */
    static int weightShift(long n, double maxW) {
        int bits = 64 - Long.numberOfLeadingZeros(Math.max(n, 1));
        return FixedPoint.shiftFor(maxW > 0 ? maxW : 1.0) - bits;
    }

    /**
     * The fixed-point pair acc[0] (lo), acc[1] (hi) at scale 2^shift as the nearest double ({@link Int128#scaled}: no
     * BigInteger per row, unlike {@link FixedPoint#toDouble}). Every conversion of a weight sum goes through here, so
     * the local and distributed paths round identically.
     */
    static double fixedToDouble(long[] acc, int shift) {
        return Int128.scaled(acc[0], acc[1], shift);
    }

    /** The total weight, refused when it exceeds the largest double (then no position would be finite). */
    static double checkTotal(double total, String wCol) {
        if (!(total < Double.POSITIVE_INFINITY)) {
            throw new IllegalArgumentException(wCol + " must sum to at most " + Double.MAX_VALUE + ", got more");
        }
        return total;
    }

    /**
     * Per-partition totals of the sorted column (pass 1): the weight sum is the exact fixed-point pair (lo, hi) at
     * the column's shift.
     */
    static final class PartStats implements Serializable {
        private static final long serialVersionUID = 2L;
        long count;
        long weightLo;
        long weightHi;
        double firstW = Double.NaN;
        double lastW = Double.NaN;
        long bad;
        String firstBad;
    }

    /**
     * What a partition needs to place its rows (pass 2): the exact fixed-point weight of all earlier partitions
     * (lo, hi), the position of the row just before the partition (-infinity when none) and the weight of the row
     * just after it (NaN when none).
     */
    static final class PartPlace implements Serializable {
        private static final long serialVersionUID = 2L;
        long beforeLo;
        long beforeHi;
        double prevU = Double.NEGATIVE_INFINITY;
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
        Column w = wCol == null ? functions.lit(1.0) : quoted(df, wCol).cast(DataTypes.DoubleType);
        // the sorted column cached as a Dataset (columnar, 16 bytes a row), not as an RDD of Row objects (~100
        // bytes a row on the heap: 10 GB at 10^8 rows); both passes read it as rows
        Dataset<Row> sortedDs = df.select(v.as("v"), w.as("w")).sort("v", "w").persist(level);
        JavaRDD<Row> sorted = sortedDs.javaRDD();
        try {
            // The fixed-point shift of the weight sums (see weightShift) needs a bound on the total before pass 1
            // sums the partitions. Unweighted (every weight 1), n < 2^63 bounds it without looking at the data.
            // Weighted: one columnar aggregation over the cached sort (it also fills the cache) for the number of
            // rows and the largest valid weight; folding them into pass 1 would instead cost a third pass over the
            // rows. Bad rows are left to pass 1 and its errors: they only make the bound larger, and a fit with bad
            // rows is refused before the bound is used.
            long bound;
            double maxW;
            if (wCol == null) {
                bound = Long.MAX_VALUE;
                maxW = 1.0;
            } else {
                Column wc = functions.col("w");
                Column goodW = functions.not(functions.isnan(wc)).and(wc.gt(0))
                        .and(wc.lt(Double.POSITIVE_INFINITY));
                Row agg = sortedDs.agg(functions.count(functions.lit(1)),
                        functions.max(functions.when(goodW, wc))).head();
                bound = agg.getLong(0);
                maxW = agg.isNullAt(1) ? 1.0 : agg.getDouble(1); // no valid weight: pass 1 refuses the column
            }
            final int shift = weightShift(bound, maxW);
            double[] mult = FixedPoint.multipliers(shift);
            final double s1 = mult[0];
            final double s2 = mult[1];
            List<PartStats> stats = sorted.mapPartitions((Iterator<Row> it) -> {
                PartStats s = new PartStats();
                long[] sum = new long[2];
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
                    FixedPoint.add(sum, 0, wt, s1, s2);
                }
                s.weightLo = sum[0];
                s.weightHi = sum[1];
                return List.of(s).iterator();
            }).collect();
            long n = 0;
            long bad = 0;
            String firstBad = null;
            long[] totalW = new long[2];
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
                    FixedPoint.addPair(totalW, 0, s.weightLo, s.weightHi);
                }
            }
            if (bad > 0) {
                throw new IllegalArgumentException(firstBad + " (" + bad + " bad row" + (bad == 1 ? "" : "s")
                        + "; nothing is dropped: filter them out first)");
            }
            if (n < 2) {
                throw new IllegalArgumentException(col + " must hold at least 2 values, got " + n);
            }
            if (n > bound) { // the cached sort recomputed from a non-deterministic input: the bound no longer holds
                throw new IllegalStateException("the sorted " + col + " changed between passes: " + bound
                        + " rows, then " + n);
            }
            double total = checkTotal(fixedToDouble(totalW, shift), wCol);
            double d = total - w0 / 2 - wLast / 2;
            // each partition starts from the exact weight of the partitions before it; the position of the row just
            // before it is computed here from the same exact prefix, so each row's neighbours have the bits the
            // local path gives them
            List<PartPlace> places = new ArrayList<>();
            long[] before = new long[2];
            double prevU = Double.NEGATIVE_INFINITY;
            for (int i = 0; i < stats.size(); i++) {
                PartStats st = stats.get(i);
                PartPlace pl = new PartPlace();
                pl.beforeLo = before[0];
                pl.beforeHi = before[1];
                pl.prevU = prevU;
                for (int j = i + 1; j < stats.size(); j++) {
                    if (stats.get(j).count > 0) {
                        pl.nextW = stats.get(j).firstW;
                        break;
                    }
                }
                places.add(pl);
                if (st.count > 0) {
                    FixedPoint.addPair(before, 0, st.weightLo, st.weightHi);
                    long[] lastBefore = before.clone(); // the weight before this partition's last row
                    FixedPoint.add(lastBefore, 0, -st.lastW, s1, s2); // exactly minus the quantized weight
                    prevU = position(fixedToDouble(lastBefore, shift), st.lastW, w0, d);
                }
            }
            final double dd = d;
            final double fw0 = w0;
            List<double[]> near = sorted.mapPartitionsWithIndex((Integer idx, Iterator<Row> it) -> {
                PartPlace pl = places.get(idx);
                List<double[]> out = new ArrayList<>();
                long[] acc = {pl.beforeLo, pl.beforeHi}; // the exact weight before the current row
                double s = fixedToDouble(acc, shift);
                double uPrev = pl.prevU;
                Row cur = it.hasNext() ? it.next() : null;
                while (cur != null) {
                    Row next = it.hasNext() ? it.next() : null;
                    double x = cur.getDouble(0) + 0.0; // -0.0 read as 0.0, as in the local path
                    double wt = cur.getDouble(1);
                    double nextW = next != null ? next.getDouble(1) : pl.nextW;
                    double ui = position(s, wt, fw0, dd);
                    FixedPoint.add(acc, 0, wt, s1, s2);
                    double sNext = fixedToDouble(acc, shift);
                    double uNext = Double.isNaN(nextW) ? Double.POSITIVE_INFINITY : position(sNext, nextW, fw0, dd);
                    // kept when a level lies in [u of the previous row, u of the next]: the rows bracketing it
                    int k = firstLevelAtOrAbove(uPrev, numKnots);
                    if (k < numKnots && level(k, numKnots) <= uNext) {
                        out.add(new double[] {ui, x});
                    }
                    s = sNext;
                    uPrev = ui;
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
