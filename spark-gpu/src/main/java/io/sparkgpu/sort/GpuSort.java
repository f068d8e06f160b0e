package io.sparkgpu.sort;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.SparkGpuConf;
import java.io.Serializable;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.rdd.RDD;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.catalyst.InternalRow;
import org.apache.spark.sql.classic.ExpressionUtils;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;

/**
 * Sorting a DataFrame by one column with the project's sort kernels (counting sort for key ranges up to 2^24,
 * radix sort above; GPU or CPU twin by the backend policy), and an exact histogram of a bounded integer column.
 *
 * <h2>Order</h2>
 * The order is Spark's for the column ({@link SortKeys}: integral, floating, date, timestamp, boolean and decimal
 * (precision <= 18) keys; NaN above every number and equal to every NaN; -0.0 equal to 0.0), ascending or
 * descending, nulls first or last (Spark's defaults: first when ascending, last when descending). Spark's own sort
 * is not stable; ours is, so the result is defined row for row:
 * <ul>
 *   <li>{@link #sortWithinPartitions}: each partition sorted, ties in the partition's input order: the same rows as
 *       {@code df.sortWithinPartitions(col, monotonically_increasing_id())}, partition for partition;</li>
 *   <li>{@link #sort}: a total order, ties in the input's order (partition index, then row index): the same rows
 *       as {@code df.orderBy(col, monotonically_increasing_id())}, when the input's partitions and their row order
 *       are deterministic (as they are for files, ranges and parallelized collections; a shuffle's output is
 *       not).</li>
 * </ul>
 *
 * <h2>Global sort</h2>
 * Spark's range partitioning: a sampling job (a reservoir sample of the keys of each input partition, about
 * 60 keys per output partition in all, as Spark's RangePartitioner draws, also counting the rows) picks
 * boundaries between the output partitions, weighting each sampled key by its partition's rows per sample;
 * then each row, with its input position added as an internal column ({@code monotonically_increasing_id}:
 * partition index << 33 | row index), is shuffled by Spark's SQL exchange straight to its output partition
 * ({@code repartitionById} on {@link RangePartitionId}, the partition of its key by the boundaries, evaluated per
 * row: equal keys always land together); each output partition is sorted by its input positions and then stably
 * by its keys ({@link SortPartitions}) and the internal column is dropped. Nulls go to the first or the last
 * partition.
 *
 * <h2>Histogram</h2>
 * {@link #histogram}: the rows per value of a byte/short/int/long column whose values lie in [0, m), m <= 2^24,
 * by the counting sort's histogram kernel per partition, merged exactly (long counts) on the driver: the same
 * rows as {@code df.groupBy(col).count().orderBy(col)} (a null key first when there are nulls).
 *
 * <p>Bad input (an unknown column, an unsupported type, a histogram value outside [0, m), m outside [1, 2^24])
 * is an IllegalArgumentException naming the column and the rule, at the call (schema) or at the first action
 * (values).
 */
public final class GpuSort {
    private GpuSort() {
    }

    // ------------------------------------------------------------------------------------------ global sort

    /** Sorted by {@code col} ascending, nulls first. */
    public static Dataset<Row> sort(Dataset<Row> df, String col) {
        return sort(df, new SortConfig(col));
    }

    /** Sorted by {@code col}; nulls first when ascending, last when descending (Spark's defaults). */
    public static Dataset<Row> sort(Dataset<Row> df, String col, boolean ascending) {
        return sort(df, new SortConfig(col).ascending(ascending));
    }

    public static Dataset<Row> sort(Dataset<Row> df, String col, boolean ascending, boolean nullsFirst) {
        return sort(df, new SortConfig(col).ascending(ascending).nullsFirst(nullsFirst));
    }

