package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import scala.Tuple2;

/** The quantile range partitioner on skewed data: nothing lost, key order across partitions, bounded imbalance. */
class SplineRangePartitionerTest {
    private static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType)
            .add("key", DataTypes.DoubleType);

    static Dataset<Row> keys(SparkSession spark, double[] k) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < k.length; i++) {
            rows.add(RowFactory.create((long) i, Double.isInfinite(k[i]) ? null : k[i]));
        }
        return spark.createDataFrame(rows, SCHEMA).repartition(3);
    }

    /** Lognormal, Zipf-like with heavy ties (the top value holds ~40% of the rows), bimodal. */
    static double[][] skewed(int n) {
        Random r = new Random(17);
        double[] logn = new double[n];
        double[] zipf = new double[n];
        double[] bimodal = new double[n];
        for (int i = 0; i < n; i++) {
            logn[i] = Math.exp(2 * r.nextGaussian());
            zipf[i] = Math.floor(1 / Math.pow(1 - r.nextDouble(), 1.2)); // P(1) ~ 0.44, long tail
            bimodal[i] = r.nextBoolean() ? r.nextGaussian() : 1000 + 0.01 * r.nextGaussian();
        }
        return new double[][] {logn, zipf, bimodal};
    }

    @Test
    void partitionsAreEvenOrderedAndComplete() {
        SparkSession spark = SparkTestSession.get();
        int n = 6000;
        int parts = 8;
        String[] names = {"lognormal", "zipf", "bimodal"};
        double[][] data = skewed(n);
        for (int c = 0; c < data.length; c++) {
            double[] k = data[c];
            k[5] = Double.NaN;
            k[6] = Double.POSITIVE_INFINITY; // a null key
            Dataset<Row> out = GpuMonotoneCdf.partitionByQuantiles(keys(spark, k), "key", parts);
            assertEquals(parts, out.javaRDD().getNumPartitions());
            List<List<Row>> byPart = out.javaRDD().glom().collect();
            long total = 0;
            double prevMax = Double.NEGATIVE_INFINITY;
            long[] sizes = new long[parts];
            for (int p = 0; p < parts; p++) {
                double min = Double.POSITIVE_INFINITY;
                double max = Double.NEGATIVE_INFINITY;
                for (Row r : byPart.get(p)) {
                    if (r.isNullAt(1)) {
                        assertEquals(0, p, "null keys go to partition 0");
                        continue;
                    }
                    double v = r.getDouble(1);
                    if (Double.isNaN(v)) {
                        assertEquals(parts - 1, p, "NaN goes last");
                        continue;
                    }
                    min = Math.min(min, v);
                    max = Math.max(max, v);
                }
                assertTrue(min >= prevMax, names[c] + ": partition " + p + " starts below its predecessor's end");
                prevMax = Math.max(prevMax, max);
                sizes[p] = byPart.get(p).size();
                total += sizes[p];
            }
            assertEquals(n, total, names[c] + ": every row once");
            double imb = SplineRangePartitioner.imbalance(sizes);
            assertEquals(imb, SplineRangePartitioner.imbalance(SplineRangePartitioner.partitionSizes(out)), 0.0);
            // continuous keys: the exact quantiles cut evenly; ties are dealt at random (binomial noise
            // ~ 1/sqrt(750) per partition here), where a range partitioner without a tie-break gets 0.44 * 8
            assertTrue(imb <= (c == 1 ? 1.12 : 1.02), names[c] + ": imbalance " + imb);
        }
    }

    /** n rows of a skewed key (seeded, deterministic per partition of a range). */
    static Dataset<Row> skewedKeys(SparkSession spark, String kind, long n, int parts) {
        Dataset<Row> ids = spark.range(0, n, 1, parts).toDF();
        switch (kind) {
            case "lognormal":
                return ids.select(functions.col("id"), functions.exp(functions.randn(3).multiply(2)).as("key"));
            case "zipf": // floor of a Pareto: P(1) = 1 - 2^-1.2 ~ 0.56, then 2, 3, ... with a long tail
                return ids.select(functions.col("id"), functions.floor(functions.pow(functions.lit(1.0)
                        .minus(functions.rand(3)), -1 / 1.2)).as("key"));
            default:
                return ids.select(functions.col("id"), functions.when(functions.rand(3).lt(0.5),
                        functions.randn(4)).otherwise(functions.randn(4).multiply(0.01).plus(1000)).as("key"));
        }
    }

    /**
     * The aim of issue 15 (imbalance <= 1%) on lognormal, Zipf-like (one value holds 56% of the rows) and bimodal
     * keys at 2 * 10^5 rows: the exact counts per bin of the CDF put every cut within a fraction of a percent of
     * k n / N, and the realised sizes are the counted ones. (Cutting at the quantiles of the sampled CDF, as before,
     * gave 1.03-1.05, and the Zipf key's top value one partition unless split by its tie-break.)
     */
    @Test
    void countedCutsMeetOnePercentOnSkewedKeys() {
        SparkSession spark = SparkTestSession.get();
        long n = 200_000;
        int[] partsOf = {16, 64, 64};
        String[] kinds = {"lognormal", "zipf", "bimodal"};
        for (int c = 0; c < kinds.length; c++) {
            Dataset<Row> df = skewedKeys(spark, kinds[c], n, 3);
            int parts = partsOf[c];
            SplineRangePartitioner p = SplineRangePartitioner.fit(df, "key", parts);
            long[] expected = p.expectedSizes();
            long[] sizes = SplineRangePartitioner.partitionSizes(p.partition(df, "key"));
            assertArrayEquals(expected, sizes, kinds[c] + ": the shuffle realises the counted sizes");
            double imb = SplineRangePartitioner.imbalance(sizes);
            assertTrue(imb <= 1.01, kinds[c] + ": imbalance " + imb + " " + Arrays.toString(sizes));
        }
        // a plain numeric key cannot split the Zipf key's top value: it stays whole in one partition
        Dataset<Row> zipf = skewedKeys(spark, "zipf", 20_000, 2);
        SplineRangePartitioner p = SplineRangePartitioner.fit(zipf, "key", 8);
        assertEquals(p.getPartition(1.0), p.getPartition(new Tuple2<Object, Object>(1.0, 0L)));
        assertTrue(p.getPartition(new Tuple2<Object, Object>(1.0, -1L)) >= p.getPartition(1.0) + 3,
                "the top value's rows are spread by their tie-break");
    }

    /**
     * A map that misses the heavy values (a sample by value can drop a whole value) puts several of them in one bin:
     * the bin is resolved into its distinct values and the heavy ones split by the tie-break, still within 1%.
     */
    @Test
    void heavyValuesLumpedInOneBinAreResolved() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = skewedKeys(spark, "zipf", 100_000, 3);
        Spline blind = SplineCdf.build(new double[] {100, 200}, SplineConfig.Kind.RATIONAL,
                io.sparkgpu.cuda.Backend.CPU, "key"); // every key below 100 maps to 0: values 1..99 in bin 0
        QuantileCuts c = QuantileCuts.count(df.select(functions.col("key"), functions.monotonically_increasing_id())
                .queryExecution().toRdd().toJavaRDD(), blind, io.sparkgpu.cuda.Backend.CPU, 16);
        assertEquals(0, c.refined[0]);
        assertTrue(c.distinct[0] != null && c.split[0][0] && c.split[0][1], "values 1 and 2 are split");
        assertTrue(SplineRangePartitioner.imbalance(c.sizes) <= 1.01, Arrays.toString(c.sizes));
        assertEquals(100_000, Arrays.stream(c.sizes).sum());
    }

    /** Without heavy ties the counted cuts depend on the multiset of keys only, not on the input's order. */
    @Test
    void countedCutsIgnoreInputOrder() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = skewedKeys(spark, "lognormal", 30_000, 2).cache();
        Dataset<Row> shuffled = df.orderBy(functions.col("key").desc()).repartition(5).cache();
        assertEquals(SplineRangePartitioner.fit(df, "key", 12), SplineRangePartitioner.fit(shuffled, "key", 12));
        df.unpersist();
        shuffled.unpersist();
    }

    @Test
    void getPartitionAndRules() {
        SplineRangePartitioner p = new SplineRangePartitioner(new double[] {1, 2, 2, 2, 5});
        assertEquals(6, p.numPartitions());
        assertEquals(0, p.getPartition(null));
        assertEquals(0, p.getPartition(0.5));
        assertEquals(0, p.getPartition(1));
        assertEquals(1, p.getPartition(1.5f));
        assertEquals(1, p.getPartition(2), "a plain key on an atom: the first of its partitions");
        assertEquals(4, p.getPartition(3L));
        assertEquals(5, p.getPartition(6));
        assertEquals(5, p.getPartition(Double.NaN));
        boolean[] seen = new boolean[6];
        for (long t = 0; t < 30; t++) {
            seen[p.getPartition(new Tuple2<Object, Object>(2.0, SplineRangePartitioner.mix(t)))] = true;
        }
        assertTrue(seen[1] && seen[2] && seen[3] && !seen[0] && !seen[4], "ties spread over the atom's partitions");
        assertEquals(1.5, SplineRangePartitioner.imbalance(new long[] {3, 1}), 0.0);
        assertEquals("numPartitions must be in [1, 1048576], got 0", assertThrows(IllegalArgumentException.class,
                () -> GpuMonotoneCdf.partitionByQuantiles(keys(SparkTestSession.get(), new double[] {1, 2}), "key",
                        0)).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> new SplineRangePartitioner(
                new double[] {2, 1})).getMessage().contains("non-decreasing"));
    }
}
