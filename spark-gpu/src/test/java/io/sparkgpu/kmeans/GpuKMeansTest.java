package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import org.apache.spark.ml.clustering.KMeans;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.Param;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class GpuKMeansTest {
    private static SparkSession spark;
    private static Dataset<Row> blobs;

    @BeforeAll
    static void start() {
        spark = KMeansTestData.session("GpuKMeansTest");
        blobs = KMeansTestData.blobs(spark).cache();
    }

    @AfterAll
    static void stop() {
        KMeansTestData.stop(spark);
    }

    // ------------------------------------------------------------------ params

    @Test
    void defaultsEqualMLlibKMeans() {
        KMeans ml = new KMeans();
        GpuKMeans g = new GpuKMeans();
        assertEquals(ml.getK(), g.getK());
        assertEquals(ml.getMaxIter(), g.getMaxIter());
        assertEquals(ml.getTol(), g.getTol());
        assertEquals(ml.getInitMode(), g.getInitMode());
        assertEquals(ml.getInitSteps(), g.getInitSteps());
        assertEquals(ml.getDistanceMeasure(), g.getDistanceMeasure());
        assertEquals(ml.getFeaturesCol(), g.getFeaturesCol());
        assertEquals(ml.getPredictionCol(), g.getPredictionCol());
        // MLlib's seed default is the hash of the class name; ours follows the same rule
        assertEquals((long) GpuKMeans.class.getName().hashCode(), g.getSeed());
        assertEquals((long) KMeans.class.getName().hashCode(), ml.getSeed());
        assertFalse(g.isDefined(g.weightCol()));
        assertFalse(ml.isDefined(ml.weightCol()));
        assertEquals("auto", g.getBackend());
        assertFalse(g.isDefined(g.initialCenters()));
        assertEquals(null, g.getInitialCenters());
    }

    @Test
    void paramNamesIncludeMLlibsAndValidatorsAgree() {
        KMeans ml = new KMeans();
        GpuKMeans g = new GpuKMeans();
        Set<String> ours = new HashSet<>();
        for (Param<?> p : g.params()) {
            ours.add(p.name());
        }
        for (String name : List.of("k", "maxIter", "tol", "seed", "initMode", "initSteps", "distanceMeasure",
                "weightCol", "featuresCol", "predictionCol")) {
            assertTrue(ours.contains(name), "missing param " + name);
            assertTrue(ml.hasParam(name), "MLlib has no param " + name);
        }
        assertTrue(ours.containsAll(List.of("backend", "initialCenters")));
        String explained = g.setInitialCenters(new double[][] {{1, 2}}).explainParams();
        assertTrue(explained.contains("initialCenters:") && explained.contains("backend:"), explained);
        Object[][] probes = {
            {"k", 1, 2, 0, -3},
            {"maxIter", -1, 0, 5},
            {"tol", -1e-9, 0.0, 1.0},
            {"initSteps", 0, 1, 5},
            {"initMode", "random", "k-means||", "kmeans", "RANDOM"},
            {"distanceMeasure", "euclidean", "cosine", "manhattan"},
        };
        for (Object[] probe : probes) {
            String name = (String) probe[0];
            for (int i = 1; i < probe.length; i++) {
                Object v = probe[i];
                boolean mlOk = accepts(ml.getParam(name), v);
                boolean ourOk = accepts(g.getParam(name), v);
                assertEquals(mlOk, ourOk, name + "=" + v);
            }
        }
    }

    private static boolean accepts(Param<Object> p, Object v) {
        try {
            p.validate(v);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    @Test
    void settersReturnThisAndStoreValues() {
        double[][] init = {{0, 0}, {1, 1}, {2, 2}};
        GpuKMeans g = new GpuKMeans();
        assertSame(g, g.setK(3).setMaxIter(7).setTol(0.5).setSeed(9L).setInitMode("random").setInitSteps(4)
                .setDistanceMeasure("cosine").setWeightCol("w").setFeaturesCol("f").setPredictionCol("p")
                .setBackend("CPU").setInitialCenters(init));
        assertEquals(3, g.getK());
        assertEquals(7, g.getMaxIter());
        assertEquals(0.5, g.getTol());
        assertEquals(9L, g.getSeed());
        assertEquals("random", g.getInitMode());
        assertEquals(4, g.getInitSteps());
        assertEquals("cosine", g.getDistanceMeasure());
        assertEquals("w", g.getWeightCol());
        assertEquals("f", g.getFeaturesCol());
        assertEquals("p", g.getPredictionCol());
        assertEquals("cpu", g.getBackend());
        init[0][0] = 42; // the param holds a copy
        assertArrayEquals(new double[] {0, 0}, g.getInitialCenters()[0]);
        g.setInitialCenters(null).setWeightCol(null);
        assertFalse(g.isSet(g.initialCenters()));
        assertFalse(g.isSet(g.weightCol()));
    }

    @Test
    void copyKeepsParamsAndAppliesExtra() {
        GpuKMeans g = new GpuKMeans().setK(4).setMaxIter(3);
        KMeansProgress listener = (i, c, s) -> { };
        g.setProgress(listener);
        GpuKMeans c = g.copy(new ParamMap().put(g.maxIter(), 9));
        assertEquals(g.uid(), c.uid());
        assertEquals(4, c.getK());
        assertEquals(9, c.getMaxIter());
        assertEquals(3, g.getMaxIter());
        assertSame(listener, c.getProgress());
    }

    // ------------------------------------------------------------------ fitting

    @ParameterizedTest(name = "{0} weighted={1}")
    @CsvSource({"vec,false", "vec,true", "features,false", "features,true"})
    void fitFindsTheBlobs(String col, boolean weighted) {
        GpuKMeans est = new GpuKMeans().setK(3).setSeed(1L).setFeaturesCol(col).setMaxIter(50);
        if (weighted) {
            est.setWeightCol("w");
        }
        GpuKMeansModel model = est.fit(blobs);
        double[][] centres = model.clusterCentersArray();
        assertEquals(3, centres.length);
        assertEquals(2, model.numFeatures());

        Dataset<Row> out = model.transform(blobs);
        assertEquals(DataTypes.IntegerType, out.schema().apply("prediction").dataType());
        Map<Integer, Integer> labelOfBlob = new HashMap<>();
        long[] counted = new long[3];
        for (Row r : out.select("blob", "prediction").collectAsList()) {
            int blob = r.getInt(0);
            int label = r.getInt(1);
            Integer seen = labelOfBlob.putIfAbsent(blob, label);
            assertEquals(seen == null ? label : seen, label, "blob " + blob + " split over clusters");
            counted[label]++;
        }
        assertEquals(3, new HashSet<>(labelOfBlob.values()).size(), "two blobs share a cluster");
        for (int b = 0; b < 3; b++) {
            double[] expected = KMeansTestData.mean(b, weighted);
            assertArrayEquals(expected, centres[labelOfBlob.get(b)], 1e-9, "centre of blob " + b);
        }

        GpuKMeansSummary s = model.summary();
        assertTrue(model.hasSummary());
        assertEquals(3, s.k());
        assertEquals(60, s.numPoints());
        assertEquals(60, Arrays.stream(s.clusterSizes()).sum());
        assertArrayEquals(counted, s.clusterSizes());
        assertTrue(s.converged());
        assertTrue(s.numIter() >= 1 && s.numIter() <= 50);
        assertEquals(s.numIter(), s.costHistory().length);
        assertEquals(s.numIter(), s.maxShiftHistory().length);
        assertEquals(s.trainingCost(), s.costHistory()[s.numIter() - 1]);
        assertTrue(Set.of("cpu", "gpu", "mixed").contains(s.backend()), s.backend());
        double cost = 0;
        for (int id = 0; id < KMeansTestData.POINTS.length; id++) {
            double[] c = centres[labelOfBlob.get(id / KMeansTestData.PER_BLOB)];
            double dx = KMeansTestData.POINTS[id][0] - c[0];
            double dy = KMeansTestData.POINTS[id][1] - c[1];
            cost += (weighted ? KMeansTestData.weight(id) : 1.0) * (dx * dx + dy * dy);
        }
        assertEquals(cost, s.finalCost(), 1e-9 * cost);

        assertSame(est, model.parent());
        assertEquals(est.uid(), model.uid());
        assertEquals(col, model.getFeaturesCol());
    }

    @Test
    void randomInitAndCosineDistance() {
        // two directions, very different magnitudes: cosine groups by direction only
        List<Row> rows = new ArrayList<>();
        for (int i = 1; i <= 10; i++) {
            rows.add(RowFactory.create(0, Vectors.dense(i, 0.01 * i)));
            rows.add(RowFactory.create(1, Vectors.dense(0.02 * i * i, 5.0 * i * i)));
        }
        StructType schema = new StructType().add("dir", DataTypes.IntegerType).add("features",
                org.apache.spark.ml.linalg.SQLDataTypes.VectorType());
        Dataset<Row> df = spark.createDataFrame(rows, schema);
        GpuKMeansModel m = new GpuKMeans().setK(2).setDistanceMeasure("cosine").setInitMode("random").setSeed(3L)
                .fit(df);
        assertEquals("cosine", m.getDistanceMeasure());
        Map<Integer, Integer> labelOfDir = new HashMap<>();
        for (Row r : m.transform(df).collectAsList()) {
            Integer seen = labelOfDir.putIfAbsent(r.getInt(0), r.getInt(2));
            assertEquals(seen == null ? r.getInt(2) : seen, r.getInt(2));
        }
        assertNotEquals(labelOfDir.get(0), labelOfDir.get(1));
        for (double[] c : m.clusterCentersArray()) {
            assertEquals(1.0, Math.hypot(c[0], c[1]), 1e-12, "cosine centres are unit vectors");
        }
    }

    @Test
    void cosineWithZeroToleranceConverges() {
        // centres that stop changing have moved by exactly 0 (the cosine distance of a vector to itself is often
        // ~1e-16), so a fit with tol = 0 converges before maxIter
        java.util.SplittableRandom r = new java.util.SplittableRandom(17);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            double[] v = new double[5];
            for (int j = 0; j < 5; j++) {
                v[j] = (i % 3 == j ? 4 : 0) + r.nextDouble();
            }
            rows.add(RowFactory.create(Vectors.dense(v)));
        }
        Dataset<Row> df = spark.createDataFrame(rows,
                new StructType().add("features", org.apache.spark.ml.linalg.SQLDataTypes.VectorType()));
        for (long seed = 1; seed <= 4; seed++) {
            GpuKMeansModel m = new GpuKMeans().setK(3).setDistanceMeasure("cosine").setInitMode("random").setSeed(seed)
                    .setTol(0).setMaxIter(40).fit(df);
            double[] shifts = m.summary().maxShiftHistory();
            assertTrue(m.summary().converged() && m.summary().numIter() < 40,
                    "seed " + seed + ": " + m.summary().numIter() + " iterations, last shift " + shifts[shifts.length - 1]);
            assertEquals(0.0, shifts[shifts.length - 1], "the last shift of a converged fit");
        }
    }

    @Test
    void initialCentersAreUsedAndProgressIsReported() {
        double[][] init = {{1, 1}, {9, 9}, {-9, 9}};
        List<Integer> iterations = new ArrayList<>();
        GpuKMeansModel m0 = new GpuKMeans().setK(3).setMaxIter(0).setInitialCenters(init).fit(blobs);
        for (int c = 0; c < 3; c++) {
            assertArrayEquals(init[c], m0.clusterCentersArray()[c], 0.0);
        }
        assertEquals(0, m0.summary().numIter());
        GpuKMeansModel m = new GpuKMeans().setK(3).setInitialCenters(init).setFeaturesCol("vec")
                .setProgress((it, cost, shift) -> iterations.add(it)).fit(blobs);
        assertEquals(m.summary().numIter(), iterations.size());
        assertEquals(1, iterations.get(0));
        // initial centre c lies nearest to blob c, so cluster c ends on blob c's mean
        for (int b = 0; b < 3; b++) {
            assertArrayEquals(KMeansTestData.mean(b, false), m.clusterCentersArray()[b], 1e-9);
        }
    }

    @Test
    void singlePointPredictionAndMLlibModelAgreeWithTransform() {
        GpuKMeansModel m = new GpuKMeans().setK(3).setFeaturesCol("vec").fit(blobs);
        org.apache.spark.mllib.clustering.KMeansModel old = m.toOldMLlib();
        Vector[] vecs = m.clusterCenters();
        assertEquals(3, old.k());
        for (int c = 0; c < 3; c++) {
            assertArrayEquals(m.clusterCentersArray()[c], vecs[c].toArray(), 0.0);
            assertArrayEquals(m.clusterCentersArray()[c], old.clusterCenters()[c].toArray(), 0.0);
        }
        for (Row r : m.transform(blobs).select("vec", "prediction").collectAsList()) {
            Vector v = r.getAs(0);
            assertEquals(r.getInt(1), m.predict(v));
            assertEquals(r.getInt(1), old.predict(org.apache.spark.mllib.linalg.Vectors.dense(v.toArray())));
        }
    }

    /** Porting from MLlib (issue 21): Vector centres, toMLlib/fromMLlib both ways, summary predictions, solver. */
    @Test
    void mllibParityConversionsSummaryPredictionsAndIgnoredParams() {
        GpuKMeansModel m = new GpuKMeans().setK(3).setFeaturesCol("vec").setPredictionCol("c")
                .setDistanceMeasure("cosine").setSolver("block").setMaxBlockSizeInMB(4.0).fit(blobs);
        org.apache.spark.ml.clustering.KMeansModel ml = m.toMLlib();
        assertEquals(m.uid(), ml.uid());
        assertEquals("cosine", ml.getDistanceMeasure());
        assertEquals("vec", ml.getFeaturesCol());
        Vector[] ours = m.clusterCenters();
        Vector[] theirs = ml.clusterCenters();
        assertEquals(ours.length, theirs.length);
        for (int c = 0; c < ours.length; c++) {
            assertArrayEquals(ours[c].toArray(), theirs[c].toArray(), 0.0);
        }
        List<Row> a = m.transform(blobs).select("c").collectAsList();
        List<Row> b = ml.transform(blobs).select("c").collectAsList();
        assertEquals(a, b, "MLlib's model predicts what ours predicts");
        GpuKMeansModel back = GpuKMeansModel.fromMLlib(ml);
        assertEquals("cosine", back.getDistanceMeasure());
        assertEquals("c", back.getPredictionCol());
        assertArrayEquals(m.clusterCentersArray(), back.clusterCentersArray());
        GpuKMeansModel fromOld = GpuKMeansModel.fromOldMLlib(m.toOldMLlib());
        assertArrayEquals(m.clusterCentersArray(), fromOld.clusterCentersArray());
        assertEquals("cosine", fromOld.getDistanceMeasure());

        GpuKMeansSummary s = m.summary();
        assertTrue(s.hasPredictions());
        assertEquals("c", s.predictionCol());
        assertEquals("vec", s.featuresCol());
        assertEquals(blobs.count(), s.predictions().count());
        assertEquals(a, s.cluster().collectAsList(), "the summary's predictions are the model's");
        GpuKMeansModel copy = m.copy(new ParamMap());
        assertSame(s, copy.summary());

        GpuKMeansModel plain = new GpuKMeans().setK(3).setFeaturesCol("vec").fit(blobs);
        assertArrayEquals(plain.clusterCentersArray(),
                new GpuKMeans().setK(3).setFeaturesCol("vec").setSolver("row").fit(blobs).clusterCentersArray(),
                "solver is ignored");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> new GpuKMeans().setSolver("x"));
        assertTrue(e.getMessage().contains("solver"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new GpuKMeans().setMaxBlockSizeInMB(-1));
        assertTrue(e.getMessage().contains("maxBlockSizeInMB"), e.getMessage());
        KMeans mllib = new KMeans();
        assertEquals(mllib.getSolver(), new GpuKMeans().getSolver());
        assertEquals(mllib.getMaxBlockSizeInMB(), new GpuKMeans().getMaxBlockSizeInMB());
    }

    @Test
    void modelCopyKeepsCentresAndSummary() {
        GpuKMeansModel m = new GpuKMeans().setK(3).setPredictionCol("c").fit(blobs);
        GpuKMeansModel c = m.copy(new ParamMap().put(m.predictionCol(), "c2"));
        assertEquals("c2", c.getPredictionCol());
        assertEquals("c", m.getPredictionCol());
        assertArrayEquals(m.clusterCentersArray()[1], c.clusterCentersArray()[1], 0.0);
        assertSame(m.summary(), c.summary());
        assertSame(m.parent(), c.parent());
    }

    // ------------------------------------------------------------------ bad input

    @Test
    void kBelowTwoIsRejectedNamingK() {
        GpuKMeans g = new GpuKMeans();
        // the rule's own message (KMeansConfig.checkK), not Spark's generic "given invalid value"
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> g.setK(1));
        assertEquals("k must be >= 2, got 1", e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> g.fit(blobs, new ParamMap().put(g.k(), 0)));
        assertEquals("k must be >= 2, got 0", e.getMessage());
        assertEquals(2, g.getK(), "a refused value must not be stored");
    }

    @Test
    void otherInvalidParamsNameTheParam() {
        GpuKMeans g = new GpuKMeans();
        assertMessage(() -> g.setMaxIter(-1), "maxIter");
        assertMessage(() -> g.setTol(-1), "tol");
        assertMessage(() -> g.setInitSteps(0), "initSteps");
        assertMessage(() -> g.setInitMode("kmeans++"), "initMode");
        assertMessage(() -> g.setDistanceMeasure("manhattan"), "distanceMeasure");
        assertMessage(() -> g.setBackend("tpu"), "backend");
        assertMessage(() -> g.setInitialCenters(new double[][] {{0, Double.NaN}}), "initialCenters");
        assertMessage(() -> g.setInitialCenters(new double[][] {{0, 1}, {2}}), "initialCenters");
    }

    @Test
    void missingFeaturesColumnIsNamed() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GpuKMeans().setFeaturesCol("nope").fit(blobs));
        assertTrue(e.getMessage().contains("featuresCol") && e.getMessage().contains("nope"), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> new GpuKMeans().setFeaturesCol("id").fit(blobs));
        assertTrue(e.getMessage().contains("featuresCol") && e.getMessage().contains("'id'"), e.getMessage());
    }

    @Test
    void existingPredictionColumnIsNamed() {
        Dataset<Row> withPrediction = blobs.withColumn("prediction", functions.lit(0));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> new GpuKMeans().setFeaturesCol("vec").fit(withPrediction));
        assertTrue(e.getMessage().contains("predictionCol") && e.getMessage().contains("'prediction'"), e.getMessage());
        GpuKMeansModel m = new GpuKMeans().setFeaturesCol("vec").setPredictionCol("blob2").fit(blobs);
        e = assertThrows(IllegalArgumentException.class, () -> m.setPredictionCol("blob").transform(blobs));
        assertTrue(e.getMessage().contains("predictionCol") && e.getMessage().contains("'blob'"), e.getMessage());
    }

    @Test
    void badWeightsAndCentresAreNamed() {
        Dataset<Row> named = blobs.withColumn("label", functions.lit("x"));
        assertMessage(() -> new GpuKMeans().setWeightCol("label").fit(named), "weightCol");
        assertMessage(() -> new GpuKMeans().setWeightCol("missing").fit(blobs), "weightCol");
        Dataset<Row> negative = blobs.withColumn("w", functions.lit(-1.0));
        assertMessage(() -> new GpuKMeans().setWeightCol("w").fit(negative), "weightCol");
        Dataset<Row> zero = blobs.withColumn("w", functions.lit(0.0));
        for (String init : new String[] {"random", "k-means||"}) { // it used to "converge" with cost 0
            assertMessage(() -> new GpuKMeans().setK(2).setInitMode(init).setWeightCol("w").fit(zero),
                    "weightCol 'w': every weight is 0");
        }
        assertMessage(() -> new GpuKMeans().setK(2).setInitialCenters(new double[][] {{0, 0}, {1, 1}})
                .setWeightCol("w").fit(zero), "every weight is 0");
        assertMessage(() -> new GpuKMeans().setK(3).setInitialCenters(new double[][] {{0, 0}, {1, 1}}).fit(blobs),
                "initialCenters");
        assertMessage(() -> new GpuKMeans().setK(2).setInitialCenters(new double[][] {{0, 0, 0}, {1, 1, 1}}).fit(blobs),
                "initialCenters");
        assertMessage(() -> new GpuKMeans().setK(100).fit(blobs), "k=100");
    }

    /** Runs {@code r}, expecting an exception (possibly wrapped by Spark) whose message mentions {@code what}. */
    static void assertMessage(org.junit.jupiter.api.function.Executable r, String what) {
        Throwable t = assertThrows(Throwable.class, r);
        StringBuilder all = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            all.append(c.getMessage()).append(" | ");
        }
        assertTrue(all.toString().contains(what), "expected '" + what + "' in: " + all);
        Function<Throwable, Boolean> isIae = x -> {
            for (Throwable c = x; c != null; c = c.getCause()) {
                if (c instanceof IllegalArgumentException) {
                    return true;
                }
            }
            return false;
        };
        assertTrue(isIae.apply(t), "expected an IllegalArgumentException, got " + t);
    }
}
