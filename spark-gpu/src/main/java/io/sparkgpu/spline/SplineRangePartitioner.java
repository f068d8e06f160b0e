package io.sparkgpu.spline;

import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import io.sparkgpu.cuda.Backend;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.types.DataTypes;
import scala.Tuple2;

/**
 * A range {@link Partitioner} of a numeric key: partition k holds a range of keys below partition k + 1's, and the
 * partitions are of nearly equal size. Two modes:
 * <ul>
 *   <li><b>Counted</b> ({@link #fit}, {@link #partitionByQuantiles}): a smooth CDF F of a sample of the key
 *       ({@link GpuMonotoneCdf}) is used only as a monotone map; the rows are counted EXACTLY per fine bin of F(x)
 *       (256 per partition) and the cuts put at the bins whose exact prefix counts are nearest to k n / N, heavy
 *       bins (an atom, or F too flat there) being counted again in sub-bins (see {@link QuantileCuts}). The sizes
 *       are known before the shuffle ({@link #expectedSizes}) and the realised ones equal them; the imbalance is at
 *       most about 1/128 of a partition's share plus what a single value that cannot be split holds.</li>
 *   <li><b>Bounds</b> ({@link #fromCdf}, the constructor): cut at given key bounds, e.g. the CDF's quantiles
 *       (k + 1) / N, so as good as the CDF.</li>
 * </ul>
 * A null key goes to partition 0, NaN to the last.
 *
 * <p><b>Ties.</b> A value holding more than a partition's share (an atom) cannot be split by its key alone. A plain
 * numeric key on such a value goes to the first partition it reaches; a key {@code Tuple2(value, tieBreak)} (a long,
 * e.g. a hash of the row's position: its bits are read as a uniform number in [0, 1)) splits the value's rows over
 * the partitions it spans: in the counted mode in exactly counted pieces (by sub-bins of the tie-break), in the
 * bounds mode in proportion to the atom's probability range (read from the CDF's knots), so with binomial noise.
 * Key order across partitions is kept either way (the rows of an atom share one key), so a sort within the
 * partitions gives a total order. {@link #partitionByQuantiles} uses the tie-break.
 */
public final class SplineRangePartitioner extends Partitioner {
    private static final long serialVersionUID = 1L;

    private final double[] bounds;
    /** The CDF's knot quantiles at the levels k / (K - 1), or null: where the atoms lie in probability. */
    private final double[] knots;
    /** The counted mode's cuts, or null (bounds mode). */
    private final QuantileCuts counted;

    /** From the N - 1 non-decreasing, finite upper bounds of partitions 0..N-2. */
    public SplineRangePartitioner(double[] bounds) {
        this(bounds, null);
    }

    private SplineRangePartitioner(double[] bounds, double[] knots) {
        SplineConfig.checkNumPartitions(bounds.length + 1);
        for (int i = 0; i < bounds.length; i++) {
            if (!Double.isFinite(bounds[i]) || (i > 0 && bounds[i] < bounds[i - 1])) {
                throw new IllegalArgumentException("bounds must be finite and non-decreasing, got " + bounds[i]
                        + " at " + i);
            }
        }
        this.bounds = bounds.clone();
        this.knots = knots;
        this.counted = null;
    }

    private SplineRangePartitioner(QuantileCuts counted) {
        this.bounds = new double[0];
        this.knots = null;
        this.counted = counted;
    }

    /**
     * N partitions cut at the model's quantiles (k + 1) / N. When N divides numKnots - 1 these levels are knots and
     * the bounds are the model's exact quantiles there (so an atom repeats its value over the levels it covers, which
     * the continuous spline cannot); otherwise the spline's quantiles.
     */
    public static SplineRangePartitioner fromCdf(GpuMonotoneCdfModel cdf, int numPartitions) {
        SplineConfig.checkNumPartitions(numPartitions);
        double[] q = cdf.knotQuantiles();
        double[] ps = new double[numPartitions - 1];
        for (int k = 0; k < ps.length; k++) {
            ps[k] = (double) (k + 1) / numPartitions;
        }
        if ((q.length - 1) % numPartitions == 0) {
            int per = (q.length - 1) / numPartitions;
            double[] b = new double[ps.length];
            for (int k = 0; k < b.length; k++) {
                b[k] = q[(k + 1) * per];
            }
            return new SplineRangePartitioner(b, q);
        }
        return new SplineRangePartitioner(cdf.quantile(ps), q);
    }

    /** The upper bounds of partitions 0..N-2 (a copy); empty in the counted mode, whose cuts are in F's bins. */
    public double[] bounds() {
        return bounds.clone();
    }

    /**
     * Counted mode: the rows per partition as counted by {@link #fit} (null keys in partition 0, NaN in the last),
     * which the shuffle of the same (deterministic) input with its tie-breaks realises exactly; bounds mode: null.
     */
    public long[] expectedSizes() {
        return counted == null ? null : counted.sizes.clone();
    }

    @Override
    public int numPartitions() {
        return counted != null ? counted.cuts.length + 1 : bounds.length + 1;
    }

