package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.apache.spark.api.java.JavaRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class KMeansTrainerSparkTest {
    static SparkSession spark;
    static JavaSparkContext jsc;
    static final StructType SCHEMA = new StructType()
            .add("features", SQLDataTypes.VectorType(), false)
            .add("w", DataTypes.DoubleType, false);

    @BeforeAll
    static void start() {
        spark = SparkTestSession.get();
        jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
    }

    /** Overlapping Gaussian blobs (so assignments keep changing for several iterations), with weights. */
    static List<Row> blobs(int n, int d, int centres, long seed) {
        Random r = new Random(seed);
        double[][] mu = new double[centres][d];
        for (double[] m : mu) {
            for (int j = 0; j < d; j++) {
                m[j] = r.nextGaussian() * 3;
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            double[] p = new double[d];
            double[] m = mu[r.nextInt(centres)];
            for (int j = 0; j < d; j++) {
                p[j] = m[j] + r.nextGaussian();
            }
            rows.add(RowFactory.create(Vectors.dense(p), 0.5 + r.nextInt(4)));
        }
        return rows;
    }

    static Dataset<Row> frame(List<Row> rows, int slices) {
        JavaRDD<Row> rdd = jsc.parallelize(rows, slices);
        return spark.createDataFrame(rdd, SCHEMA);
    }

    static KMeansConfig config(int k) {
        KMeansConfig c = new KMeansConfig();
        c.k = k;
        c.maxIter = 15;
        c.tol = 0;
        c.seed = 5;
        c.backend = Backend.AUTO;
        return c;
    }

    @Test
    void anyPartitioningGivesTheSameCentresBitForBit() {
        List<Row> rows = blobs(600, 3, 4, 1);
        for (String init : List.of(KMeansConfig.INIT_PARALLEL, KMeansConfig.INIT_RANDOM)) {
            KMeansConfig cfg = config(4);
            cfg.initMode = init;
            KMeansResult ref = KMeansTrainer.train(frame(rows, 1), "features", "w", cfg, null);
            // 2 and 7 partitions, empty partitions around the data, and shuffled row order
            List<Row> shuffled = new ArrayList<>(rows);
            java.util.Collections.shuffle(shuffled, new Random(9));
            JavaRDD<Row> withEmpty = jsc.parallelize(new ArrayList<Row>(), 2).union(jsc.parallelize(rows, 2))
                    .union(jsc.parallelize(new ArrayList<Row>(), 3));
            Dataset<Row> emptyParts = spark.createDataFrame(withEmpty, SCHEMA);
            assertEquals(7, emptyParts.rdd().getNumPartitions());
            for (Dataset<Row> df : List.of(frame(rows, 2), frame(rows, 7), emptyParts, frame(shuffled, 3))) {
                KMeansResult other = KMeansTrainer.train(df, "features", "w", cfg, null);
                for (int c = 0; c < 4; c++) {
                    assertArrayEquals(ref.centers[c], other.centers[c], 0.0, init + ": centre " + c);
                }
                assertEquals(ref.trainingCost, other.trainingCost, 0.0);
                assertArrayEquals(ref.clusterSizes, other.clusterSizes);
                assertEquals(ref.iterations, other.iterations);
            }
            assertEquals(600, Arrays.stream(ref.clusterSizes).sum());
        }
    }

    /** Runs {@code fit} with the k-means mode (and barrier task count) forced through system properties. */
    static <T> T inMode(String mode, String tasks, java.util.function.Supplier<T> fit) {
        System.setProperty(KMeansTrainer.MODE, mode);
        if (tasks != null) {
            System.setProperty(io.sparkgpu.spark.GpuTasks.TASKS, tasks);
        }
        try {
            return fit.get();
        } finally {
            System.clearProperty(KMeansTrainer.MODE);
            System.clearProperty(io.sparkgpu.spark.GpuTasks.TASKS);
        }
    }

    @Test
    void everyModeGivesTheSameBits() {
        List<Row> rows = blobs(900, 3, 4, 3);
        for (boolean cosine : new boolean[] {false, true}) {
            for (String init : List.of(KMeansConfig.INIT_PARALLEL, KMeansConfig.INIT_RANDOM)) {
                KMeansConfig cfg = config(4);
                cfg.initMode = init;
                cfg.cosine = cosine;
                String what = (cosine ? "cosine " : "euclidean ") + init;
                KMeansResult ref = inMode("job-per-pass", null, () -> KMeansTrainer.train(frame(rows, 3), "features", "w", cfg, null));
                assertEquals("job-per-pass", ref.mode, what);
                List<KMeansResult> others = List.of(
                        inMode("local", null, () -> KMeansTrainer.train(frame(rows, 3), "features", "w", cfg, null)),
                        inMode("single-stage", "1", () -> KMeansTrainer.train(frame(rows, 3), "features", "w", cfg, null)),
                        inMode("single-stage", "2", () -> KMeansTrainer.train(frame(rows, 5), "features", "w", cfg, null)),
                        inMode("auto", null, () -> KMeansTrainer.train(frame(rows, 2), "features", "w", cfg, null)));
                assertEquals(List.of("local", "single-stage", "single-stage", "local"),
                        others.stream().map(r -> r.mode).toList(), what);
                for (KMeansResult o : others) {
                    for (int c = 0; c < 4; c++) {
                        assertArrayEquals(ref.centers[c], o.centers[c], 0.0, what + " " + o.mode + ": centre " + c);
                    }
                    assertEquals(ref.trainingCost, o.trainingCost, 0.0, what + " " + o.mode);
                    assertEquals(ref.finalCost, o.finalCost, 0.0, what + " " + o.mode);
                    assertArrayEquals(ref.clusterSizes, o.clusterSizes, what + " " + o.mode);
                    assertEquals(ref.iterations, o.iterations, what + " " + o.mode);
                    assertEquals(ref.iterations, o.iterationSeconds.length, what + " " + o.mode);
                    assertTrue(o.timings.containsKey("pack") && o.timings.containsKey("total"), o.timings.toString());
                }
            }
        }
    }

    @Test
    void aBadModeSettingNamesTheSetting() {
        List<Row> rows = blobs(100, 2, 2, 1);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> inMode("fast", null,
                () -> KMeansTrainer.train(frame(rows, 2), "features", "w", config(2), null)));
        assertTrue(e.getMessage().contains(KMeansTrainer.MODE), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> inMode("single-stage", "0",
                () -> KMeansTrainer.train(frame(rows, 2), "features", "w", config(2), null)));
        assertTrue(e.getMessage().contains(io.sparkgpu.spark.GpuTasks.TASKS), e.getMessage());
    }

    @Test
    void equalsMllibFromTheSameInitialCentres() {
        List<Row> rows = blobs(2000, 4, 5, 2);
        Dataset<Row> df = frame(rows, 3);
        double[][] init = new double[5][];
        for (int c = 0; c < 5; c++) {
            init[c] = ((org.apache.spark.ml.linalg.Vector) rows.get(c * 17).get(0)).toArray();
        }
        for (boolean cosine : new boolean[] {false, true}) {
            KMeansConfig cfg = config(5);
            cfg.maxIter = 12;
            cfg.tol = 1e-4;
            cfg.cosine = cosine;
            cfg.initialCenters = init;
            KMeansResult ours = KMeansTrainer.train(df, "features", "w", cfg, null);

            org.apache.spark.mllib.linalg.Vector[] initVecs = new org.apache.spark.mllib.linalg.Vector[5];
            for (int c = 0; c < 5; c++) {
                initVecs[c] = org.apache.spark.mllib.linalg.Vectors.dense(init[c]);
            }
            JavaRDD<scala.Tuple2<org.apache.spark.mllib.linalg.Vector, Object>> data = df.javaRDD().map(r ->
                    new scala.Tuple2<>(org.apache.spark.mllib.linalg.Vectors.fromML((org.apache.spark.ml.linalg.Vector) r.get(0)),
                            (Object) r.getDouble(1)));
            org.apache.spark.mllib.clustering.KMeans mllib = new org.apache.spark.mllib.clustering.KMeans()
                    .setK(5).setMaxIterations(12).setEpsilon(1e-4)
                    .setDistanceMeasure(cosine ? "cosine" : "euclidean")
                    .setInitialModel(new org.apache.spark.mllib.clustering.KMeansModel(initVecs, cosine ? "cosine" : "euclidean", 0.0, 0));
            org.apache.spark.mllib.clustering.KMeansModel theirs = mllib.runWithWeight(data.rdd(), false, scala.Option.empty());
            for (int c = 0; c < 5; c++) {
                double[] t = theirs.clusterCenters()[c].toArray();
                for (int j = 0; j < 4; j++) {
                    double rel = Math.abs(t[j] - ours.centers[c][j]) / Math.max(1e-300, Math.abs(t[j]));
                    assertTrue(rel <= 1e-9, (cosine ? "cosine" : "euclidean") + " centre " + c + " dim " + j + ": MLlib "
                            + t[j] + " ours " + ours.centers[c][j]);
                }
            }
            double rel = Math.abs(theirs.trainingCost() - ours.trainingCost) / theirs.trainingCost();
            assertTrue(rel <= 1e-9, "training cost MLlib " + theirs.trainingCost() + " ours " + ours.trainingCost);
            assertTrue(ours.iterations > 1, "the test data should need several iterations");
        }
    }

    private static IllegalArgumentException failure(Dataset<Row> df, String weightCol, KMeansConfig cfg) {
        return assertThrows(IllegalArgumentException.class, () -> KMeansTrainer.train(df, "features", weightCol, cfg, null));
    }

    private static Dataset<Row> rowsOf(Object[]... values) {
        List<Row> rows = new ArrayList<>();
        for (Object[] v : values) {
            rows.add(RowFactory.create(Vectors.dense((double[]) v[0]), v[1]));
        }
        return frame(rows, 2);
    }

    @Test
    void badInputIsRejectedWithTheColumnOrParameterNamed() {
        Object[] ok1 = {new double[] {0, 0}, 1.0};
        Object[] ok2 = {new double[] {5, 5}, 1.0};
        Object[] ok3 = {new double[] {9, 1}, 1.0};
        IllegalArgumentException e;
        e = failure(rowsOf(ok1, ok2, new Object[] {new double[] {Double.NaN, 1}, 1.0}), "w", config(2));
        assertTrue(e.getMessage().contains("featuresCol 'features'") && e.getMessage().contains("NaN"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, new Object[] {new double[] {1, Double.POSITIVE_INFINITY}, 1.0}), "w", config(2));
        assertTrue(e.getMessage().contains("featuresCol 'features'") && e.getMessage().contains("Infinity"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, new Object[] {new double[] {1, 2, 3}, 1.0}), "w", config(2));
        assertTrue(e.getMessage().contains("featuresCol 'features'") && e.getMessage().contains("different sizes"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, new Object[] {new double[] {1, 2}, -1.0}), "w", config(2));
        assertTrue(e.getMessage().contains("weightCol 'w'"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, new Object[] {new double[] {1, 2}, Double.NaN}), "w", config(2));
        assertTrue(e.getMessage().contains("weightCol 'w'"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, ok1, ok2, ok2), "w", config(3));
        assertTrue(e.getMessage().contains("k=3") && e.getMessage().contains("distinct points (2)"), e.getMessage());
        e = failure(frame(new ArrayList<>(), 2), "w", config(2));
        assertTrue(e.getMessage().contains("empty"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, ok3), "weight", config(2));
        assertTrue(e.getMessage().contains("weightCol") && e.getMessage().contains("'weight' does not exist"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class,
                () -> KMeansTrainer.train(rowsOf(ok1, ok2, ok3), "feats", null, config(2), null));
        assertTrue(e.getMessage().contains("featuresCol") && e.getMessage().contains("'feats'"), e.getMessage());
        e = failure(rowsOf(ok1, ok2, ok3), "w", config(1));
        assertTrue(e.getMessage().contains("k must be >= 2"), e.getMessage());
        KMeansConfig cos = config(2);
        cos.cosine = true;
        e = failure(rowsOf(ok1, ok2, ok3), "w", cos);
        assertTrue(e.getMessage().contains("zero vector"), e.getMessage());
    }

    @Test
    void predictionsFollowTheNearestCentreAndArraysWork() {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            rows.add(RowFactory.create(new double[] {i % 2 == 0 ? 0.1 * i : 100 + 0.1 * i, 1.0}));
        }
        StructType schema = new StructType().add("features", DataTypes.createArrayType(DataTypes.DoubleType), false);
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        KMeansConfig cfg = config(2);
        KMeansResult res = KMeansTrainer.train(df, "features", null, cfg, null);
        assertArrayEquals(new long[] {25, 25}, Arrays.stream(res.clusterSizes).sorted().toArray());
        List<Row> pred = KMeansTrainer.predict(df, "features", "prediction", res.centers, false, Backend.AUTO).collectAsList();
        for (Row r : pred) {
            double x = r.getList(0).get(0) instanceof Double ? (Double) r.getList(0).get(0) : 0;
            int expected = KMeansTrainer.predictOne(new double[] {x, 1.0}, res.centers, false, "x");
            assertEquals(expected, r.getInt(1));
        }
        assertEquals(2, pred.stream().map(r -> r.getInt(1)).distinct().count());
    }
}
