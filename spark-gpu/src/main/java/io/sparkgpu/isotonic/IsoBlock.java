package io.sparkgpu.isotonic;

import java.io.Serializable;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.catalyst.util.ArrayData;

/**
 * Rows (label y, feature x, weight w) of one input partition or one feature range held in primitive arrays:
 * what {@link IsotonicTrainer} persists, samples, splits into feature ranges, shuffles and solves instead of
 * Spark {@code Row}s. {@code w == null} means every weight is 1 (no weight column), which saves a third of the
 * memory and gives the same bits as explicit ones.
 */
final class IsoBlock implements Serializable {
    private static final long serialVersionUID = 1L;
    static final IsoBlock EMPTY = new IsoBlock(new double[0], new double[0], null, 0);
    /** Concatenations of at least this many rows copy the blocks in parallel. */
    static final int PARALLEL_COPY_ROWS = 1 << 22;

    final double[] x;
    final double[] y;
    final double[] w;
    final int n;

    IsoBlock(double[] x, double[] y, double[] w, int n) {
        this.x = x;
        this.y = y;
        this.w = w;
        this.n = n;
    }

    double weight(int i) {
        return w == null ? 1.0 : w[i];
    }

    /**
     * Reads and validates the rows of one input partition of the projected frame (y double, f double or ml
     * Vector in its internal struct form, w double; w ignored when {@code weighted} is false) and adds them to
     * {@code st}. Errors are those of the Row-based reader they replace: nulls name the column, a short vector
     * names featureIndex, and every value goes through {@link IsoPoints#check}.
     */
    static IsoBlock read(java.util.Iterator<InternalRow> rows, IsotonicTrainer.Inputs in, boolean weighted,
                         IsotonicTrainer.Stats st) {
        Grow xs = new Grow();
        Grow ys = new Grow();
        Grow ws = weighted ? new Grow() : null;
        IsoColumns cols = in.cols;
        while (rows.hasNext()) {
            InternalRow r = rows.next();
            if (r.isNullAt(0)) {
                throw new IllegalArgumentException(cols.label + " contains a null value");
            }
            if (r.isNullAt(1)) {
                throw new IllegalArgumentException(cols.feature + " contains a null value");
            }
            if (weighted && r.isNullAt(2)) {
                throw new IllegalArgumentException(cols.weight + " contains a null value");
            }
            double y = r.getDouble(0);
            double x = in.vector ? element(r.getStruct(1, 4), in) : r.getDouble(1);
            double w = weighted ? r.getDouble(2) : 1.0;
            IsoPoints.check(x, y, w, cols);
            xs.add(x);
            ys.add(y);
            if (weighted) {
                ws.add(w);
            }
            st.rows++;
            if (w > 0) {
                st.positive++;
            }
            st.maxAbsWY = Math.max(st.maxAbsWY, Math.abs(w * y));
            st.maxW = Math.max(st.maxW, w);
            st.minX = Math.min(st.minX, x);
            st.maxX = Math.max(st.maxX, x);
        }
        return new IsoBlock(xs.toArray(), ys.toArray(), weighted ? ws.toArray() : null, xs.n);
    }