    /**
     * The first partition whose bound is &gt;= x; with {@code spread}, a key on an atom (a value several bounds
     * share) goes to one of the partitions around it: by its share of the atom's probability range (from the CDF's
     * knots) when known, else evenly over the partitions those bounds end.
     */
    int partitionOf(double x, long tieBreak, boolean spread) {
        if (counted != null) {
            return counted.partitionOf(x, tieBreak, spread);
        }
        if (Double.isNaN(x)) {
            return bounds.length;
        }
        int lo = SplineCdf.lowerBound(bounds, x);
        if (!spread || lo >= bounds.length || bounds[lo] != x) {
            return lo;
        }
        int hi = SplineCdf.lowerBound(bounds, Math.nextUp(x)) - 1; // last bound equal to x
        double frac = (tieBreak >>> 11) * 0x1.0p-53;
        if (knots != null) {
            int f = SplineCdf.lowerBound(knots, x);
            int l = SplineCdf.lowerBound(knots, Math.nextUp(x)) - 1;
            if (l > f) {
                double u = (f + frac * (l - f)) / (knots.length - 1);
                int k = (int) Math.floor(u * numPartitions());
                return Math.max(lo, Math.min(Math.min(hi + 1, bounds.length), k));
            }
        }
        return lo + (int) Math.floor(frac * (hi - lo + 1));
    }

