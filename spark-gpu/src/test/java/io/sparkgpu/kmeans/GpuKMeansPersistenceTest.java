package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.Pipeline;
import org.apache.spark.ml.PipelineModel;
import org.apache.spark.ml.PipelineStage;
import org.apache.spark.ml.param.Param;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GpuKMeansPersistenceTest {
    private static SparkSession spark;
    private static Dataset<Row> blobs;

    @TempDir
    Path tmp;

    @BeforeAll
    static void start() {
        spark = KMeansTestData.session("GpuKMeansPersistenceTest");
        blobs = KMeansTestData.blobs(spark).cache();
    }

    @AfterAll
    static void stop() {
        KMeansTestData.stop(spark);
    }

    private String dir(String name) {
        return tmp.resolve(name).toString();
    }

    private static Map<Integer, Integer> predictions(Dataset<Row> out, String col) {
        Map<Integer, Integer> m = new HashMap<>();
        for (Row r : out.select("id", col).collectAsList()) {
            m.put(r.getInt(0), r.getInt(1));
        }
        return m;
    }

    @Test
    void modelRoundTripKeepsCentresParamsSummaryAndPredictions() throws IOException {
        GpuKMeansModel model = new GpuKMeans().setK(3).setFeaturesCol("vec").setPredictionCol("cluster")
                .setBackend("cpu").setWeightCol("w").fit(blobs);
        String path = dir("model");
        model.save(path);
        GpuKMeansModel loaded = GpuKMeansModel.load(path);

        assertEquals(model.uid(), loaded.uid());
        double[][] a = model.clusterCentersArray();
        double[][] b = loaded.clusterCentersArray();
        assertEquals(a.length, b.length);
        for (int c = 0; c < a.length; c++) {
            assertArrayEquals(a[c], b[c], 0.0, "centre " + c + " must be bit-identical");
        }
        assertEquals("vec", loaded.getFeaturesCol());
        assertEquals("cluster", loaded.getPredictionCol());
        assertEquals("euclidean", loaded.getDistanceMeasure());
        assertEquals("cpu", loaded.getBackend());
        for (Param<?> p : model.params()) {
            Param<?> q = loaded.getParam(p.name());
            assertEquals(model.isSet(p), loaded.isSet(q), "isSet(" + p.name() + ")");
            assertEquals(model.getOrDefault(p), loaded.getOrDefault(q), p.name());
        }

        assertTrue(loaded.hasSummary());
        GpuKMeansSummary s = model.summary();
        GpuKMeansSummary t = loaded.summary();
        assertEquals(s.k(), t.k());
        assertEquals(s.numPoints(), t.numPoints());
        assertEquals(s.trainingCost(), t.trainingCost());
        assertEquals(s.finalCost(), t.finalCost());
        assertEquals(s.numIter(), t.numIter());
        assertEquals(s.converged(), t.converged());
        assertEquals(s.backend(), t.backend());
        assertArrayEquals(s.clusterSizes(), t.clusterSizes());
        assertArrayEquals(s.costHistory(), t.costHistory());
        assertArrayEquals(s.maxShiftHistory(), t.maxShiftHistory());
        assertTrue(s.hasPredictions());
        assertFalse(t.hasPredictions(), "predictions are not saved");
        assertTrue(assertThrows(IllegalStateException.class, t::predictions).getMessage().contains("transform"));

        Map<Integer, Integer> before = predictions(model.transform(blobs), "cluster");
        Map<Integer, Integer> after = predictions(loaded.transform(blobs), "cluster");
        assertEquals(60, before.size());
        assertEquals(before, after);

        // metadata: one line of JSON in MLlib's layout
        List<String> lines = spark.read().text(path + "/metadata").as(org.apache.spark.sql.Encoders.STRING())
                .collectAsList();
        assertEquals(1, lines.size());
        JsonNode md = new ObjectMapper().readTree(lines.get(0));
        assertEquals(GpuKMeansModel.class.getName(), md.get("class").asText());
        assertEquals(model.uid(), md.get("uid").asText());
        assertEquals(spark.version(), md.get("sparkVersion").asText());
        assertTrue(md.get("timestamp").asLong() > 0);
        assertEquals("cluster", md.get("paramMap").get("predictionCol").asText());
        assertFalse(md.get("paramMap").has("distanceMeasure"), "defaults belong to defaultParamMap");
        assertEquals("euclidean", md.get("defaultParamMap").get("distanceMeasure").asText());
        assertEquals(3, md.get("k").asInt());
        assertEquals(2, md.get("numFeatures").asInt());
    }

    @Test
    void cosineModelWithArrayFeaturesPredictsIdenticallyAfterLoad() throws IOException {
        GpuKMeansModel model = new GpuKMeans().setK(3).setDistanceMeasure("cosine").setSeed(5L).fit(blobs);
        String path = dir("cosine");
        model.write().save(path);
        GpuKMeansModel loaded = GpuKMeansModel.read().session(spark).load(path);
        assertEquals("cosine", loaded.getDistanceMeasure());
        assertEquals(predictions(model.transform(blobs), "prediction"),
                predictions(loaded.transform(blobs), "prediction"));
    }

    @Test
    void saveRefusesExistingPathUnlessOverwrite() throws IOException {
        String path = dir("overwrite");
        GpuKMeansModel first = new GpuKMeansModel("m1", new double[][] {{0, 0}, {10, 10}});
        GpuKMeansModel second = new GpuKMeansModel("m2", new double[][] {{10, 10}, {0, 0}, {5, 5}});
        first.save(path);
        assertThrows(IOException.class, () -> second.save(path));
        assertEquals("m1", GpuKMeansModel.load(path).uid());
        second.write().overwrite().save(path);
        GpuKMeansModel loaded = GpuKMeansModel.load(path);
        assertEquals("m2", loaded.uid());
        assertEquals(3, loaded.getK());
        assertArrayEquals(new double[] {5, 5}, loaded.clusterCentersArray()[2], 0.0);
    }

    @Test
    void modelWithoutSummaryLoadsWithoutSummary() throws IOException {
        String path = dir("nosummary");
        new GpuKMeansModel("bare", new double[][] {{1, 2}, {3, 4}}).setPredictionCol("p").save(path);
        GpuKMeansModel loaded = GpuKMeansModel.load(path);
        assertFalse(loaded.hasSummary());
        IllegalStateException e = assertThrows(IllegalStateException.class, loaded::summary);
        assertTrue(e.getMessage().contains("summary"), e.getMessage());
        assertEquals("p", loaded.getPredictionCol());
    }

    @Test
    void loadingTheWrongClassFailsClearly() throws IOException {
        String path = dir("estimator-not-model");
        new GpuKMeans().save(path);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuKMeansModel.load(path));
        assertTrue(e.getMessage().contains(GpuKMeans.class.getName()), e.getMessage());
        e = assertThrows(IllegalArgumentException.class, () -> GpuKMeansModel.load(dir("nothing-here")));
        assertTrue(e.getMessage().contains("metadata"), e.getMessage());
    }

    @Test
    void estimatorRoundTripKeepsEveryParam() throws IOException {
        double[][] init = {{1, 1}, {9, 9}, {-9, 9}};
        GpuKMeans est = new GpuKMeans().setK(3).setMaxIter(7).setTol(1e-6).setSeed(11L).setInitMode("random")
                .setInitSteps(3).setDistanceMeasure("euclidean").setWeightCol("w").setFeaturesCol("vec")
                .setPredictionCol("p").setBackend("cpu").setInitialCenters(init);
        String path = dir("estimator");
        est.save(path);
        GpuKMeans loaded = GpuKMeans.load(path);
        assertEquals(est.uid(), loaded.uid());
        for (Param<?> p : est.params()) {
            Param<?> q = loaded.getParam(p.name());
            assertEquals(est.isSet(p), loaded.isSet(q), "isSet(" + p.name() + ")");
            assertEquals(est.isDefined(p), loaded.isDefined(q), "isDefined(" + p.name() + ")");
        }
        assertEquals(3, loaded.getK());
        assertEquals(7, loaded.getMaxIter());
        assertEquals(1e-6, loaded.getTol());
        assertEquals(11L, loaded.getSeed());
        assertEquals("random", loaded.getInitMode());
        assertEquals(3, loaded.getInitSteps());
        assertEquals("w", loaded.getWeightCol());
        assertEquals("vec", loaded.getFeaturesCol());
        assertEquals("p", loaded.getPredictionCol());
        assertEquals("cpu", loaded.getBackend());
        double[][] back = loaded.getInitialCenters();
        for (int c = 0; c < init.length; c++) {
            assertArrayEquals(init[c], back[c], 0.0);
        }
        // same params, same model
        assertArrayEquals(est.fit(blobs).clusterCentersArray()[2], loaded.fit(blobs).clusterCentersArray()[2], 0.0);

        // an estimator with defaults only keeps them as defaults
        String path2 = dir("estimator-defaults");
        GpuKMeans plain = new GpuKMeans().setK(4);
        plain.save(path2);
        GpuKMeans plainLoaded = GpuKMeans.load(path2);
        assertTrue(plainLoaded.isSet(plainLoaded.k()));
        assertFalse(plainLoaded.isSet(plainLoaded.maxIter()));
        assertEquals(plain.getSeed(), plainLoaded.getSeed());
        assertFalse(plainLoaded.isDefined(plainLoaded.weightCol()));
        assertFalse(plainLoaded.isDefined(plainLoaded.initialCenters()));
    }

    @Test
    void worksAsAStageOfASavedPipeline() throws IOException {
        Pipeline pipeline = new Pipeline().setStages(new PipelineStage[] {
            new GpuKMeans().setK(3).setFeaturesCol("vec").setPredictionCol("cluster")});
        PipelineModel fitted = pipeline.fit(blobs);
        String path = dir("pipeline");
        fitted.save(path);
        PipelineModel loaded = PipelineModel.load(path);
        assertTrue(loaded.stages()[0] instanceof GpuKMeansModel);
        assertEquals(predictions(fitted.transform(blobs), "cluster"), predictions(loaded.transform(blobs), "cluster"));

        String epath = dir("pipeline-estimator");
        pipeline.save(epath);
        Pipeline p2 = Pipeline.load(epath);
        GpuKMeans stage = (GpuKMeans) p2.getStages()[0];
        assertEquals(3, stage.getK());
        assertNotEquals("prediction", stage.getPredictionCol());
    }
}
