package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.isotonic.GpuIsotonicRegression;
import io.sparkgpu.isotonic.GpuIsotonicRegressionModel;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.pde.FhnConfig;
import io.sparkgpu.pde.GpuFitzHughNagumo;
import io.sparkgpu.scan.GpuScanModel;
import io.sparkgpu.scan.GpuScanStatistic;
import io.sparkgpu.sort.GpuSort;
import io.sparkgpu.spline.GpuMonotoneCdf;
import io.sparkgpu.spline.GpuMonotoneSpline;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.GpuTsne;
import io.sparkgpu.tsne.GpuTsneModel;
import io.sparkgpu.tsne.init.TsneInit;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;

/**
 * Issue 18 item 3: every capability's result is a function of the rows' content (and ids), the seed and the params,
 * never of the input's order or partitioning. Each case fits (or transforms) the same rows in their original order in
 * one partition, then shuffled into 3 and 7 partitions, and expects the same bits (fingerprints print every double
 * with {@link Double#toString}, which tells any two doubles apart). Small data on local[2], CPU backend.
 */
class OrderIndependenceTest {
    private static final int[] PARTITIONS = {1, 3, 7};

    /** The fingerprint of {@code run} on the rows as given (1 partition), then shuffled into 3 and 7 partitions. */
    private static void sameBits(String what, List<Row> rows, StructType schema, Function<Dataset<Row>, String> run) {
        SparkSession spark = SparkTestSession.get();
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        String ref = null;
        Random shuffle = new Random(42);
        for (int parts : PARTITIONS) {
            List<Row> order = new ArrayList<>(rows);
            if (parts > 1) {
                Collections.shuffle(order, shuffle);
            }
            String got = run.apply(spark.createDataFrame(jsc.parallelize(order, parts), schema));
            if (ref == null) {
                ref = got;
            } else {
                assertEquals(ref, got, what + ": shuffled into " + parts + " partitions");
            }
        }
    }

    private static String rows(Dataset<Row> df) {
        return df.collectAsList().stream().map(Row::toString).collect(Collectors.joining("\n"));
    }

