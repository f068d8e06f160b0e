package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Iterator;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.catalyst.InternalRow;

/**
 * The cut points of the counted quantile range partitioner ({@link SplineRangePartitioner#fit}): a smooth CDF F
 * (fitted on a sample) is used only as a monotone map of the key into [0, 1]; the rows are then COUNTED exactly
 * per fine bin floor(F(x) B) (B = 256 per partition, at most 2^20 bins; long counts, merged exactly), and the N - 1
 * cuts are put at the bin boundaries whose exact prefix counts are nearest to k n / N. So the partition sizes are
 * known exactly before the shuffle ({@link #sizes}) and F's own error (a sample's, a spline's between knots) only
 * changes how many rows a bin holds, not where the cuts fall in rank.
 *
 * <p><b>Refined bins.</b> A bin that holds a target rank k n / N and would miss it by more than 1/256 of a
 * partition's share (a heavy bin: an atom, or F too flat there, e.g. where the sample, which keeps or drops a value
 * whole, missed heavy values) is resolved (at most 1024 such bins, the heaviest):
 * <ul>
 *   <li>a bin of ONE value: counted in S pieces by the row's tie-break (a uniform 64-bit hash of its position: the
 *       same rows always get the same tie-break for a deterministic input);</li>
 *   <li>a bin of at most 4096 distinct values: one more pass counts each value exactly; a value that holds a target
 *       and would miss it by more than 1/256 of a share is counted in S tie-break pieces;</li>
 *   <li>a bin of more values: counted in S pieces by the key's linear position between its smallest and largest.</li>
 * </ul>
 * S = 2^20 / the number of pieced units, in [256, 65536]. So the rows of a heavy value are split in exact counted
 * pieces over adjacent partitions. A key with no tie-break (a plain number) on a split value goes to the first of
 * them: a pure range partitioner cannot split a value, so for such keys the value's share is the floor of the
 * imbalance ({@link SplineRangePartitioner#expectedSizes} counts tie-broken keys). The floor with tie-breaks: a
 * heavy value inside a bin of more than 4096 distinct values (not split).
 *
 * <p><b>Exactness.</b> Bins and sub-bins are computed with the CPU twin's bits of F (the histogram pass may run F
 * on the GPU, which gives the same bits), so every row lands where it was counted: the realised sizes equal
 * {@link #sizes}. Without heavy single-value bins the cuts depend only on the multiset of keys (and the seed of
 * the CDF's sample), not on the input's order or partitioning.
 */
