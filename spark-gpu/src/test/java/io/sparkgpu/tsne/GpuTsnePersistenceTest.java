package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Estimator and model persistence, the embedding DataFrame and transform, without running t-SNE. */
class GpuTsnePersistenceTest {

    private static GpuTsneModel model() {
        GpuTsneModel m = new GpuTsneModel("gputsne_test", new Object[] {"x", "y", "z", "w"}, DataTypes.StringType,
                new double[] {0.5, -1, 2, 3, -4, 5.25, 6, 7}, 2);
        m.setIdCol("name");
        m.setSummary(new GpuTsneSummary(4, 2, 100, new int[] {50, 100, 100}, new double[] {1.5, 0.75, 0.7}, 0.9, 0.8,
                4, 1, "single", "cpu", "features", 200, Map.of("knn", 0.25, "total", 1.0)));
        return m;
    }

    @Test
    void modelRoundTrip(@TempDir Path dir) throws Exception {
        SparkSession spark = SparkTestSession.get();
        GpuTsneModel m = model();
        String path = dir.resolve("m").toString();
        m.write().save(path);
        GpuTsneModel back = GpuTsneModel.load(path);
        assertEquals(m.uid(), back.uid());
        assertEquals("name", back.getIdCol());
        assertEquals(DataTypes.StringType, back.idType());
        assertArrayEquals(m.embeddingArray(), back.embeddingArray());
        assertArrayEquals(m.ids(), back.ids());
        assertEquals(m.summary(), back.summary());
        assertEquals(0.7, back.summary().finalKl());
        List<Row> emb = back.embedding(spark).collectAsList();
        assertEquals(4, emb.size());
        assertEquals("z", emb.get(2).getString(0));
        assertArrayEquals(new double[] {-4, 5.25}, ((Vector) emb.get(2).get(1)).toArray());
    }

    @Test
    void transformJoinsFittedIdsAndRejectsOthers() {
        SparkSession spark = SparkTestSession.get();
        GpuTsneModel m = model();
        Dataset<Row> df = spark.sql("SELECT * FROM VALUES ('w', 1), ('x', 2) AS t(name, label)");
        List<Row> out = m.transform(df).orderBy("label").collectAsList();
        assertEquals(2, out.size());
        assertArrayEquals(new double[] {6, 7}, ((Vector) out.get(0).getAs("embedding")).toArray());
        assertArrayEquals(new double[] {0.5, -1}, ((Vector) out.get(1).getAs("embedding")).toArray());
        Dataset<Row> bad = spark.sql("SELECT * FROM VALUES ('x', 1), ('nope', 2) AS t(name, label)");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> m.transform(bad));
        assertTrue(e.getMessage().contains("nope") && e.getMessage().contains("idCol 'name'"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> m.transform(spark.range(3).toDF("other")));
        assertThrows(IllegalArgumentException.class, () -> m.transform(df.withColumnRenamed("label", "embedding")));
    }

    @Test
    void estimatorParamsRoundTripAndValidate(@TempDir Path dir) throws Exception {
        SparkTestSession.get();
        GpuTsne e = new GpuTsne().setDimension(3).setPerplexity(12).setMaxIter(77).setInit("random").setSeed(5)
                .setIdCol("name").setMode("distributed").setBackend("CPU").setLearningRate(200).setPcaDimension(8);
        String path = dir.resolve("e").toString();
        e.write().save(path);
        GpuTsne back = GpuTsne.load(path);
        assertEquals(3, back.getDimension());
        assertEquals(12.0, back.getPerplexity());
        assertEquals(77, back.getMaxIter());
        assertEquals("random", back.getInit());
        assertEquals(5L, back.getSeed());
        assertEquals("name", back.getIdCol());
        assertEquals("distributed", back.getMode());
        assertEquals("cpu", back.getBackend());
        assertEquals(8, back.getPcaDimension());
        TsneConfig c = back.toConfig();
        assertEquals(3, c.dimension);
        assertEquals(200, c.learningRate);
        assertFalse(back.graphMode());
        assertThrows(IllegalArgumentException.class, () -> new GpuTsne().setDimension(4));
        assertThrows(IllegalArgumentException.class, () -> new GpuTsne().setInit("spectral"));
        assertThrows(IllegalArgumentException.class, () -> new GpuTsne().setBackend("tpu"));
        GpuTsne copy = e.copy(new org.apache.spark.ml.param.ParamMap());
        assertEquals(77, copy.getMaxIter());
    }
}
