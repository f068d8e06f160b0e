package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * GpuTsne end to end on local[2] with the CPU twins: separation, identical bits across modes and partitionings,
 * input errors, graph mode, fit / save / load / transform.
 */
class GpuTsneSparkTest {
    private static final StructType SCHEMA = new StructType().add("name", DataTypes.StringType, false)
            .add("label", DataTypes.IntegerType, false).add("features", SQLDataTypes.VectorType(), false);

    private static Dataset<Row> frame(TsneTestData data, int partitions) {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < data.n; i++) {
            double[] v = new double[data.d];
            System.arraycopy(data.x, i * data.d, v, 0, data.d);
            rows.add(RowFactory.create("p" + i, data.labels[i], Vectors.dense(v)));
        }
        // the same row order for any number of partitions
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        return SparkTestSession.get().createDataFrame(jsc.parallelize(rows, partitions), SCHEMA);
    }

    private static GpuTsne estimator() {
        return new GpuTsne().setPerplexity(10).setMaxIter(250).setExaggerationIterations(100).setSeed(3)
                .setBackend("cpu").setIdCol("name").setQualitySampleSize(120)
                // a small step keeps the embedding compact and a small grid keeps the CPU convolution cheap (CI has
                // 2 cores); the auto rate max(n / 12, 200) is meant for large n
                .setLearningRate(96).setGridMinIntervals(10).setGridMaxIntervals(40);
    }

    /** kNN-label accuracy of the embedding (labels looked up through the ids). */
    private static double accuracy(GpuTsneModel m, TsneTestData data) {
        Object[] ids = m.ids();
        int[] labels = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            labels[i] = data.labels[Integer.parseInt(((String) ids[i]).substring(1))];
        }
        return TsneQuality.knnLabelAccuracy(m.embeddingArray(), m.dimension(), labels, 5);
    }

    @Test
    void separatesClustersAndReportsQuality() {
        TsneTestData data = TsneTestData.clusters(4, 60, 10, 1);
        List<double[]> kl = new ArrayList<>();
        GpuTsneModel m = estimator().setProgress((it, v) -> kl.add(new double[] {it, v})).fit(frame(data, 2));
        double acc = accuracy(m, data);
        assertTrue(acc >= 0.95, "kNN label accuracy " + acc);
        GpuTsneSummary s = m.summary();
        assertEquals(240, s.numPoints());
        assertEquals(5, s.klHistory().length, "every 50 iterations before the last, and the final one");
        assertArrayEquals(new int[] {50, 100, 150, 200, 250}, s.klIterations(), "no iteration reported twice");
        assertEquals(kl.size(), s.klHistory().length);
        assertTrue(s.finalKl() < s.klHistory()[2], "KL decreases after the exaggeration");
        assertTrue(s.trustworthiness() > 0.8 && s.trustworthiness() <= 1, s.toString());
        assertTrue(s.knnPreservation() > 0 && s.knnPreservation() <= 1, s.toString());
        assertTrue(s.timings().get("total") > 0 && s.timings().containsKey("s2g"), s.toString());
    }

    @Test
    void sameSeedSameBitsInBothModesAndForAnyPartitioning() {
        TsneTestData data = TsneTestData.clusters(3, 40, 6, 2);
        GpuTsne e = estimator().setMaxIter(12).setExaggerationIterations(6).setKlEvery(5);
        GpuTsneModel single1 = e.copy(new org.apache.spark.ml.param.ParamMap()).setMode("single").fit(frame(data, 1));
        GpuTsneModel single3 = e.copy(new org.apache.spark.ml.param.ParamMap()).setMode("single").fit(frame(data, 3));
        GpuTsneModel dist1 = e.copy(new org.apache.spark.ml.param.ParamMap()).setMode("distributed").fit(frame(data, 1));
        GpuTsneModel dist3 = e.copy(new org.apache.spark.ml.param.ParamMap()).setMode("distributed").fit(frame(data, 3));
        GpuTsneModel dist3to2 = e.copy(new org.apache.spark.ml.param.ParamMap()).setMode("distributed")
                .setDistributedPartitions(2).fit(frame(data, 3));
        assertEquals("single", single1.summary().mode());
        assertEquals("distributed", dist3.summary().mode());
        double[] ref = byName(single1);
        assertArrayEquals(ref, byName(single3), "single mode, 1 vs 3 partitions");
        assertArrayEquals(ref, byName(dist1), "distributed, 1 partition");
        assertArrayEquals(ref, byName(dist3), "distributed, 3 partitions");
        assertArrayEquals(ref, byName(dist3to2), "distributed, 3 partitions coalesced to 2");
        assertArrayEquals(single1.summary().klHistory(), dist3.summary().klHistory());
    }

    /** Job descriptions seen while {@code fit} runs with the one-stage setting and task count set (null: unset). */
    static List<String> jobsOf(String stage, String tasks, Runnable fit) throws Exception {
        List<String> jobs = java.util.Collections.synchronizedList(new ArrayList<>());
        org.apache.spark.scheduler.SparkListener l = new org.apache.spark.scheduler.SparkListener() {
            @Override
            public void onJobStart(org.apache.spark.scheduler.SparkListenerJobStart e) {
                jobs.add(String.valueOf(e.properties().getProperty("spark.job.description")));
            }
        };
        org.apache.spark.SparkContext sc = SparkTestSession.get().sparkContext();
        sc.listenerBus().waitUntilEmpty();
        sc.addSparkListener(l);
        if (stage != null) {
            System.setProperty(TsneTrainer.DISTRIBUTED_STAGE, stage);
        }
        if (tasks != null) {
            System.setProperty(io.sparkgpu.spark.GpuTasks.TASKS, tasks);
        }
        try {
            fit.run();
            sc.listenerBus().waitUntilEmpty();
        } finally {
            System.clearProperty(TsneTrainer.DISTRIBUTED_STAGE);
            System.clearProperty(io.sparkgpu.spark.GpuTasks.TASKS);
            sc.removeSparkListener(l);
        }
        return jobs;
    }

    private static long count(List<String> jobs, String part) {
        return jobs.stream().filter(j -> j.contains(part)).count();
    }

    /** Edges of three cliques of 8 vertices "v0".."v23" with a weak link, in 3 partitions (order kept). */
    private static Dataset<Row> cliques() {
        List<Row> rows = new ArrayList<>();
        for (int g = 0; g < 3; g++) {
            for (int a = 0; a < 8; a++) {
                for (int b = a + 1; b < 8; b++) {
                    rows.add(RowFactory.create("v" + (g * 8 + a), "v" + (g * 8 + b), 1.0 + 0.125 * ((a + b) % 3)));
                }
            }
        }
        rows.add(RowFactory.create("v0", "v8", 0.01));
        StructType schema = new StructType().add("src", DataTypes.StringType, false)
                .add("dst", DataTypes.StringType, false).add("w", DataTypes.DoubleType, false);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        return SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 3), schema);
    }

    @Test
    void oneBarrierStageGivesTheBitsOfSingleModeAndOfTheJobPerIterationPath() throws Exception {
        TsneTestData data = TsneTestData.clusters(3, 30, 6, 5);
        Dataset<Row> features = frame(data, 3);
        Dataset<Row> graph = cliques();
        for (String input : new String[] {"features", "graph"}) {
            for (int dim = input.equals("graph") ? 1 : 2; dim <= 2; dim++) { // 1-D through the cheaper graph input
                GpuTsne e = estimator().setDimension(dim).setMaxIter(12).setExaggerationIterations(6).setKlEvery(5)
                        .setInit("random").setQualitySampleSize(0);
                if (input.equals("graph")) {
                    e = e.setSrcCol("src").setDstCol("dst").setWeightCol("w").setIdCol(null).setLearningRate(40);
                } else {
                    e = e.setRepulsion("grid"); // the graph's 24 points take the default: exact
                }
                boolean grid = input.equals("features");
                String jobPart = grid ? "S2G partial grids" : "exact repulsion per slice";
                Dataset<Row> df = input.equals("graph") ? graph : features;
                String what = input + ", " + dim + "-D";
                GpuTsneModel[] m = new GpuTsneModel[4];
                GpuTsne single = e.copy(org.apache.spark.ml.param.ParamMap.empty()).setMode("single");
                GpuTsne dist = e.copy(org.apache.spark.ml.param.ParamMap.empty()).setMode("distributed");
                List<double[]> progress = new ArrayList<>();
                List<String> j0 = jobsOf(null, null, () -> m[0] = single.fit(df));
                List<String> j1 = jobsOf("false", null, () -> m[1] = dist.fit(df));
                List<String> j2 = jobsOf(null, "1", () -> m[2] = dist.fit(df));
                List<String> j3 = jobsOf("TRUE", "2", () -> m[3] = dist.copy(org.apache.spark.ml.param.ParamMap.empty())
                        .setProgress((it, v) -> progress.add(new double[] {it, v})).fit(df));
                assertEquals(0, count(j0, "barrier") + count(j0, "S2G"), what + ": single " + j0);
                assertEquals(13, count(j1, jobPart), what + ": per-iteration path (and the final KL) " + j1);
                assertEquals(0, count(j1, "barrier"), what + ": per-iteration path " + j1);
                assertEquals(1, count(j2, "one barrier stage (1 task(s))"), what + ": one task " + j2);
                assertEquals(1, count(j3, "one barrier stage (2 task(s))"), what + ": two tasks " + j3);
                assertEquals(0, count(j2, "S2G") + count(j3, "S2G") + count(j2, "exact") + count(j3, "exact"), what);
                double[] ref = m[0].embeddingArray();
                double[] kl = m[0].summary().klHistory();
                assertEquals(3, kl.length, what);
                for (int r = 1; r < 4; r++) {
                    assertEquals("distributed", m[r].summary().mode(), what);
                    assertArrayEquals(ref, m[r].embeddingArray(), what + ", run " + r);
                    assertArrayEquals(kl, m[r].summary().klHistory(), what + ", run " + r);
                    assertTrue(m[r].summary().timings().get(grid ? "s2g" : "exact") > 0, what + ": " + m[r].summary());
                    assertEquals(0.0, m[r].summary().timings().get(grid ? "exact" : "s2g"), what + ": " + m[r].summary());
                }
                assertEquals(kl.length, progress.size(), what);
                for (int i = 0; i < kl.length; i++) {
                    assertEquals(kl[i], progress.get(i)[1], 0.0, what);
                }
            }
        }
    }

    @Test
    void badOneStageSettingsNameTheSetting() {
        TsneTestData data = TsneTestData.clusters(2, 20, 4, 6);
        GpuTsne e = estimator().setPerplexity(5).setMaxIter(3).setExaggerationIterations(1).setMode("distributed");
        Dataset<Row> df = frame(data, 2);
        IllegalArgumentException x = assertThrows(IllegalArgumentException.class,
                () -> jobsOf("sometimes", null, () -> e.fit(df)));
        assertTrue(x.getMessage().contains(TsneTrainer.DISTRIBUTED_STAGE), x.getMessage());
        x = assertThrows(IllegalArgumentException.class, () -> jobsOf(null, "none", () -> e.fit(df)));
        assertTrue(x.getMessage().contains(io.sparkgpu.spark.GpuTasks.TASKS), x.getMessage());
    }

    /** Coordinates ordered by id "p0", "p1", ... (the row order differs between partitionings). */
    private static double[] byName(GpuTsneModel m) {
        Object[] ids = m.ids();
        double[] out = new double[ids.length * m.dimension()];
        for (int i = 0; i < ids.length; i++) {
            System.arraycopy(m.embeddingOf("p" + i), 0, out, i * m.dimension(), m.dimension());
        }
        return out;
    }

    @Test
    void badInputGivesClearErrors() {
        SparkSession spark = SparkTestSession.get();
        StructType schema = new StructType().add("f", SQLDataTypes.VectorType(), false);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            rows.add(RowFactory.create(Vectors.dense(i, i * i % 7)));
        }
        GpuTsne e = new GpuTsne().setFeaturesCol("f").setBackend("cpu").setMaxIter(5).setPerplexity(2)
                .setGridMinIntervals(10).setGridMaxIntervals(10);
        List<Row> withNaN = new ArrayList<>(rows);
        withNaN.set(5, RowFactory.create(Vectors.dense(1, Double.NaN)));
        assertMessage("featuresCol 'f' contains NaN", () -> e.fit(spark.createDataFrame(withNaN, schema)));
        List<Row> withInf = new ArrayList<>(rows);
        withInf.set(3, RowFactory.create(Vectors.dense(Double.POSITIVE_INFINITY, 1)));
        assertMessage("featuresCol 'f' contains Infinity", () -> e.fit(spark.createDataFrame(withInf, schema)));
        assertMessage("perplexity=12.0 must be < n - 1 = 11",
                () -> e.copy(new org.apache.spark.ml.param.ParamMap()).setPerplexity(12).fit(spark.createDataFrame(rows, schema)));
        assertMessage("k=12 must be in 1..n - 1 = 11",
                () -> e.copy(new org.apache.spark.ml.param.ParamMap()).setK(12).fit(spark.createDataFrame(rows, schema)));
        assertMessage("at least 4 points",
                () -> e.fit(spark.createDataFrame(rows.subList(0, 3), schema)));
        List<Row> dup = new ArrayList<>(rows);
        for (int i = 0; i < 8; i++) {
            dup.add(RowFactory.create(Vectors.dense(100, 100)));
        }
        assertMessage("duplicate points", () -> e.fit(spark.createDataFrame(dup, schema)));
        assertMessage("featuresCol", () -> e.copy(new org.apache.spark.ml.param.ParamMap()).setFeaturesCol("nope")
                .fit(spark.createDataFrame(rows, schema)));
        // graph with a negative weight
        Dataset<Row> edges = spark.sql("SELECT * FROM VALUES (1L, 2L, 1.0D), (2L, 3L, -0.5D), (3L, 4L, 1.0D), "
                + "(4L, 1L, 1.0D) AS t(s, d, w)");
        assertMessage("weightCol 'w' must hold finite weights >= 0",
                () -> new GpuTsne().setSrcCol("s").setDstCol("d").setWeightCol("w").setBackend("cpu").setMaxIter(5)
                        .fit(edges));
    }

    @Test
    void graphModeEmbedsCliquesApart() {
        SparkSession spark = SparkTestSession.get();
        List<Row> rows = new ArrayList<>();
        int groups = 3;
        int size = 12;
        for (int g = 0; g < groups; g++) {
            for (int a = 0; a < size; a++) {
                for (int b = a + 1; b < size; b++) {
                    rows.add(RowFactory.create("v" + (g * size + a), "v" + (g * size + b), 1.0));
                }
            }
        }
        rows.add(RowFactory.create("v0", "v12", 0.01)); // a weak link between two cliques
        StructType schema = new StructType().add("src", DataTypes.StringType, false)
                .add("dst", DataTypes.StringType, false).add("w", DataTypes.DoubleType, false);
        GpuTsneModel m = new GpuTsne().setSrcCol("src").setDstCol("dst").setWeightCol("w").setBackend("cpu")
                .setMaxIter(250).setExaggerationIterations(100).setLearningRate(40).setSeed(1)
                .setGridMinIntervals(10).setGridMaxIntervals(40)
                .fit(spark.createDataFrame(rows, schema));
        Object[] ids = m.ids();
        int[] labels = new int[ids.length];
        for (int i = 0; i < ids.length; i++) {
            labels[i] = Integer.parseInt(((String) ids[i]).substring(1)) / size;
        }
        double acc = TsneQuality.knnLabelAccuracy(m.embeddingArray(), 2, labels, 5);
        assertTrue(acc >= 0.95, "accuracy " + acc);
        assertEquals("graph", m.summary().input());
        assertEquals("id", m.getIdCol());
    }

    @Test
    void fitSaveLoadTransform(@TempDir Path dir) throws Exception {
        TsneTestData data = TsneTestData.clusters(3, 20, 5, 4);
        Dataset<Row> df = frame(data, 2);
        GpuTsneModel m = estimator().setPerplexity(5).setMaxIter(60).setExaggerationIterations(30).fit(df);
        String path = dir.resolve("tsne").toString();
        m.write().save(path);
        GpuTsneModel back = GpuTsneModel.load(path);
        assertArrayEquals(m.embeddingArray(), back.embeddingArray());
        assertEquals(m.summary(), back.summary());
        List<Row> out = back.transform(df).select("name", "embedding").collectAsList();
        assertEquals(data.n, out.size());
        for (Row r : out) {
            assertArrayEquals(m.embeddingOf(r.getString(0)), ((Vector) r.get(1)).toArray());
        }
        assertEquals(data.n, back.embedding().count());
        // without idCol the ids are the row numbers
        GpuTsneModel byIndex = estimator().setIdCol(null).setPerplexity(5).setMaxIter(20).setExaggerationIterations(10)
                .fit(df);
        assertEquals("id", byIndex.getIdCol());
        assertEquals(0L, byIndex.ids()[0]);
        assertEquals((long) data.n - 1, byIndex.ids()[data.n - 1]);
    }

    private static void assertMessage(String part, org.junit.jupiter.api.function.Executable ex) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, ex);
        assertTrue(e.getMessage().contains(part), e.getMessage());
    }
}
