package io.sparkgpu.sort;

import static org.apache.spark.sql.functions.col;
import static org.apache.spark.sql.functions.monotonically_increasing_id;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Column;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataType;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * GpuSort on local[2] against Spark: sort equals orderBy(key, monotonically_increasing_id) and sortWithinPartitions
 * equals Spark's sortWithinPartitions(key, monotonically_increasing_id) row for row, for 1 and many partitions,
 * every direction and null placement, ties (stability), NaN, -0.0 and infinities, the counting and the radix path,
 * empty and single-row inputs; the histogram equals groupBy().count(); bad input gives clear errors.
 */
class GpuSortTest {
    private static SparkSession spark() {
        return SparkTestSession.get();
    }

    private static Dataset<Row> frame(DataType keyType, List<Object> keys, int parts) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < keys.size(); i++) {
            rows.add(RowFactory.create(keys.get(i), i, "r" + i));
        }
        StructType schema = new StructType().add("k", keyType, true).add("id", DataTypes.IntegerType, false)
                .add("s", DataTypes.StringType, true);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark().sparkContext());
        return spark().createDataFrame(jsc.parallelize(rows, parts), schema);
    }

    private static Column sparkOrder(boolean asc, boolean nullsFirst) {
        Column k = col("k");
        return asc ? (nullsFirst ? k.asc_nulls_first() : k.asc_nulls_last())
                : (nullsFirst ? k.desc_nulls_first() : k.desc_nulls_last());
    }

    /** Every direction and null placement, globally (1 and 5 output partitions) and within partitions. */
    private static void assertLikeSpark(Dataset<Row> df, String what) {
        for (boolean asc : new boolean[] {true, false}) {
            for (boolean nf : new boolean[] {true, false}) {
                String w = what + (asc ? " asc" : " desc") + (nf ? " nulls first" : " nulls last");
                List<Row> want = df.orderBy(sparkOrder(asc, nf), monotonically_increasing_id()).collectAsList();
                for (int parts : new int[] {1, 5}) {
                    SortConfig cfg = new SortConfig("k").ascending(asc).nullsFirst(nf).numPartitions(parts);
                    assertEquals(want, GpuSort.sort(df, cfg).collectAsList(), w + ", " + parts + " partitions");
                }
                List<Row> within = df.sortWithinPartitions(sparkOrder(asc, nf), monotonically_increasing_id())
                        .collectAsList();
                assertEquals(within, GpuSort.sortWithinPartitions(df, "k", asc, nf).collectAsList(), w + ", within");
            }
        }
    }

    @Test
    void intKeysWithTiesAndNullsSortLikeOrderBy() {
        SplittableRandom r = new SplittableRandom(1);
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            keys.add(r.nextInt(10) == 0 ? null : r.nextInt(-50, 50)); // many ties
        }
        assertLikeSpark(frame(DataTypes.IntegerType, keys, 3), "int");
    }

    @Test
    void doubleKeysWithNaNSignedZerosAndInfinitiesSortLikeOrderBy() {
        SplittableRandom r = new SplittableRandom(2);
        Object[] special = {Double.NaN, -0.0, 0.0, Double.POSITIVE_INFINITY, Double.NEGATIVE_INFINITY, null,
                Double.longBitsToDouble(0xfff8_0000_0000_0001L), 1e300, -1e-300};
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < 800; i++) {
            keys.add(r.nextInt(3) == 0 ? special[r.nextInt(special.length)] : r.nextGaussian() * 1e6);
        }
        assertLikeSpark(frame(DataTypes.DoubleType, keys, 4), "double");
        List<Object> floats = new ArrayList<>();
        for (Object k : keys) {
            floats.add(k == null ? null : (float) (double) (Double) k);
        }
        Dataset<Row> f = frame(DataTypes.FloatType, floats, 2);
        assertEquals(f.orderBy(col("k").desc(), monotonically_increasing_id()).collectAsList(),
                GpuSort.sort(f, "k", false).collectAsList(), "float desc");
    }

    @Test
    void wideLongKeysTakeTheRadixPathAndSortLikeOrderBy() {
        SplittableRandom r = new SplittableRandom(3);
        List<Object> keys = new ArrayList<>();
        long[] pool = {Long.MIN_VALUE, Long.MAX_VALUE, -1L, 0L, 1L << 40};
        for (int i = 0; i < 2000; i++) {
            keys.add(r.nextInt(4) == 0 ? pool[r.nextInt(pool.length)] : r.nextLong());
        }
        keys.set(7, null);
        SortMetrics metrics = new SortMetrics(spark().sparkContext());
        Dataset<Row> df = frame(DataTypes.LongType, keys, 3);
        assertEquals(df.orderBy(col("k"), monotonically_increasing_id()).collectAsList(),
                GpuSort.sort(df, new SortConfig("k").numPartitions(3).metrics(metrics)).collectAsList());
        assertTrue(metrics.radixSorts.value() > 0, metrics.toString());
        assertEquals(2000, metrics.rows.value());
        assertEquals(df.orderBy(col("k").desc_nulls_first(), monotonically_increasing_id()).collectAsList(),
                GpuSort.sort(df, "k", false, true).collectAsList(), "desc nulls first");
    }

    @Test
    void decimalAndDateKeysSortLikeOrderBy() {
        SplittableRandom r = new SplittableRandom(4);
        List<Object> dec = new ArrayList<>();
        List<Object> dates = new ArrayList<>();
        for (int i = 0; i < 500; i++) {
            dec.add(r.nextInt(9) == 0 ? null : BigDecimal.valueOf(r.nextLong(-1_000_000, 1_000_000), 3));
            dates.add(r.nextInt(9) == 0 ? null : java.sql.Date.valueOf(java.time.LocalDate.ofEpochDay(r.nextInt(-400, 400))));
        }
        Dataset<Row> d = frame(DataTypes.createDecimalType(12, 3), dec, 2);
        assertEquals(d.orderBy(col("k").desc(), monotonically_increasing_id()).collectAsList(),
                GpuSort.sort(d, "k", false).collectAsList());
        Dataset<Row> t = frame(DataTypes.DateType, dates, 2);
        assertEquals(t.orderBy(col("k"), monotonically_increasing_id()).collectAsList(), GpuSort.sort(t, "k").collectAsList());
    }

    @Test
    void emptySingleRowAndAllNullInputs() {
        Dataset<Row> empty = frame(DataTypes.IntegerType, List.of(), 2);
        assertEquals(0, GpuSort.sort(empty, "k").collectAsList().size());
        assertEquals(0, GpuSort.sortWithinPartitions(empty, "k").collectAsList().size());
        List<Object> one = new ArrayList<>();
        one.add(42);
        Dataset<Row> single = frame(DataTypes.IntegerType, one, 1);
        assertEquals(single.collectAsList(), GpuSort.sort(single, "k", false).collectAsList());
        List<Object> nulls = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            nulls.add(null);
        }
        Dataset<Row> allNull = frame(DataTypes.IntegerType, nulls, 3);
        assertEquals(allNull.collectAsList(), GpuSort.sort(allNull, new SortConfig("k").numPartitions(4)).collectAsList());
    }

    @Test
    void histogramEqualsGroupByCount() {
        SplittableRandom r = new SplittableRandom(5);
        List<Object> keys = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            keys.add(r.nextInt(20) == 0 ? null : (long) r.nextInt(r.nextBoolean() ? 3 : 1000));
        }
        Dataset<Row> df = frame(DataTypes.LongType, keys, 3);
        Dataset<Row> h = GpuSort.histogram(df, "k", 1000);
        assertEquals(df.groupBy("k").count().orderBy("k").collectAsList(), h.collectAsList());
        assertEquals("k: bigint, count: bigint", h.schema().simpleString().replace("struct<", "").replace(">", "")
                .replace(":", ": ").replace(",", ", "));
        Dataset<Row> empty = frame(DataTypes.LongType, List.of(), 2);
        assertEquals(0, GpuSort.histogram(empty, "k", 1).count());
    }

    @Test
    void badInputIsAClearError() {
        List<Object> keys = new ArrayList<>(List.of(1, 2, 70));
        Dataset<Row> df = frame(DataTypes.IntegerType, keys, 2);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuSort.sort(df, "nope"));
        assertEquals("key column: column 'nope' does not exist. Available columns: k, id, s", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuSort.sortWithinPartitions(df, "s"));
        assertEquals("sort key column 's' must be " + SortKeys.SUPPORTED + ", got string", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new SortConfig("k").numPartitions(-1));
        assertEquals("numPartitions must be in [0, 1048576] (0: spark.sql.shuffle.partitions), got -1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuSort.histogram(df, "k", 0));
        assertEquals("key range m must be at least 1 (keys lie in [0, m)), got m = 0", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuSort.histogram(df, "k", 50));
        assertEquals("histogram column 'k' holds 70, outside [0, m) for m = 50 (every value must lie in [0, m))",
                e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuSort.histogram(df, "s", 50));
        assertEquals("histogram column 's' must be byte, short, int or long (values in [0, m)), got string",
                e.getMessage());
    }
}