    /** The global sort (see the class comment). Runs the sampling job now; the sort itself runs with the result. */
    public static Dataset<Row> sort(Dataset<Row> df, SortConfig cfg) {
        StructType schema = df.schema();
        int ordinal = cfg.validate(schema);
        SortConfig.checkNoInternalColumns(schema);
        Backend backend = SparkGpuConf.backend(cfg.backend);
        int parts = cfg.numPartitions > 0 ? cfg.numPartitions : shufflePartitions(df);
        SortKeys.Reader reader = new SortKeys.Reader(ordinal, schema.fields()[ordinal].dataType(), cfg.keyCol,
                cfg.ascending);
        boolean nullsFirst = cfg.isNullsFirst();
        RDD<InternalRow> input = df.queryExecution().toRdd();

        long t0 = System.nanoTime();
        long[] bounds;
        try {
            bounds = bounds(input, reader, parts, cfg.seed);
        } catch (Exception e) {
            throw SparkErrors.unwrap(e);
        }
        if (cfg.metrics != null) {
            cfg.metrics.sampleSeconds += (System.nanoTime() - t0) / 1e9;
        }

        // each row with its input position (partition index << 33 | row index) as the last column, shuffled by
        // Spark's exchange to the partition its key's range gives (evaluated per row; no column of its own)
        int nullPartition = nullsFirst ? 0 : bounds.length;
        Dataset<Row> withId = df.withColumn(SortConfig.ID_COL, functions.monotonically_increasing_id());
        Column partition = ExpressionUtils.column(new RangePartitionId(ExpressionUtils.expression(
                df.col("`" + cfg.keyCol.replace("`", "``") + "`")), reader, bounds, nullPartition));
        Dataset<Row> shuffled = withId.repartitionById(parts, partition);
        StructType tagged = schema.add(SortConfig.ID_COL, DataTypes.LongType, false);
        SortPartitions sorter = new SortPartitions(reader, nullsFirst, backend, cfg.metrics, schema.length());
        JavaRDD<InternalRow> sorted = shuffled.queryExecution().toRdd().toJavaRDD().mapPartitions(sorter::sort, true);
        return session(df).internalCreateDataFrame(sorted.rdd(), tagged, false).drop(SortConfig.ID_COL);
    }

    // ------------------------------------------------------------------------------------------ within partitions

    /** Each partition sorted by {@code col} ascending, nulls first. */
    public static Dataset<Row> sortWithinPartitions(Dataset<Row> df, String col) {
        return sortWithinPartitions(df, new SortConfig(col));
    }

    public static Dataset<Row> sortWithinPartitions(Dataset<Row> df, String col, boolean ascending) {
        return sortWithinPartitions(df, new SortConfig(col).ascending(ascending));
    }

    public static Dataset<Row> sortWithinPartitions(Dataset<Row> df, String col, boolean ascending, boolean nullsFirst) {
        return sortWithinPartitions(df, new SortConfig(col).ascending(ascending).nullsFirst(nullsFirst));
    }

    /** Each partition sorted (see the class comment); lazy, like Spark's. */
    public static Dataset<Row> sortWithinPartitions(Dataset<Row> df, SortConfig cfg) {
        StructType schema = df.schema();
        int ordinal = cfg.validate(schema);
        Backend backend = SparkGpuConf.backend(cfg.backend);
        SortKeys.Reader reader = new SortKeys.Reader(ordinal, schema.fields()[ordinal].dataType(), cfg.keyCol,
                cfg.ascending);
        SortPartitions sorter = new SortPartitions(reader, cfg.isNullsFirst(), backend, cfg.metrics, -1);
        JavaRDD<InternalRow> sorted = df.queryExecution().toRdd().toJavaRDD().mapPartitions(sorter::sort, true);
        return session(df).internalCreateDataFrame(sorted.rdd(), schema, false);
    }

    // ------------------------------------------------------------------------------------------ histogram

    /**
     * Rows per value of {@code col} (byte, short, int or long, every value in [0, m), 1 <= m <= 2^24): columns
     * ({@code col}, {@code count}), ascending, a null key first when the column has nulls; values with no row are
     * absent. Exact; runs now.
     */
    public static Dataset<Row> histogram(Dataset<Row> df, String col, int m) {
        return histogram(df, col, m, null);
    }