    @Test
    void kMeans() {
        StructType schema = new StructType().add("features", SQLDataTypes.VectorType()).add("w", DataTypes.DoubleType);
        Random r = new Random(1);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 150; i++) {
            int c = i % 3;
            rows.add(RowFactory.create(Vectors.dense(c * 4 + r.nextGaussian(), c * c + r.nextGaussian() * 0.1),
                    0.5 + r.nextInt(3)));
        }
        rows.add(rows.get(0)); // an exact duplicate
        sameBits("k-means", rows, schema, df -> {
            GpuKMeans e = new GpuKMeans().setK(3).setSeed(7L).setWeightCol("w").setBackend("cpu");
            return Arrays.deepToString(e.fit(df).clusterCentersArray());
        });
    }

    @Test
    void isotonic() {
        StructType schema = new StructType().add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType)
                .add("w", DataTypes.DoubleType);
        Random r = new Random(2);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            double x = r.nextInt(40); // repeated x: their labels are pooled
            rows.add(RowFactory.create(x * 0.1 + r.nextGaussian(), x, 0.25 + r.nextInt(4) * 0.5));
        }
        sameBits("isotonic", rows, schema, df -> {
            GpuIsotonicRegressionModel m = new GpuIsotonicRegression().setWeightCol("w").setBackend("cpu").fit(df);
            return Arrays.toString(m.boundaryArray()) + Arrays.toString(m.predictionArray());
        });
    }

    @Test
    void scanWithReplicas() {
        scanWithReplicas(false);
    }

    /** Fractional case counts (issue 18 item 4), not dyadic, split over two rows per cell: exact sums all the same. */
    @Test
    void scanOfFractionalCasesWithReplicas() {
        scanWithReplicas(true);
    }

    private void scanWithReplicas(boolean fractional) {
        StructType schema = new StructType().add("x", DataTypes.IntegerType).add("y", DataTypes.IntegerType)
                .add("cases", fractional ? DataTypes.DoubleType : DataTypes.LongType).add("pop", DataTypes.DoubleType);
        Random r = new Random(3);
        List<Row> rows = new ArrayList<>();
        for (int x = 0; x < 8; x++) {
            for (int y = 0; y < 6; y++) {
                double pop = 20 + r.nextInt(50) + 0.1 * r.nextInt(10);
                long c = r.nextInt(x >= 5 && y >= 3 ? 9 : 3);
                if (fractional) {
                    double f = c * 0.37 + 0.01 * r.nextInt(7);
                    rows.add(RowFactory.create(x, y, f / 3, pop / 3));
                    rows.add(RowFactory.create(x, y, f - f / 3, pop - pop / 3));
                } else {
                    rows.add(RowFactory.create(x, y, c / 2, pop / 3)); // every cell in two rows: added up
                    rows.add(RowFactory.create(x, y, c - c / 2, pop - pop / 3));
                }
            }
        }
        sameBits(fractional ? "scan (fractional cases)" : "scan", rows, schema, df -> {
            GpuScanModel m = new GpuScanStatistic().setCoordinateCols("x", "y").setCasesCol("cases")
                    .setBaselineCol("pop").setNumReplicas(9).setNumClusters(2).setSeed(5).setBackend("cpu").fit(df);
            return m.clusters() + Arrays.toString(m.replicaLlrs());
        });
    }

    /** Points on an integer lattice (many exact distance ties at the k-th neighbour), ids "p0".."p59". */
    private static List<Row> lattice() {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 60; i++) {
            rows.add(RowFactory.create("p" + i, Vectors.dense(i % 4, (i / 4) % 5, i / 20)));
        }
        return rows;
    }

    private static final StructType TSNE = new StructType().add("name", DataTypes.StringType)
            .add("features", SQLDataTypes.VectorType());

    private static GpuTsne tsne(String mode, String init) {
        return new GpuTsne().setIdCol("name").setPerplexity(8).setMaxIter(20).setExaggerationIterations(10)
                .setSeed(11).setInit(init).setMode(mode).setLearningRate(20).setQualitySampleSize(30)
                .setBackend("cpu");
    }

    private static String embedding(GpuTsneModel m) {
        return rows(m.embedding().orderBy("name")) + " trust=" + m.summary().trustworthiness();
    }

    @Test
    void tsneSingleAndDistributed() {
        sameBits("t-SNE single, random init", lattice(), TSNE, df -> embedding(tsne("single", "random").fit(df)));
        sameBits("t-SNE distributed, pca init", lattice(), TSNE,
                df -> embedding(tsne("distributed", "pca").fit(df)));
    }

    @Test
    void tsneGraph() {
        StructType schema = new StructType().add("src", DataTypes.LongType).add("dst", DataTypes.LongType)
                .add("w", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (long a = 0; a < 24; a++) {
            rows.add(RowFactory.create(a, (a + 1) % 24, 1.0));
            rows.add(RowFactory.create(a, (a + 5) % 24, 0.1 * (a % 3) + 0.3));
        }
        rows.add(RowFactory.create(0L, 1L, 0.7)); // a repeated edge
        sameBits("t-SNE graph", rows, schema, df -> {
            GpuTsneModel m = new GpuTsne().setSrcCol("src").setDstCol("dst").setWeightCol("w").setIdCol(null)
                    .setMaxIter(15).setExaggerationIterations(5).setSeed(4).setLearningRate(20).setBackend("cpu")
                    .fit(df);
            return Arrays.toString(m.ids()) + Arrays.toString(m.embeddingArray());
        });
    }

    /** A row's initial position depends on the seed and its id only: another row set keeps it. */
    @Test
    void tsneInitialPositionsFollowTheIds() {
        long[] keys = {TsneInit.idKey("p3"), TsneInit.idKey(7L), TsneInit.idKey(-0.0), TsneInit.idKey(0.0)};
        double[] y = TsneInit.random(keys, 2, 5);
        double[] alone = TsneInit.random(new long[] {keys[1]}, 2, 5);
        assertEquals(y[2], alone[0]);
        assertEquals(y[3], alone[1]);
        assertEquals(y[4], y[6], "-0.0 and 0.0 are one id");
        assertNotEquals(y[0], TsneInit.random(keys, 2, 6)[0], "the seed matters");
        assertEquals(TsneInit.idKey(7), TsneInit.idKey(7L), "int and long ids of the same value");
        double s = 0;
        double[] many = TsneInit.random(4000, 1, 1);
        for (double v : many) {
            s += v * v;
        }
        double sd = Math.sqrt(s / many.length) / TsneInit.INIT_STD;
        assertTrue(sd > 0.95 && sd < 1.05, "standard deviation " + sd);
    }

    @Test
    void tsneDuplicateOrNullIdsAreRefused() {
        SparkSession spark = SparkTestSession.get();
        List<Row> rows = lattice();
        rows.set(7, RowFactory.create("p3", Vectors.dense(9, 9, 9)));
        IllegalArgumentException dup = assertThrows(IllegalArgumentException.class,
                () -> tsne("single", "random").fit(spark.createDataFrame(rows, TSNE)));
        assertEquals("idCol 'name' must identify rows (unique values), got p3 2 times", dup.getMessage());
        rows.set(7, RowFactory.create(null, Vectors.dense(9, 9, 9)));
        IllegalArgumentException nul = assertThrows(IllegalArgumentException.class,
                () -> tsne("single", "random").fit(spark.createDataFrame(rows, TSNE)));
        assertEquals("idCol 'name' contains a null value", nul.getMessage());
    }

    @Test
    void sort() {
        StructType schema = new StructType().add("key", DataTypes.DoubleType).add("payload", DataTypes.StringType);
        Random r = new Random(6);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 200; i++) {
            rows.add(RowFactory.create(i % 50 == 0 ? null : r.nextInt(1000) * 1000.0 + i, "r" + i)); // unique keys
        }
        rows.add(RowFactory.create(-0.0, "negative zero"));
        rows.add(RowFactory.create(Double.NaN, "nan"));
        // nulls tie with each other: compare the key sequence and the rows with a key
        sameBits("sort", rows, schema, df -> {
            Dataset<Row> s = GpuSort.sort(df, "key");
            return rows(s.select("key")) + rows(s.where("key is not null"));
        });
    }

    @Test
    void splineAndCdf() {
        StructType schema = new StructType().add("x", DataTypes.DoubleType).add("y", DataTypes.DoubleType)
                .add("w", DataTypes.DoubleType);
        Random r = new Random(8);
        List<Row> rows = new ArrayList<>();
        double y = 0;
        for (int i = 0; i < 80; i++) {
            y += r.nextInt(3) * 0.25;
            rows.add(RowFactory.create(i * 0.5, y, 1.0 + r.nextInt(3)));
        }
        StructType q = new StructType().add("x", DataTypes.DoubleType);
        List<Row> probes = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            probes.add(RowFactory.create(i * 1.37 - 1));
        }
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> probe = spark.createDataFrame(probes, q);
        sameBits("spline", rows, schema, df -> rows(new GpuMonotoneSpline().setWeightCol("w").setBackend("cpu")
                .fit(df).transform(probe)));
        StructType v = new StructType().add("value", DataTypes.DoubleType).add("w", DataTypes.DoubleType);
        List<Row> values = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            values.add(RowFactory.create((double) r.nextInt(60), 1.0 + r.nextInt(2))); // duplicates
        }
        Dataset<Row> vprobe = probe.withColumnRenamed("x", "value");
        for (long sample : new long[] {0, 120}) {
            sameBits("CDF, sampleSize " + sample, values, v, df -> rows(new GpuMonotoneCdf().setInputCol("value")
                    .setWeightCol("w").setNumKnots(12).setSampleSize(sample).setSeed(3).setBackend("cpu").fit(df)
                    .transform(vprobe)));
        }
    }

    @Test
    void fhnSweep() {
        StructType schema = new StructType().add("id", DataTypes.IntegerType).add("a", DataTypes.DoubleType)
                .add("I", DataTypes.DoubleType);
        List<Row> rows = new ArrayList<>();
        for (int j = 0; j < 8; j++) {
            rows.add(RowFactory.create(j, 0.05 + 0.02 * (j % 5), 0.05 * j));
        }
        sameBits("FHN sweep", rows, schema, df -> rows(new GpuFitzHughNagumo().setCells(21).setLength(10).setDt(0.05)
                .setTEnd(2).setScheme(FhnConfig.CRANK_NICOLSON).setInitial(FhnConfig.GAUSSIAN).setBackend("cpu")
                .transform(df).orderBy("id")));
    }
}