    @Override
    public int getPartition(Object key) {
        if (key == null) {
            return 0;
        }
        if (key instanceof Tuple2) {
            Tuple2<?, ?> t = (Tuple2<?, ?>) key;
            return t._1() == null ? 0 : partitionOf(((Number) t._1()).doubleValue(), ((Number) t._2()).longValue(),
                    true);
        }
        return partitionOf(((Number) key).doubleValue(), 0, false);
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof SplineRangePartitioner && Arrays.equals(bounds, ((SplineRangePartitioner) o).bounds)
                && Arrays.equals(knots, ((SplineRangePartitioner) o).knots)
                && java.util.Objects.equals(counted, ((SplineRangePartitioner) o).counted);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bounds) + (counted == null ? 0 : counted.hashCode());
    }

    /** Rows of the sample a partitioner's CDF is fitted on: 1000 per partition, in [10^5, 10^7]. */
    static long sampleSizeFor(int numPartitions) {
        return Math.min(10_000_000L, Math.max(100_000L, 1000L * numPartitions));
    }

    /** Levels of the partitioner's CDF: a multiple of N plus one, at least 1025, so every bound is a knot. */
    static int knotsFor(int numPartitions) {
        int per = Math.max(1, (1024 + numPartitions - 1) / numPartitions);
        long k = (long) per * numPartitions + 1;
        return (int) Math.min(k, SplineConfig.MAX_CDF_KNOTS);
    }

    /** The column name of the internal partition id. */
    static final String PARTITION_COL = "__sparkgpu_quantile_partition";

    /**
     * The counted partitioner of {@link #partitionByQuantiles} (see the class comment): a CDF of a sample of the
     * finite values of col, then exact counts of every row per bin of it. The tie-break of a row is
     * {@code mix(monotonically_increasing_id())}, so a {@code Tuple2(key, tieBreak)} built that way on the same
     * deterministic df lands where it was counted.
     */
    public static SplineRangePartitioner fit(Dataset<?> df, String col, int numPartitions) {
        return fit(df, col, numPartitions, null);
    }

    /**
     * {@link #fit(Dataset, String, int)} with the CDF and the histogram's F evaluations on backend (null: the
     * Spark setting, else auto); every backend gives the same partitioner (the CPU twin's bits).
     */
    public static SplineRangePartitioner fit(Dataset<?> df, String col, int numPartitions, String backend) {
        SplineConfig.checkNumPartitions(numPartitions);
        SplineTransform.checkNumeric(df.schema(), "col", col);
        if (numPartitions == 1) {
            return new SplineRangePartitioner(new double[0]);
        }
        org.apache.spark.sql.Column c = SplineCdf.quoted(df, col).cast("double");
        Backend b = io.sparkgpu.cuda.SparkGpuConf.backend(backend == null ? null : Backend.parse(backend,
                "backend"));
        Spline map = sampleMap(df, c, knotsFor(numPartitions), sampleSizeFor(numPartitions), b, col);
        JavaRDD<org.apache.spark.sql.catalyst.InternalRow> keyed = df.toDF().select(c, org.apache.spark.sql.functions
                .monotonically_increasing_id()).queryExecution().toRdd().toJavaRDD();
        try {
            return new SplineRangePartitioner(QuantileCuts.count(keyed, map, b, numPartitions));
        } catch (Exception e) {
            throw io.sparkgpu.common.SparkErrors.unwrap(e);
        }
    }

    /**
     * The monotone map of the counted partitioner (and of {@link CountedQuantiles}): the CDF spline (rational,
     * Butland's slopes) through the exact quantiles at numKnots levels of a sample of about sample finite values of
     * c, kept by
     * a seeded hash of the value (so by content only; a value's rows are kept or dropped together), sorted on the
     * driver. Its accuracy only sets how evenly the rows spread over the bins, never where the cuts fall in rank;
     * when the sample holds fewer than 2 distinct values the map is linear between the column's extremes.
     */
    static Spline sampleMap(Dataset<?> df, org.apache.spark.sql.Column c, int numKnots, long sample,
                            Backend backend, String col) {
        org.apache.spark.sql.Column finite = c.isNotNull().and(org.apache.spark.sql.functions.not(
                org.apache.spark.sql.functions.isnan(c))).and(org.apache.spark.sql.functions.abs(c)
                .lt(Double.POSITIVE_INFINITY));
        Row stats = df.toDF().where(finite).agg(org.apache.spark.sql.functions.count(c),
                org.apache.spark.sql.functions.min(c), org.apache.spark.sql.functions.max(c)).head();
        long n = stats.getLong(0);
        org.apache.spark.sql.Column keep = finite;
        if (n > sample) {
            double unit = 0x1.0p53;
            keep = keep.and(org.apache.spark.sql.functions.pmod(org.apache.spark.sql.functions.xxhash64(
                    org.apache.spark.sql.functions.lit(SAMPLE_SEED), c), org.apache.spark.sql.functions.lit(
                    (long) unit)).lt((double) sample / n * unit));
        }
        double[] v = df.toDF().where(keep).select(c).as(org.apache.spark.sql.Encoders.DOUBLE()).collectAsList()
                .stream().mapToDouble(Double::doubleValue).toArray();
        double[] q;
        if (v.length >= 2 && distinctAtLeast2(v)) {
            q = SplineCdf.quantileKnots(v, null, numKnots, col, null);
        } else {
            double lo = n == 0 ? 0 : stats.getDouble(1);
            double hi = n == 0 ? 1 : stats.getDouble(2);
            q = new double[] {lo, hi > lo ? hi : Math.nextUp(lo)};
        }
        return SplineCdf.build(q, SplineConfig.Kind.RATIONAL, backend, col);
    }

    /** The seed of the map's sample. */
    static final long SAMPLE_SEED = 0x5EED15L;

    private static boolean distinctAtLeast2(double[] v) {
        for (double x : v) {
            if (x != v[0]) {
                return true;
            }
        }
        return false;
    }

    /** splitmix64: the tie-break of a row from its position. */
    static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * See {@link GpuMonotoneCdf#partitionByQuantiles}: the counted partitioner ({@link #fit}), then each row goes
     * through Spark's SQL exchange straight to its partition ({@code repartitionById}). df must be deterministic
     * (re-reading it gives the same rows in the same partitions, e.g. cached, a file, a range), as for any
     * two-pass partitioner.
     */
    public static Dataset<Row> partitionByQuantiles(Dataset<?> df, String col, int numPartitions) {
        return fit(df, col, numPartitions).partition(df, col);
    }

    /**
     * The rows of df in this partitioner's partitions by col, with the tie-break of {@link #fit}: for a counted
     * partitioner, df must be the one it was fitted on (else the rows land by the cuts, but the sizes are not the
     * counted ones). Through Spark's SQL exchange ({@code repartitionById}).
     */
    public Dataset<Row> partition(Dataset<?> df, String col) {
        SplineTransform.checkNumeric(df.schema(), "col", col);
        SplineRangePartitioner p = this;
        int numPartitions = numPartitions();
        if (df.schema().getFieldIndex(PARTITION_COL).isDefined()) {
            throw new IllegalArgumentException("df must not have a column named " + PARTITION_COL);
        }
        org.apache.spark.sql.Column c = SplineCdf.quoted(df, col).cast("double");
        org.apache.spark.sql.expressions.UserDefinedFunction part = org.apache.spark.sql.functions.udf(
                (org.apache.spark.sql.api.java.UDF2<Double, Long, Integer>) (x, id) -> x == null ? 0
                        : p.partitionOf(x, mix(id), true), DataTypes.IntegerType);
        return df.toDF().withColumn(PARTITION_COL, part.apply(c, org.apache.spark.sql.functions
                        .monotonically_increasing_id()))
                .repartitionById(numPartitions, org.apache.spark.sql.functions.col(PARTITION_COL))
                .drop(PARTITION_COL);
    }

    /** Rows per partition of df. */
    public static long[] partitionSizes(Dataset<?> df) {
        List<Long> sizes = df.queryExecution().toRdd().toJavaRDD().mapPartitions((Iterator<
                org.apache.spark.sql.catalyst.InternalRow> it) -> {
            long n = 0;
            while (it.hasNext()) {
                it.next();
                n++;
            }
            return List.of(n).iterator();
        }).collect();
        return sizes.stream().mapToLong(Long::longValue).toArray();
    }

    /** The largest partition over the mean partition (1: perfectly even; 0 rows: 1). */
    public static double imbalance(long[] sizes) {
        long max = 0;
        long total = 0;
        for (long s : sizes) {
            max = Math.max(max, s);
            total += s;
        }
        return total == 0 ? 1.0 : (double) max * sizes.length / total;
    }
}
