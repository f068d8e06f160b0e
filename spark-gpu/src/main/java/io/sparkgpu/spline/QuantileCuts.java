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
 * partition's share (a heavy bin: an atom, or F too flat there) is counted again in S sub-bins (S = 2^20 / the
 * number of such bins, in [256, 65536]; at most 1024 bins, the heaviest): by the key's linear position between
 * the bin's smallest and largest key, or, when the bin holds ONE value (ties), by the row's tie-break (a uniform
 * 64-bit hash of its position: the same rows always get the same tie-break for a deterministic input), so the rows
 * of one value are split in exact counted pieces over adjacent partitions. A key with no tie-break (a plain number)
 * on a split value goes to the first of them: a pure range partitioner cannot split a value, so for such keys the
 * value's share is the floor of the imbalance ({@link SplineRangePartitioner#expectedSizes} counts tie-broken
 * keys).
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

    final Spline cdf;
    final int bins;
    /** Refined bins, ascending, with their smallest and largest counted key. */
    final int[] refined;
    final double[] refMin;
    final double[] refMax;
    final int sub;
    /** Position (bin << 32 | sub-bin) where partition k + 1 starts, k = 0..N-2 (Long.MAX_VALUE: empty). */
    final long[] cuts;
    /** Rows per partition as counted (nulls in 0, NaN in the last). */
    final long[] sizes;

    private QuantileCuts(Spline cdf, int bins, int[] refined, double[] refMin, double[] refMax, int sub, long[] cuts,
                         long[] sizes) {
        this.cdf = cdf;
        this.bins = bins;
        this.refined = refined;
        this.refMin = refMin;
        this.refMax = refMax;
        this.sub = sub;
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
            return spread ? (int) ((tb >>> 11) * 0x1.0p-53 * s) : 0;
        }
        int k = (int) ((x - lo) / (hi - lo) * s); // NaN (infinite span) casts to 0: still monotone
        return Math.min(s - 1, Math.max(0, k));
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
            pos |= subOf(refMin[r], refMax[r], sub, x, tb, spread);
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
        int sub = rn == 0 ? 1 : Math.max(MIN_SUB, Math.min(MAX_SUB, MAX_SUB_CELLS / rn));
        double[] refMin = new double[rn];
        double[] refMax = new double[rn];
        for (int i = 0; i < rn; i++) {
            refMin[i] = h.min[refined[i]];
            refMax[i] = h.max[refined[i]];
        }
        long[] subCount = new long[0];
        if (rn > 0) {
            int[] fr = refined;
            int s = sub;
            subCount = keyed.mapPartitions((Iterator<InternalRow> it) -> {
                long[] c = new long[fr.length * s];
                scan(it, cdf, backend, new Hist(0), (x, f, tb) -> {
                    int r = Arrays.binarySearch(fr, binOf(f, bins));
                    if (r >= 0) {
                        c[r * s + subOf(refMin[r], refMax[r], s, x, tb, true)]++;
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
        int max = bins + rn * sub;
        long[] pos = new long[max];
        long[] cum = new long[max + 1];
        int m = 0;
        for (int b = 0, r = 0; b < bins; b++) {
            if (r < rn && refined[r] == b) {
                for (int j = 0; j < sub; j++) {
                    long c = subCount[r * sub + j];
                    if (c > 0) {
                        pos[m] = (long) b << 32 | j;
                        cum[m + 1] = cum[m] + c;
                        m++;
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
        return new QuantileCuts(cdf, bins, refined, refMin, refMax, sub, cuts, sizes);
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
                && Arrays.equals(refMin, c.refMin) && Arrays.equals(refMax, c.refMax) && Arrays.equals(cuts, c.cuts);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(cuts);
    }
}
