package io.sparkgpu.spline;

import io.sparkgpu.cuda.Backend;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;

/**
 * The exact quantiles of a whole unweighted column without sorting it: a smooth CDF of a sample maps every value to
 * one of 2^19 bins (monotone), one pass counts the rows per bin exactly (and each bin's smallest and largest
 * value), so the bin of every order statistic the K levels need (ranks j and j + 1 of each level) is known; a
 * second pass collects only the values of those bins (a bin of one value needs none), which the driver sorts.
 * The order statistics, and so the quantiles, are the same bits as the Spark sort's ({@link SplineCdf}), at the cost
 * of two scans and O(K n / 2^19) values on the driver instead of a shuffle of the column. When the needed bins hold
 * more than 2^25 values (a map far off, e.g. a sample that missed a dense cluster) it returns null and the caller
 * sorts.
 */
final class CountedQuantiles {
    static final int BINS = 1 << 19;
    static final long MAX_COLLECT = 1L << 25;
    /** Knots and rows of the map's sample. */
    static final int MAP_KNOTS = 1025;
    static final long MAP_SAMPLE = 200_000;

    private CountedQuantiles() {
    }

    /** The last rank j in [0, n) with u_j = j / (n - 1) &lt;= p (the sort path's plotting positions). */
    static long lastRankAtOrBelow(double p, long n) {
        double d = n - 1.0;
        long j = Math.min(n - 1, Math.max(0, (long) Math.floor(p * d)));
        while (j + 1 < n && SplineCdf.position(j + 1, 1.0, 1.0, d) <= p) {
            j++;
        }
        while (j > 0 && SplineCdf.position(j, 1.0, 1.0, d) > p) {
            j--;
        }
        return j;
    }

    static double[] knots(Dataset<?> df, String col, int numKnots, Backend backend) {
        Column c = SplineCdf.quoted(df, col).cast(DataTypes.DoubleType);
        Spline map = SplineRangePartitioner.sampleMap(df, c, MAP_KNOTS, MAP_SAMPLE, backend, col);
        JavaRDD<InternalRow> rows = df.toDF().select(c, functions.lit(0L)).queryExecution().toRdd().toJavaRDD();
        QuantileCuts.Hist h = rows.mapPartitions((Iterator<InternalRow> it) -> {
            QuantileCuts.Hist part = new QuantileCuts.Hist(BINS);
            QuantileCuts.scan(it, map, backend, part, (x, f, tb) -> {
                if (Double.isInfinite(x)) {
                    part.infinite++;
                    return;
                }
                int b = QuantileCuts.binOf(f, BINS);
                double z = x + 0.0;
                part.count[b]++;
                part.min[b] = Math.min(part.min[b], z);
                part.max[b] = Math.max(part.max[b], z);
            });
            return List.of(part).iterator();
        }).treeReduce(QuantileCuts.Hist::merge, 2);
        long bad = h.nulls + h.nans + h.infinite;
        if (bad > 0) {
            throw new IllegalArgumentException(col + " must be finite and not null, got " + (h.nulls > 0 ? "null"
                    : h.nans > 0 ? "NaN" : "Infinity") + " (" + bad + " bad row" + (bad == 1 ? "" : "s")
                    + "; nothing is dropped: filter them out first)");
        }
        long[] prefix = new long[BINS + 1];
        for (int b = 0; b < BINS; b++) {
            prefix[b + 1] = prefix[b] + h.count[b];
        }
        long n = prefix[BINS];
        if (n < 2) {
            throw new IllegalArgumentException(col + " must hold at least 2 values, got " + n);
        }
        long[] ranks = new long[2 * numKnots];
        int m = 0;
        for (int k = 0; k < numKnots; k++) {
            long j = lastRankAtOrBelow(SplineCdf.level(k, numKnots), n);
            ranks[m++] = j;
            if (j + 1 < n) {
                ranks[m++] = j + 1;
            }
        }
        ranks = Arrays.stream(ranks, 0, m).sorted().distinct().toArray();
        int[] binOfRank = new int[ranks.length];
        int[] need = new int[ranks.length];
        int nn = 0;
        long collect = 0;
        for (int i = 0; i < ranks.length; i++) {
            int b = QuantileCuts.upper(prefix, ranks[i]) - 1; // prefix[b] <= rank < prefix[b + 1]
            binOfRank[i] = b;
            if (h.min[b] != h.max[b] && (nn == 0 || need[nn - 1] != b)) {
                need[nn++] = b;
                collect += h.count[b];
            }
        }
        if (collect > MAX_COLLECT) {
            return null;
        }
        int[] needed = Arrays.copyOf(need, nn);
        double[][] values = new double[nn][];
        if (nn > 0) {
            List<double[][]> parts = rows.mapPartitions((Iterator<InternalRow> it) -> {
                double[][] buf = new double[needed.length][16];
                int[] len = new int[needed.length];
                QuantileCuts.scan(it, map, backend, new QuantileCuts.Hist(0), (x, f, tb) -> {
                    int r = Arrays.binarySearch(needed, QuantileCuts.binOf(f, BINS));
                    if (r >= 0) {
                        if (len[r] == buf[r].length) {
                            buf[r] = Arrays.copyOf(buf[r], 2 * len[r]);
                        }
                        buf[r][len[r]++] = x + 0.0;
                    }
                });
                for (int r = 0; r < needed.length; r++) {
                    buf[r] = Arrays.copyOf(buf[r], len[r]);
                }
                return List.<double[][]>of(buf).iterator();
            }).collect();
            for (int r = 0; r < nn; r++) {
                List<double[]> pieces = new ArrayList<>();
                int total = 0;
                for (double[][] part : parts) {
                    pieces.add(part[r]);
                    total += part[r].length;
                }
                double[] all = new double[total];
                int at = 0;
                for (double[] piece : pieces) {
                    System.arraycopy(piece, 0, all, at, piece.length);
                    at += piece.length;
                }
                Arrays.sort(all);
                values[r] = all;
            }
        }
        double[] u = new double[ranks.length];
        double[] v = new double[ranks.length];
        for (int i = 0; i < ranks.length; i++) {
            int b = binOfRank[i];
            u[i] = SplineCdf.position(ranks[i], 1.0, 1.0, n - 1.0);
            int r = Arrays.binarySearch(needed, b);
            v[i] = r < 0 ? h.min[b] : values[r][(int) (ranks[i] - prefix[b])];
        }
        return SplineCdf.interpolate(u, v, numKnots);
    }
}
