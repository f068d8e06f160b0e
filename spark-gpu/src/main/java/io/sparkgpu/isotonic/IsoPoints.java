package io.sparkgpu.isotonic;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.sort.PairRadixSort;
import java.io.Serializable;

/**
 * The points of one contiguous feature range, sorted by feature and pooled: one entry per distinct feature
 * value x (strictly increasing), holding the exact fixed-point sums s = sum(w*y) and w = sum(w) of its rows
 * ({@link IsoScales}). This is MLlib's {@code makeUnique} (weighted mean label, summed weight; rows of weight 0
 * are dropped, negative weights rejected) with sums kept exactly, so the pooled value of a feature does not depend
 * on the order of its rows.
 *
 * <p>Layout: {@code acc[4i..4i+3] = (sLo, sHi, wLo, wHi)} (array of structures, the layout the kernels read).
 * For the L1 loss the rows are also kept, grouped by feature: labels of feature i are
 * {@code labels[groupStart[i] .. groupStart[i+1])} with weights {@code rowWeights[2r], rowWeights[2r+1]} (lo, hi).
 *
 * <p>Sorting is the sort engine's LSD radix sort ({@link PairRadixSort}) of the order-preserving bit patterns of
 * the features (O(n), primitive arrays).
 */
public final class IsoPoints implements Serializable {
    private static final long serialVersionUID = 1L;

    /** Number of distinct features. */
    public final int n;
    public final double[] x;
    public final long[] acc;
    /** Rows pooled (weight > 0) and rows dropped for weight 0. */
    public final long rows;
    public final long zeroWeightRows;
    /** L1 only (else null): per-feature row ranges, row labels and row weights (lo, hi pairs). */
    public final int[] groupStart;
    public final double[] labels;
    public final long[] rowWeights;

    IsoPoints(int n, double[] x, long[] acc, long rows, long zeroWeightRows, int[] groupStart, double[] labels,
              long[] rowWeights) {
        this.n = n;
        this.x = x;
        this.acc = acc;
        this.rows = rows;
        this.zeroWeightRows = zeroWeightRows;
        this.groupStart = groupStart;
        this.labels = labels;
        this.rowWeights = rowWeights;
    }

    /** Points with already pooled exact sums (x strictly increasing); for tests and the kernels' benchmarks. */
    public static IsoPoints ofSums(double[] x, long[] acc) {
        return new IsoPoints(x.length, x, acc, x.length, 0, null, null, null);
    }

    /**
     * Validates, sorts and pools {@code len} rows.
     *
     * @param w          weights, or null for weight 1
     * @param negate     pool -y instead of y (antitonic fits are isotonic fits of -y)
     * @param keepRows   also keep the rows grouped by feature (needed by the L1 loss)
     * @throws IllegalArgumentException naming the column for a NaN or infinite label, feature or weight, a
     *                                  negative weight, or a positive weight too small to be represented at the
     *                                  fit's scale
     */
    public static IsoPoints pool(double[] x, double[] y, double[] w, int len, boolean negate, IsoScales sc,
                                 boolean keepRows, IsoColumns cols) {
        return pool(x, y, w, len, negate, sc, keepRows, cols, true);
    }

    /**
     * As {@link #pool} without the rows (L2), and without checking that each feature's summed weight is representable
     * at the fit's scale: one block's partial sum may be 0 where the feature's total is not, so {@link #merge} checks
     * the totals. For pooling blocks before their points are shuffled by feature range.
     */
    static IsoPoints poolPart(double[] x, double[] y, double[] w, int len, boolean negate, IsoScales sc,
                              IsoColumns cols) {
        return pool(x, y, w, len, negate, sc, false, cols, false);
    }

    private static IsoPoints pool(double[] x, double[] y, double[] w, int len, boolean negate, IsoScales sc,
                                  boolean keepRows, IsoColumns cols, boolean checkWeights) {
        int kept = 0;
        long zero = 0;
        for (int i = 0; i < len; i++) {
            double wi = w == null ? 1.0 : w[i];
            check(x[i], y[i], wi, cols);
            if (wi == 0) {
                zero++;
            } else {
                kept++;
            }
        }
        long[] keys = new long[kept];
        int[] idx = new int[kept];
        int m = 0;
        for (int i = 0; i < len; i++) {
            double wi = w == null ? 1.0 : w[i];
            if (wi != 0) {
                keys[m] = sortKey(x[i]);
                idx[m++] = i;
            }
        }
        PairRadixSort.sort(keys, idx, kept);
        int distinct = distinct(keys, kept);
        double[] ux = new double[distinct];
        long[] acc = new long[4 * distinct];
        int[] groupStart = keepRows ? new int[distinct + 1] : null;
        double[] labels = keepRows ? new double[kept] : null;
        long[] rowWeights = keepRows ? new long[2 * kept] : null;
        long[] one = keepRows ? new long[2] : null;
        int u = -1;
        for (int r = 0; r < kept; r++) {
            int i = idx[r];
            if (r == 0 || keys[r] != keys[r - 1]) {
                u++;
                ux[u] = x[i] + 0.0;
                if (keepRows) {
                    groupStart[u] = r;
                }
            }
            double wi = w == null ? 1.0 : w[i];
            double yi = negate ? -y[i] : y[i];
            FixedPoint.add(acc, 4 * u, wi * yi, sc.labelMul[0], sc.labelMul[1]);
            FixedPoint.add(acc, 4 * u + 2, wi, sc.weightMul[0], sc.weightMul[1]);
            if (keepRows) {
                labels[r] = yi + 0.0;
                one[0] = 0;
                one[1] = 0;
                FixedPoint.add(one, 0, wi, sc.weightMul[0], sc.weightMul[1]);
                rowWeights[2 * r] = one[0];
                rowWeights[2 * r + 1] = one[1];
                if (one[0] == 0 && one[1] == 0) {
                    throw tooSmall(wi, cols);
                }
            }
        }
        if (keepRows) {
            groupStart[distinct] = kept;
        }
        if (checkWeights) {
            checkWeights(acc, distinct, cols);
        }
        return new IsoPoints(distinct, ux, acc, kept, zero, groupStart, labels, rowWeights);
    }