    /**
     * Element {@code featureIndex} of an ml Vector in VectorUDT's internal form: struct(type byte: 0 sparse,
     * 1 dense; size int (sparse only); indices array&lt;int&gt; (sparse only); values array&lt;double&gt;).
     */
    static double element(InternalRow v, IsotonicTrainer.Inputs in) {
        int k = in.featureIndex;
        ArrayData values = v.getArray(3);
        if (v.getByte(0) == 1) {
            int size = values.numElements();
            if (k >= size) {
                throw outOfRange(k, size, in);
            }
            return values.getDouble(k);
        }
        int size = v.getInt(1);
        if (k >= size) {
            throw outOfRange(k, size, in);
        }
        ArrayData idx = v.getArray(2);
        int lo = 0;
        int hi = idx.numElements() - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            int m = idx.getInt(mid);
            if (m < k) {
                lo = mid + 1;
            } else if (m > k) {
                hi = mid - 1;
            } else {
                return values.getDouble(mid);
            }
        }
        return 0.0;
    }

    private static IllegalArgumentException outOfRange(int k, int size, IsotonicTrainer.Inputs in) {
        return new IllegalArgumentException("featureIndex " + k + " is out of range for a vector of size " + size
                + " in featuresCol '" + in.featuresCol + "'");
    }

    /** Rows of the blocks together. */
    static long rows(List<IsoBlock> blocks) {
        long total = 0;
        for (IsoBlock b : blocks) {
            total += b.n;
        }
        return total;
    }

    /** {@link #rows} as the length of one array (one feature range, or one device pool); else an error. */
    static int arrayRows(List<IsoBlock> blocks) {
        long total = rows(blocks);
        if (total > Integer.MAX_VALUE - 16) {
            throw new IllegalStateException("a feature range of " + total + " rows exceeds the array limit; raise "
                    + "numPartitions");
        }
        return (int) total;
    }

    /** Whether any block has weights (the others then weigh 1 per row). */
    static boolean weighted(List<IsoBlock> blocks) {
        for (IsoBlock b : blocks) {
            if (b.w != null) {
                return true;
            }
        }
        return false;
    }

    /** The blocks' rows one after the other (no copy for a single block). */
    static IsoBlock concat(List<IsoBlock> blocks) {
        if (blocks.isEmpty()) {
            return EMPTY;
        }
        if (blocks.size() == 1) {
            return blocks.get(0);
        }
        int n = arrayRows(blocks);
        boolean weighted = weighted(blocks);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = weighted ? new double[n] : null;
        int[] at = new int[blocks.size()];
        for (int k = 1; k < at.length; k++) {
            at[k] = at[k - 1] + blocks.get(k - 1).n;
        }
        java.util.stream.IntStream ks = java.util.stream.IntStream.range(0, blocks.size());
        // large single ranges (one GPU takes everything) are copied by several threads: memory bandwidth bound
        (n >= PARALLEL_COPY_ROWS ? ks.parallel() : ks).forEach(k -> {
            IsoBlock b = blocks.get(k);
            System.arraycopy(b.x, 0, x, at[k], b.n);
            System.arraycopy(b.y, 0, y, at[k], b.n);
            if (w != null) {
                if (b.w != null) {
                    System.arraycopy(b.w, 0, w, at[k], b.n);
                } else {
                    java.util.Arrays.fill(w, at[k], at[k] + b.n, 1.0);
                }
            }
        });
        return new IsoBlock(x, y, w, n);
    }

    /**
     * Up to {@code k} values of {@code v} at evenly spaced rows (deterministic: rows floor((j + 1/2) n / k)),
     * +0.0 for -0.0.
     */
    static double[] sample(double[] v, int n, int k) {
        int m = Math.min(n, Math.max(0, k));
        double[] s = new double[m];
        for (int j = 0; j < m; j++) {
            s[j] = v[(int) (((2L * j + 1) * n) / (2L * m))] + 0.0;
        }
        return s;
    }

    /**
     * Index of the range of {@code x}: the first r with {@code x <= upper[r]}, else {@code upper.length} (the last
     * range is unbounded). Primitive comparisons, so -0.0 and 0.0 fall in one range like every other pair of
     * equal features.
     */
    static int range(double[] upper, double x) {
        int lo = 0;
        int hi = upper.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (upper[mid] >= x) {
                hi = mid;
            } else {
                lo = mid + 1;
            }
        }
        return lo;
    }

    /** This block's rows split by feature range ({@link #range}): one (range, rows) pair per non-empty range. */
    List<scala.Tuple2<Integer, IsoBlock>> split(double[] upper) {
        int parts = upper.length + 1;
        int[] rid = new int[n];
        int[] count = new int[parts];
        for (int i = 0; i < n; i++) {
            int r = range(upper, x[i]);
            rid[i] = r;
            count[r]++;
        }
        double[][] cx = new double[parts][];
        double[][] cy = new double[parts][];
        double[][] cw = new double[parts][];
        for (int r = 0; r < parts; r++) {
            if (count[r] > 0) {
                cx[r] = new double[count[r]];
                cy[r] = new double[count[r]];
                cw[r] = w == null ? null : new double[count[r]];
            }
        }
        int[] at = new int[parts];
        for (int i = 0; i < n; i++) {
            int r = rid[i];
            int k = at[r]++;
            cx[r][k] = x[i];
            cy[r][k] = y[i];
            if (w != null) {
                cw[r][k] = w[i];
            }
        }
        List<scala.Tuple2<Integer, IsoBlock>> out = new ArrayList<>();
        for (int r = 0; r < parts; r++) {
            if (count[r] > 0) {
                out.add(new scala.Tuple2<>(r, new IsoBlock(cx[r], cy[r], cw[r], count[r])));
            }
        }
        return out;
    }

    /** Growable double array in segments, copied once into an exact-size array at the end. */
    static final class Grow {
        private final List<double[]> full = new ArrayList<>();
        private double[] cur = new double[1024];
        private int curN;
        int n;

        void add(double v) {
            if (curN == cur.length) {
                if (n > Integer.MAX_VALUE - 16 - (1 << 20)) {
                    throw new IllegalStateException("an input partition of more than 2^31 rows; repartition the input");
                }
                full.add(cur);
                cur = new double[Math.min(cur.length * 2, 1 << 20)];
                curN = 0;
            }
            cur[curN++] = v;
            n++;
        }

        double[] toArray() {
            double[] a = new double[n];
            int at = 0;
            for (double[] s : full) {
                System.arraycopy(s, 0, a, at, s.length);
                at += s.length;
            }
            System.arraycopy(cur, 0, a, at, curN);
            return a;
        }
    }
}
