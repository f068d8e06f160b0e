package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.common.SparkErrors;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.tsne.GpuTsne;
import io.sparkgpu.tsne.TsneConfig;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.junit.jupiter.api.Test;

/**
 * The t-SNE rules that need the number of points n (n &gt;= 4; k &lt;= n - 1; perplexity &lt; k, so with the default
 * k = min(ceil(3 perplexity), n - 1) perplexity &lt; n - 1) hold the same way on every layer: the estimator's fit,
 * the config at the trainer's entry ({@link TsneConfig#validate(long)}), the distributed affinities
 * ({@link TsneAffinitiesSpark}) and the local ones ({@link TsneAffinities#knn}, {@link TsneAffinities#conditional}).
 * Before, perplexity = k and perplexity in [n - 1, n) passed the front checks and failed in the bandwidth search,
 * and a default k over n - 1 failed where the distributed affinities would have capped it.
 */
class TsneNeighboursTest {
    private static String error(Runnable r) {
        try {
            r.run();
            return null;
        } catch (RuntimeException e) {
            Throwable t = SparkErrors.unwrap(e);
            if (!(t instanceof IllegalArgumentException)) {
                throw e;
            }
            return t.getMessage();
        }
    }

    private static float[] floats(List<Row> rows, int d) {
        float[] x = new float[rows.size() * d];
        for (int i = 0; i < rows.size(); i++) {
            double[] v = ((org.apache.spark.ml.linalg.Vector) rows.get(i).get(0)).toArray();
            for (int a = 0; a < d; a++) {
                x[i * d + a] = (float) v[a];
            }
        }
        return x;
    }

    /** n Gaussian points in 3-D (no ties). */
    private static List<Row> points(int n, long seed) {
        Random r = new Random(seed);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            rows.add(RowFactory.create(Vectors.dense(r.nextGaussian(), r.nextGaussian(), r.nextGaussian())));
        }
        return rows;
    }

    private static void check(int n, double perplexity, int k, String refusal) {
        check(n, perplexity, k, refusal, refusal);
    }

    /**
     * n random points in 3-D; perplexity and k (0: default) accepted ({@code refusal} null) or refused with a message
     * containing {@code refusal} on every layer ({@code localRefusal} for the local affinities, which see k and
     * the perplexity but not the rule on n that chose k).
     */
    private static void check(int n, double perplexity, int k, String refusal, String localRefusal) {
        String what = "n=" + n + ", perplexity=" + perplexity + ", k=" + k;
        List<Row> rows = points(n, n * 31L + k);
        Dataset<Row> df = TsneAffinitiesSparkTest.frame(rows, 2, TsneAffinitiesSparkTest.VEC, false);

        String estimator = error(() -> new GpuTsne().setBackend("cpu").setPerplexity(perplexity).setK(k).setMaxIter(2)
                .setExaggerationIterations(1).setQualitySampleSize(0).setInit("random").setGridMaxIntervals(20)
                .fit(df));
        String config = error(() -> {
            TsneConfig c = new TsneConfig();
            c.perplexity = perplexity;
            c.k = k;
            c.validate(n);
        });
        String distributed = error(() -> TsneAffinitiesSpark.fromVectors(df, "features", perplexity, k, Backend.CPU,
                1 << 20).unpersist());
        String local = error(() -> {
            int kk = k > 0 ? k : TsneConfig.defaultK(perplexity, n);
            KnnGraph g = TsneAffinities.knn(floats(rows, 3), n, 3, kk, Backend.CPU);
            TsneAffinities.conditional(g, perplexity, Backend.CPU);
        });
        String[] layers = {estimator, config, distributed, local};
        String[] names = {"estimator", "config", "distributed affinities", "local affinities"};
        for (int i = 0; i < layers.length; i++) {
            String expected = i == 3 ? localRefusal : refusal;
            if (expected == null) {
                assertEquals(null, layers[i], what + " is accepted by the " + names[i]);
            } else {
                assertTrue(layers[i] != null && layers[i].contains(expected), what + " is refused by the " + names[i]
                        + " with '" + expected + "', got: " + layers[i]);
            }
        }
    }

    @Test
    void perplexityBelowTheDefaultNeighbours() {
        // n = 10: the default k is min(ceil(3 perplexity), 9) = 9, which the perplexity must stay below
        check(10, 8.9, 0, null);
        check(10, 9.0, 0, "perplexity=9.0 must be < n - 1 = 9", "k=9 must be > perplexity=9.0");
    }

    @Test
    void explicitNeighboursAtMostNMinusOneAndAbovePerplexity() {
        check(10, 5, 9, null);
        check(10, 5, 10, "k=10 must be in 1..n - 1 = 9");
        check(10, 5, 6, null);
        check(10, 5, 5, "k=5 must be > perplexity=5.0");
    }

    @Test
    void perplexityAboveOneAndFourPoints() {
        check(4, 2, 0, null);
        check(10, 1.0, 3, "perplexity must be a finite number > 1, got 1.0");
        check(10, Math.nextUp(1.0), 3, null);
    }

    @Test
    void atLeastFourPoints() {
        String what = "at least 4 points";
        List<Row> rows = points(3, 3);
        Dataset<Row> df = TsneAffinitiesSparkTest.frame(rows, 1, TsneAffinitiesSparkTest.VEC, false);
        String estimator = error(() -> new GpuTsne().setBackend("cpu").setPerplexity(1.5).setMaxIter(1).fit(df));
        String config = error(() -> {
            TsneConfig c = new TsneConfig();
            c.perplexity = 1.5;
            c.validate(3);
        });
        String distributed = error(() -> TsneAffinitiesSpark.fromVectors(df, "features", 1.5, 0, Backend.CPU, 1 << 20));
        for (String m : new String[] {estimator, config, distributed}) {
            assertTrue(m != null && m.contains(what), m);
        }
    }
}