    /** {@link #histogram(Dataset, String, int)} on the given backend (null: the Spark setting, else auto). */
    public static Dataset<Row> histogram(Dataset<Row> df, String col, int m, Backend backend) {
        return SortHistogram.histogram(df, col, m, SparkGpuConf.backend(backend));
    }

    // ------------------------------------------------------------------------------------------ range partitioning

    static org.apache.spark.sql.classic.SparkSession session(Dataset<Row> df) {
        return (org.apache.spark.sql.classic.SparkSession) df.sparkSession();
    }

    static int shufflePartitions(Dataset<Row> df) {
        return Integer.parseInt(df.sparkSession().conf().get("spark.sql.shuffle.partitions").trim());
    }

    /** One input partition's sample: its rows and a reservoir sample of its non-null keys. */
    static final class Sample implements Serializable {
        private static final long serialVersionUID = 1L;
        final long rows;
        final long[] keys;

        Sample(long rows, long[] keys) {
            this.rows = rows;
            this.keys = keys;
        }
    }

    /** Keys sampled per input partition: Spark's RangePartitioner (3 x min(20 per output partition, 10^6) in all). */
    static int samplePerPartition(int outputParts, int inputParts) {
        double total = Math.min(20.0 * outputParts, 1e6);
        return (int) Math.ceil(3.0 * total / Math.max(1, inputParts));
    }

    static long[] bounds(RDD<InternalRow> input, SortKeys.Reader reader, int parts, long seed) {
        if (parts <= 1) {
            return new long[0];
        }
        int per = samplePerPartition(parts, input.getNumPartitions());
        List<Sample> samples = input.toJavaRDD().mapPartitionsWithIndex((pidx, it) -> {
            SplittableRandom rnd = new SplittableRandom(seed * 0x9E3779B97F4A7C15L + pidx);
            long[] res = new long[per];
            long rows = 0;
            long seen = 0;
            while (it.hasNext()) {
                InternalRow r = it.next();
                rows++;
                if (reader.isNull(r)) {
                    continue;
                }
                long k = reader.key(r);
                if (seen < per) {
                    res[(int) seen] = k;
                } else {
                    long j = rnd.nextLong(seen + 1);
                    if (j < per) {
                        res[(int) j] = k;
                    }
                }
                seen++;
            }
            return Collections.singletonList(new Sample(rows, Arrays.copyOf(res, (int) Math.min(seen, per))))
                    .iterator();
        }, true).collect();
        return bounds(samples, parts);
    }

    /**
     * At most parts - 1 strictly increasing (unsigned) boundaries: each sampled key weighs its partition's rows per
     * sampled key; a boundary closes a range once the weight passed reaches its share of the total.
     */
    static long[] bounds(List<Sample> samples, int parts) {
        int total = 0;
        for (Sample s : samples) {
            total += s.keys.length;
        }
        if (total == 0 || parts <= 1) {
            return new long[0];
        }
        long[] keys = new long[total];
        double[] weights = new double[total];
        int at = 0;
        for (Sample s : samples) {
            double w = s.keys.length == 0 ? 0 : (double) s.rows / s.keys.length;
            for (long k : s.keys) {
                keys[at] = k;
                weights[at++] = w;
            }
        }
        int[] order = SortCpu.orderWide(keys, 64);
        double sum = 0;
        for (double w : weights) {
            sum += w;
        }
        double step = sum / parts;
        long[] out = new long[parts - 1];
        int nb = 0;
        double cum = 0;
        double target = step;
        for (int j = 0; j < total && nb < parts - 1; j++) {
            long k = keys[order[j]];
            cum += weights[order[j]];
            if (cum >= target && (nb == 0 || Long.compareUnsigned(k, out[nb - 1]) > 0)) {
                out[nb++] = k;
                target += step;
            }
        }
        return Arrays.copyOf(out, nb);
    }

    /** The output partition of a key: the first boundary >= key (unsigned), or the last partition. */
    static int partitionOf(long[] bounds, long key) {
        int lo = 0;
        int hi = bounds.length;
        while (lo < hi) {
            int mid = (lo + hi) >>> 1;
            if (Long.compareUnsigned(bounds[mid], key) < 0) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        return lo;
    }
}