final class QuantileCuts implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Bins per partition of the first count. */
    static final int BINS_PER_PARTITION = 256;
    /** The most cells (bins, or refined bins times sub-bins) a count holds: 2^20 longs per task. */
    static final int MAX_CELLS = 1 << 20;
    /** The most sub-bins of a recount in all (2^20 longs per task). */
    static final int MAX_SUB_CELLS = 1 << 20;
    static final int MAX_REFINED = 1024;
    static final int MIN_SUB = 256;
    static final int MAX_SUB = 1 << 16;
    /** Rows per F evaluation batch (one launch on the GPU). */
    static final int CHUNK = 1 << 18;
    /** The most distinct values a refined bin of several values is resolved into (else: by linear position). */
    static final int MAX_DISTINCT = 4096;

    final Spline cdf;
    final int bins;
    /** Refined bins, ascending, with their smallest and largest counted key. */
    final int[] refined;
    final double[] refMin;
    final double[] refMax;
    final int sub;
    /**
     * Per refined bin that holds several values, few enough (at most {@link #MAX_DISTINCT}): its distinct values,
     * ascending, and which of them are split by the tie-break; else null.
     */
    final double[][] distinct;
    final boolean[][] split;
    /** Position (bin << 32 | sub-bin) where partition k + 1 starts, k = 0..N-2 (Long.MAX_VALUE: empty). */
    final long[] cuts;
    /** Rows per partition as counted (nulls in 0, NaN in the last). */
    final long[] sizes;

    private QuantileCuts(Spline cdf, int bins, int[] refined, double[] refMin, double[] refMax, int sub,
                         double[][] distinct, boolean[][] split, long[] cuts, long[] sizes) {
        this.cdf = cdf;
        this.bins = bins;
        this.refined = refined;
        this.refMin = refMin;
        this.refMax = refMax;
        this.sub = sub;
        this.distinct = distinct;
        this.split = split;
        this.cuts = cuts;
        this.sizes = sizes;
    }

    static int binsFor(int numPartitions) {
        return (int) Math.max(numPartitions, Math.min(MAX_CELLS, (long) BINS_PER_PARTITION * numPartitions));
    }

    static int binOf(double f, int bins) {
        int b = (int) (f * bins); // f in [0, 1]: the floor
        return Math.min(bins - 1, Math.max(0, b));
    }

    /** The sub-bin of key x (tie-break tb when spread) in refined bin r of S sub-bins. */
    static int subOf(double lo, double hi, int s, double x, long tb, boolean spread) {
        if (x < lo) {
            return 0;
        }
        if (x > hi) {
            return s - 1;
        }
        if (lo == hi) {
            return spread ? tiePos(tb, s) : 0;
        }
        int k = (int) ((x - lo) / (hi - lo) * s); // NaN (infinite span) casts to 0: still monotone
        return Math.min(s - 1, Math.max(0, k));
    }

    /** The tie-break's piece of s: its bits read as a uniform number in [0, 1). */
    static int tiePos(long tb, int s) {
        return (int) ((tb >>> 11) * 0x1.0p-53 * s);
    }

    /**
     * The position of key x in refined bin r: by {@link #subOf}, or, for a bin resolved into its distinct values,
     * value index << 16 | the tie-break's piece when that value is split (a key between the values takes the
     * last piece of the value below it).
     */
    int subPos(int r, double x, long tb, boolean spread) {
        double[] d = distinct[r];
        if (d == null) {
            return subOf(refMin[r], refMax[r], sub, x, tb, spread);
        }
        int i = Arrays.binarySearch(d, x + 0.0);
        if (i < 0) {
            int ins = -i - 1;
            return ins == 0 ? 0 : (ins - 1) << 16 | 0xFFFF;
        }
        return i << 16 | (split[r][i] && spread ? tiePos(tb, sub) : 0);
    }

    /** The partition of a non-null key (NaN: the last). */
    int partitionOf(double x, long tb, boolean spread) {
        if (Double.isNaN(x)) {
            return cuts.length;
        }
        int b = binOf(SplineCdf.cdfAt(cdf, x), bins);
        long pos = (long) b << 32;
        int r = Arrays.binarySearch(refined, b);
        if (r >= 0) {
            pos |= subPos(r, x, tb, spread);
        }
        return upper(cuts, pos); // the number of cuts <= pos (pos < 2^53: exact as a double)
    }

    /** The first count: rows per bin, the smallest and largest key per bin, nulls and NaN. */
    static final class Hist implements Serializable {
        private static final long serialVersionUID = 1L;
        final long[] count;
        final double[] min;
        final double[] max;
        long nulls;
        long nans;
        long infinite;

        Hist(int bins) {
            count = new long[bins];
            min = new double[bins];
            max = new double[bins];
            Arrays.fill(min, Double.POSITIVE_INFINITY);
            Arrays.fill(max, Double.NEGATIVE_INFINITY);
        }

        Hist merge(Hist o) {
            for (int b = 0; b < count.length; b++) {
                count[b] += o.count[b];
                min[b] = Math.min(min[b], o.min[b]);
                max[b] = Math.max(max[b], o.max[b]);
            }
            nulls += o.nulls;
            nans += o.nans;
            infinite += o.infinite;
            return this;
        }
    }

    /**
     * Feeds the non-null, non-NaN keys of rows (key double at 0, the row's position id long at 1, whose
     * {@link SplineRangePartitioner#mix} is its tie-break) to sink in F batches.
     */
    interface Sink {
        void accept(double x, double f, long tb);
    }

    static void scan(Iterator<InternalRow> it, Spline cdf, Backend backend, Hist h, Sink sink) {
        double[] xs = new double[CHUNK];
        long[] tbs = new long[CHUNK];
        int m = 0;
        while (true) {
            boolean more = it.hasNext();
            if (more) {
                InternalRow r = it.next();
                if (r.isNullAt(0)) {
                    h.nulls++;
                    continue;
                }
                double x = r.getDouble(0);
                if (Double.isNaN(x)) {
                    h.nans++;
                    continue;
                }
                xs[m] = x;
                tbs[m++] = SplineRangePartitioner.mix(r.getLong(1));
            }
            if (m == CHUNK || (!more && m > 0)) {
                double[] batch = m == CHUNK ? xs : Arrays.copyOf(xs, m);
                double[] f = SplineCdf.cdf(cdf, batch, backend, null);
                for (int i = 0; i < m; i++) {
                    sink.accept(xs[i], f[i], tbs[i]);
                }
                m = 0;
            }
            if (!more) {
                return;
            }
        }
    }

    /**
     * The cuts of N partitions of keyed rows (key double, nullable, at 0; position id long at 1), with the monotone
     * map cdf, evaluated on backend in the counts (the CPU twin's bits either way).
     */
    static QuantileCuts count(JavaRDD<InternalRow> keyed, Spline cdf, Backend backend, int numPartitions) {
        int bins = binsFor(numPartitions);
        Hist h = keyed.mapPartitions((Iterator<InternalRow> it) -> {
            Hist part = new Hist(bins);
            scan(it, cdf, backend, part, (x, f, tb) -> {
                int b = binOf(f, bins);
                part.count[b]++;
                part.min[b] = Math.min(part.min[b], x);
                part.max[b] = Math.max(part.max[b], x);
            });
            return java.util.List.of(part).iterator();
        }).treeReduce(Hist::merge, 2);
        long[] prefix = new long[bins + 1];
        for (int b = 0; b < bins; b++) {
            prefix[b + 1] = prefix[b] + h.count[b];
        }
        long n = prefix[bins];
        double share = (double) n / numPartitions;
        // heavy bins holding a target rank: counted again in sub-bins
        int[] cand = new int[numPartitions];
        int nc = 0;
        for (int k = 1; k < numPartitions; k++) {
            double t = share * k;
            int b = upper(prefix, t) - 1; // prefix[b] <= t < prefix[b + 1]
            if (b < bins && prefix[b] != t && Math.min(t - prefix[b], prefix[b + 1] - t) > share / 256
                    && (nc == 0 || cand[nc - 1] != b)) {
                cand[nc++] = b;
            }
        }
        int[] refined = Arrays.copyOf(cand, nc);
        if (nc > MAX_REFINED) { // keep the heaviest
            Integer[] byCount = new Integer[nc];
            for (int i = 0; i < nc; i++) {
                byCount[i] = cand[i];
            }
            Arrays.sort(byCount, (a, b) -> Long.compare(h.count[b], h.count[a]) != 0
                    ? Long.compare(h.count[b], h.count[a]) : Integer.compare(a, b));
            refined = new int[MAX_REFINED];
            for (int i = 0; i < MAX_REFINED; i++) {
                refined[i] = byCount[i];
            }
            Arrays.sort(refined);
        }
        int rn = refined.length;
        double[] refMin = new double[rn];
        double[] refMax = new double[rn];
        for (int i = 0; i < rn; i++) {
            refMin[i] = h.min[refined[i]];
            refMax[i] = h.max[refined[i]];
        }
        // refined bins of several values: their distinct values and counts, when few (a pass over those rows)
        double[][] distinct = new double[rn][];
        long[][] valueCount = new long[rn][];
        boolean[][] split = new boolean[rn][];
        int[] fr = refined;
        if (Arrays.stream(refined).anyMatch(b -> h.min[b] != h.max[b])) {
            Distinct dv = keyed.mapPartitions((Iterator<InternalRow> it) -> {
                Distinct part = new Distinct(fr.length);
                scan(it, cdf, backend, new Hist(0), (x, f, tb) -> {
                    int r = Arrays.binarySearch(fr, binOf(f, bins));
                    if (r >= 0 && refMin[r] != refMax[r]) {
                        part.add(r, x + 0.0);
                    }
                });
                return java.util.List.of(part).iterator();
            }).treeReduce(Distinct::merge, 2);
            for (int r = 0; r < rn; r++) {
                if (dv.values[r] != null && !dv.values[r].isEmpty()) {
                    double[] d = dv.values[r].keySet().stream().mapToDouble(Double::doubleValue).sorted().toArray();
                    distinct[r] = d;
                    valueCount[r] = new long[d.length];
                    split[r] = new boolean[d.length];
                    for (int i = 0; i < d.length; i++) {
                        valueCount[r][i] = dv.values[r].get(d[i])[0];
                    }
                    // the values that hold a target rank and would miss it by more than 1/256 of a share
                    long before = prefix[refined[r]];
                    for (int i = 0; i < d.length; i++) {
                        long lo = before;
                        long hi = before + valueCount[r][i];
                        for (int k = (int) Math.ceil(lo / share); k * share < hi && k < numPartitions; k++) {
                            double t = k * share;
                            if (t > lo && Math.min(t - lo, hi - t) > share / 256) {
                                split[r][i] = true;
                            }
                        }
                        before = hi;
                    }
                }
            }
        }
        // pieces: S per bin of one value or by linear position, S per split value, 1 per other distinct value
        int units = 0;
        for (int r = 0; r < rn; r++) {
            if (distinct[r] == null) {
                units++;
            } else {
                for (boolean b : split[r]) {
                    units += b ? 1 : 0;
                }
            }
        }
        int sub = units == 0 ? 1 : Math.max(MIN_SUB, Math.min(MAX_SUB, MAX_SUB_CELLS / units));
        int[] base = new int[rn + 1];
        int[][] off = new int[rn][];
        for (int r = 0; r < rn; r++) {
            int width = sub;
            if (distinct[r] != null) {
                off[r] = new int[distinct[r].length];
                width = 0;
                for (int i = 0; i < distinct[r].length; i++) {
                    off[r][i] = width;
                    width += split[r][i] ? sub : 1;
                }
            }
            base[r + 1] = base[r] + width;
        }
        QuantileCuts shape = new QuantileCuts(cdf, bins, refined, refMin, refMax, sub, distinct, split, null, null);
        long[] subCount = new long[0];
        if (rn > 0) {
            int cells = base[rn];
            subCount = keyed.mapPartitions((Iterator<InternalRow> it) -> {
                long[] c = new long[cells];
                scan(it, cdf, backend, new Hist(0), (x, f, tb) -> {
                    int r = Arrays.binarySearch(fr, binOf(f, bins));
                    if (r >= 0) {
                        int sp = shape.subPos(r, x, tb, true);
                        if (off[r] == null) {
                            c[base[r] + sp]++;
                        } else { // a value's pieces: sub when split, else 1
                            int i = sp >>> 16;
                            c[base[r] + off[r][i] + Math.min(sp & 0xFFFF, split[r][i] ? sub - 1 : 0)]++;
                        }
                    }
                });
                return java.util.List.of(c).iterator();
            }).treeReduce((a, b) -> {
                for (int i = 0; i < a.length; i++) {
                    a[i] += b[i];
                }
                return a;
            }, 2);
        }
        // the cells in key order, without the empty ones
        int max = bins + base[rn];
        long[] pos = new long[max];
        long[] cum = new long[max + 1];
        int m = 0;
        for (int b = 0, r = 0; b < bins; b++) {
            if (r < rn && refined[r] == b) {
                int nv = distinct[r] == null ? 1 : distinct[r].length;
                for (int i = 0; i < nv; i++) {
                    int w = distinct[r] == null || split[r][i] ? sub : 1;
                    for (int j = 0; j < w; j++) {
                        long c = subCount[base[r] + (off[r] == null ? j : off[r][i] + j)];
                        if (c > 0) {
                            pos[m] = (long) b << 32 | (distinct[r] == null ? j : (long) i << 16 | j);
                            cum[m + 1] = cum[m] + c;
                            m++;
                        }
                    }
                }
                r++;
            } else if (h.count[b] > 0) {
                pos[m] = (long) b << 32;
                cum[m + 1] = cum[m] + h.count[b];
                m++;
            }
        }
        long[] cuts = new long[numPartitions - 1];
        long[] sizes = new long[numPartitions];
        long prev = 0;
        long[] prefixCells = Arrays.copyOf(cum, m + 1);
        for (int k = 1; k < numPartitions; k++) {
            double t = share * k;
            int j = Math.min(m, upper(prefixCells, t) - 1); // cum[j] <= t
            if (j < m && cum[j + 1] - t < t - cum[j]) {
                j++;
            }
            cuts[k - 1] = j < m ? pos[j] : Long.MAX_VALUE;
            sizes[k - 1] = cum[j] - prev;
            prev = cum[j];
        }
        sizes[numPartitions - 1] = n - prev;
        sizes[0] += h.nulls;
        sizes[numPartitions - 1] += h.nans;
        return new QuantileCuts(cdf, bins, refined, refMin, refMax, sub, distinct, split, cuts, sizes);
    }

    /** Distinct values per refined bin of several values, with their rows; null past {@link #MAX_DISTINCT}. */
    static final class Distinct implements Serializable {
        private static final long serialVersionUID = 1L;
        final java.util.HashMap<Double, long[]>[] values;

        @SuppressWarnings("unchecked")
        Distinct(int bins) {
            values = new java.util.HashMap[bins];
            for (int r = 0; r < bins; r++) {
                values[r] = new java.util.HashMap<>();
            }
        }

        void add(int r, double x) {
            java.util.HashMap<Double, long[]> m = values[r];
            if (m == null) {
                return;
            }
            long[] c = m.get(x);
            if (c != null) {
                c[0]++;
            } else if (m.size() < MAX_DISTINCT) {
                m.put(x, new long[] {1});
            } else {
                values[r] = null; // too many: this bin is cut by linear position
            }
        }

        Distinct merge(Distinct o) {
            for (int r = 0; r < values.length; r++) {
                if (values[r] == null || o.values[r] == null) {
                    values[r] = null;
                    continue;
                }
                for (java.util.Map.Entry<Double, long[]> e : o.values[r].entrySet()) {
                    values[r].computeIfAbsent(e.getKey(), k -> new long[1])[0] += e.getValue()[0];
                }
                if (values[r].size() > MAX_DISTINCT) {
                    values[r] = null;
                }
            }
            return this;
        }
    }

    /** The first index with a[i] &gt; t (a non-decreasing). */
    static int upper(long[] a, double t) {
        int lo = 0;
        int hi = a.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (a[mid] <= t) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof QuantileCuts)) {
            return false;
        }
        QuantileCuts c = (QuantileCuts) o;
        return cdf.sameBits(c.cdf) && bins == c.bins && sub == c.sub && Arrays.equals(refined, c.refined)
                && Arrays.deepEquals(distinct, c.distinct) && Arrays.deepEquals(split, c.split)
                && Arrays.equals(refMin, c.refMin) && Arrays.equals(refMax, c.refMax) && Arrays.equals(cuts, c.cuts);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(cuts);
    }
}
