package io.sparkgpu.spline;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Iterator;
import java.util.List;
import org.apache.spark.Partitioner;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * A range {@link Partitioner} of a numeric key cut at quantiles of a smooth monotone CDF ({@link GpuMonotoneCdf}):
 * partition k holds the keys in (b_k-1, b_k], with b_k the quantile at (k + 1) / N ({@link #fromCdf}), so the partitions are of nearly
 * equal size and in key order. A null key goes to partition 0, NaN to the last.
 *
 * <p><b>Ties.</b> A value holding more than 1/N of the rows (an atom) makes several bounds equal. A plain numeric key
 * on such a value goes to the first of the partitions those bounds delimit; a key {@code Tuple2(value, tieBreak)}
 * (a long, e.g. a hash of the row: its bits are read as a uniform number in [0, 1)) spreads the rows of the atom
 * over the partitions whose probability ranges the atom covers, in proportion to the overlap (the atom's range is
 * read from the CDF's knots). This keeps the key order across partitions (the rows of an atom share one value) and
 * bounds the imbalance on data with heavy ties. {@link #partitionByQuantiles} does so.
 */
public final class SplineRangePartitioner extends Partitioner {
    private static final long serialVersionUID = 1L;

    private final double[] bounds;
    /** The CDF's knot quantiles at the levels k / (K - 1), or null: where the atoms lie in probability. */
    private final double[] knots;

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

    /** The upper bounds of partitions 0..N-2 (a copy). */
    public double[] bounds() {
        return bounds.clone();
    }

    @Override
    public int numPartitions() {
        return bounds.length + 1;
    }

    /**
     * The first partition whose bound is &gt;= x; with {@code spread}, a key on an atom (a value several bounds
     * share) goes to one of the partitions around it: by its share of the atom's probability range (from the CDF's
     * knots) when known, else evenly over the partitions those bounds end.
     */
    int partitionOf(double x, long tieBreak, boolean spread) {
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
                && Arrays.equals(knots, ((SplineRangePartitioner) o).knots);
    }

    @Override
    public int hashCode() {
        return Arrays.hashCode(bounds);
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

    /** The partitioner of {@link #partitionByQuantiles}: a CDF of (a sample of) the finite values of col. */
    public static SplineRangePartitioner fit(Dataset<?> df, String col, int numPartitions) {
        SplineConfig.checkNumPartitions(numPartitions);
        SplineTransform.checkNumeric(df.schema(), "col", col);
        if (numPartitions == 1) {
            return new SplineRangePartitioner(new double[0]);
        }
        org.apache.spark.sql.Column c = SplineCdf.quoted(df, col).cast("double");
        Dataset<?> finite = df.filter(c.isNotNull().and(org.apache.spark.sql.functions.not(
                org.apache.spark.sql.functions.isnan(c))).and(org.apache.spark.sql.functions.abs(c)
                .lt(Double.POSITIVE_INFINITY)));
        GpuMonotoneCdfModel m = new GpuMonotoneCdf().setInputCol(col).setNumKnots(knotsFor(numPartitions))
                .setSampleSize(sampleSizeFor(numPartitions)).fit(finite);
        return fromCdf(m, numPartitions);
    }

    /** splitmix64: the tie-break of a row from its position. */
    static long mix(long z) {
        z += 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** See {@link GpuMonotoneCdf#partitionByQuantiles}. */
    public static Dataset<Row> partitionByQuantiles(Dataset<?> df, String col, int numPartitions) {
        SplineRangePartitioner p = fit(df, col, numPartitions);
        int idx = SplineTransform.checkNumeric(df.schema(), "col", col);
        JavaRDD<Row> rows = df.toDF().javaRDD();
        JavaPairRDD<Object, Row> keyed = rows.mapPartitionsWithIndex((Integer part, Iterator<Row> it) -> {
            List<Tuple2<Object, Row>> out = new ArrayList<>();
            long i = 0;
            while (it.hasNext()) {
                Row r = it.next();
                Object key = r.isNullAt(idx) ? null
                        : new Tuple2<Object, Object>(((Number) r.get(idx)).doubleValue(),
                        mix(((long) part << 40) ^ i++));
                out.add(new Tuple2<>(key, r));
            }
            return out.iterator();
        }, true).mapToPair(t -> t);
        JavaRDD<Row> parted = keyed.partitionBy(p).values();
        return SparkSession.active().createDataFrame(parted, df.schema());
    }

    /** Rows per partition of df. */
    public static long[] partitionSizes(Dataset<?> df) {
        List<Long> sizes = df.toDF().javaRDD().mapPartitions((Iterator<Row> it) -> {
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