    /** Distinct values among the first {@code len} sorted keys. */
    private static int distinct(long[] sortedKeys, int len) {
        int distinct = 0;
        for (int r = 0; r < len; r++) {
            if (r == 0 || sortedKeys[r] != sortedKeys[r - 1]) {
                distinct++;
            }
        }
        return distinct;
    }

    private static void checkWeights(long[] acc, int n, IsoColumns cols) {
        for (int p = 0; p < n; p++) {
            if (acc[4 * p + 2] == 0 && acc[4 * p + 3] == 0) {
                throw tooSmall(Double.NaN, cols);
            }
        }
    }

    /**
     * The points of several pooled parts ({@link #poolPart}, L2) of the same rows merged: one entry per distinct
     * feature with the parts' exact sums added, so the result is {@link #pool} of all their rows, bit for bit (the
     * sums are integers; the order of the parts does not matter). Checks the summed weights as {@link #pool} does.
     */
    static IsoPoints merge(java.util.List<IsoPoints> parts, IsoColumns cols) {
        long total = 0;
        long rows = 0;
        long zero = 0;
        for (IsoPoints p : parts) {
            total += p.n;
            rows += p.rows;
            zero += p.zeroWeightRows;
        }
        if (total > Integer.MAX_VALUE - 8) {
            throw new IllegalArgumentException("a feature range holds " + total + " pooled points, more than one "
                    + "array can");
        }
        int len = (int) total;
        long[] keys = new long[len];
        int[] idx = new int[len];
        double[] xs = new double[len];
        long[] accs = new long[4 * len];
        int at = 0;
        for (IsoPoints p : parts) {
            for (int i = 0; i < p.n; i++) {
                keys[at] = sortKey(p.x[i]);
                idx[at] = at;
                xs[at] = p.x[i];
                at++;
            }
            System.arraycopy(p.acc, 0, accs, 4 * (at - p.n), 4 * p.n);
        }
        PairRadixSort.sort(keys, idx, len);
        int distinct = distinct(keys, len);
        double[] ux = new double[distinct];
        long[] acc = new long[4 * distinct];
        int u = -1;
        for (int r = 0; r < len; r++) {
            int i = idx[r];
            if (r == 0 || keys[r] != keys[r - 1]) {
                u++;
                ux[u] = xs[i];
            }
            FixedPoint.addPair(acc, 4 * u, accs[4 * i], accs[4 * i + 1]);
            FixedPoint.addPair(acc, 4 * u + 2, accs[4 * i + 2], accs[4 * i + 3]);
        }
        checkWeights(acc, distinct, cols);
        return new IsoPoints(distinct, ux, acc, rows, zero, null, null, null);
    }

    /**
     * These points (L2, x increasing) split by feature range ({@link IsoBlock#range}): one (range, points) pair per
     * non-empty range; the rows counts go with the first pair (they are only summed).
     */
    java.util.List<scala.Tuple2<Integer, IsoPoints>> split(double[] upper) {
        java.util.List<scala.Tuple2<Integer, IsoPoints>> out = new java.util.ArrayList<>();
        int start = 0;
        boolean first = true;
        while (start < n) {
            int r = IsoBlock.range(upper, x[start]);
            int end = start + 1;
            while (end < n && IsoBlock.range(upper, x[end]) == r) {
                end++;
            }
            out.add(new scala.Tuple2<>(r, new IsoPoints(end - start, java.util.Arrays.copyOfRange(x, start, end),
                    java.util.Arrays.copyOfRange(acc, 4 * start, 4 * end), first ? rows : 0,
                    first ? zeroWeightRows : 0, null, null, null)));
            first = false;
            start = end;
        }
        if (out.isEmpty() && (rows > 0 || zeroWeightRows > 0)) { // only rows of weight 0: keep their count
            out.add(new scala.Tuple2<>(0, new IsoPoints(0, new double[0], new long[0], rows, zeroWeightRows, null,
                    null, null)));
        }
        return out;
    }

    static IllegalArgumentException tooSmall(double w, IsoColumns cols) {
        return new IllegalArgumentException(cols.weight + ": a positive weight" + (Double.isNaN(w) ? "" : " (" + w + ")")
                + " is more than 2^100 times smaller than the largest weight times the row count and cannot be "
                + "represented exactly; rescale or drop such weights");
    }

    /** Throws an IllegalArgumentException naming the offending column. */
    static void check(double x, double y, double w, IsoColumns cols) {
        if (!Double.isFinite(x)) {
            throw new IllegalArgumentException(cols.feature + " contains " + x
                    + "; isotonic regression needs finite features");
        }
        if (!Double.isFinite(y)) {
            throw new IllegalArgumentException(cols.label + " contains " + y + " (at feature " + x
                    + "); isotonic regression needs finite labels");
        }
        if (!Double.isFinite(w) || w < 0) {
            throw new IllegalArgumentException(cols.weight + " must hold finite weights >= 0, found " + w
                    + " (at feature " + x + ")");
        }
    }

    /** Order-preserving unsigned key of a finite double (-0.0 and 0.0 get the same key). */
    static long sortKey(double v) {
        long bits = Double.doubleToRawLongBits(v + 0.0);
        return bits ^ ((bits >> 63) | Long.MIN_VALUE);
    }
}
