package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
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
 * {@link GpuTsneModel#transform} on rows whose ids were not fitted (issue 19 item 3): four well-separated Gaussian
 * clusters, fit on 90 %, the held-back 10 % placed into the map land in their cluster (kNN-label accuracy >= 0.95),
 * fitted ids keep their fitted coordinates, the partitioning of the new rows and a save/load round trip change no bit.
 */
class GpuTsneTransformTest {
    static final StructType SCHEMA = new StructType().add("id", DataTypes.LongType, false)
            .add("label", DataTypes.IntegerType, false).add("features", SQLDataTypes.VectorType(), false);

    private static List<Row> clusters(int clusters, int perCluster, int d, long seed) {
        Random rnd = new Random(seed);
        double[][] centre = new double[clusters][d];
        for (int c = 0; c < clusters; c++) {
            for (int a = 0; a < d; a++) {
                centre[c][a] = 8 * rnd.nextGaussian();
            }
        }
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < clusters * perCluster; i++) {
            int c = i % clusters;
            double[] x = new double[d];
            for (int a = 0; a < d; a++) {
                x[a] = centre[c][a] + rnd.nextGaussian();
            }
            rows.add(RowFactory.create((long) i, c, Vectors.dense(x)));
        }
        return rows;
    }

    private static Dataset<Row> frame(List<Row> rows, int partitions) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        return SparkTestSession.get().createDataFrame(jsc.parallelize(rows, partitions), SCHEMA);
    }

    private static Map<Long, double[]> byId(Dataset<Row> out) {
        Map<Long, double[]> m = new HashMap<>();
        for (Row r : out.collectAsList()) {
            m.put(r.getLong(r.fieldIndex("id")), ((Vector) r.getAs("embedding")).toArray());
        }
        return m;
    }

    @Test
    void heldBackRowsLandInTheirClusterAndFittedRowsKeepTheirPlace(@TempDir Path dir) throws Exception {
        SparkSession spark = SparkTestSession.get();
        List<Row> all = clusters(4, 50, 10, 3);
        List<Row> fitRows = new ArrayList<>();
        List<Row> held = new ArrayList<>();
        for (Row r : all) {
            (r.getLong(0) % 10 == 7 ? held : fitRows).add(r);
        }
        GpuTsneModel model = new GpuTsne().setBackend("cpu").setIdCol("id").setPerplexity(10).setMaxIter(300)
                .setQualitySampleSize(0).setSeed(1).fit(frame(fitRows, 2));
        assertTrue(model.hasReference());
        Map<Long, double[]> out = byId(model.transform(frame(all, 3)));
        assertEquals(all.size(), out.size());
        Map<Long, Integer> label = new HashMap<>();
        for (Row r : all) {
            label.put(r.getLong(0), r.getInt(1));
        }
        for (Row r : fitRows) { // fitted ids: exactly their fitted coordinates
            assertArrayEquals(model.embeddingOf(r.getLong(0)), out.get(r.getLong(0)), 0.0);
        }
        int good = 0;
        for (Row r : held) {
            double[] y = out.get(r.getLong(0));
            // the label most common among the 10 nearest fitted points in the map
            List<double[]> near = new ArrayList<>();
            for (Row f : fitRows) {
                double[] yf = model.embeddingOf(f.getLong(0));
                near.add(new double[] {Math.hypot(yf[0] - y[0], yf[1] - y[1]), f.getInt(1)});
            }
            near.sort((a, b) -> Double.compare(a[0], b[0]));
            int[] votes = new int[4];
            for (int m = 0; m < 10; m++) {
                votes[(int) near.get(m)[1]]++;
            }
            int best = 0;
            for (int c = 1; c < 4; c++) {
                best = votes[c] > votes[best] ? c : best;
            }
            good += best == r.getInt(1) ? 1 : 0;
        }
        assertTrue(good >= 0.95 * held.size(), good + " of " + held.size() + " held-back rows in their cluster");
        // new rows depend only on the reference: another partitioning, and a saved and loaded model, the same bits
        Map<Long, double[]> alone = byId(model.transform(frame(held, 1)));
        String path = dir.resolve("m").toString();
        model.write().save(path);
        GpuTsneModel back = GpuTsneModel.load(path);
        assertTrue(back.hasReference());
        Map<Long, double[]> loaded = byId(back.transform(frame(held, 4)));
        for (Row r : held) {
            assertArrayEquals(out.get(r.getLong(0)), alone.get(r.getLong(0)), 0.0);
            assertArrayEquals(out.get(r.getLong(0)), loaded.get(r.getLong(0)), 0.0);
        }
        // the features of new rows must match the fit
        List<Row> wrong = List.of(RowFactory.create(1000L, 0, Vectors.dense(1, 2, 3)));
        Exception e = assertThrows(Exception.class, () -> model.transform(frame(wrong, 1)).collectAsList());
        assertTrue(String.valueOf(rootMessage(e)).contains("featuresCol 'features' has vectors of size 3"),
                rootMessage(e));
        assertEquals("transformLearningRate must be a finite number > 0, got -1.0", assertThrows(
                IllegalArgumentException.class, () -> model.setTransformLearningRate(-1)).getMessage());
        spark.sparkContext().setJobDescription(null);
    }

    private static String rootMessage(Throwable t) {
        while (t.getCause() != null && t.getCause() != t) {
            t = t.getCause();
        }
        return t.getMessage();
    }
}
