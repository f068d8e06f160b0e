package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.affinity.JointProbabilities;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.optimize.TsneOptimizer;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The whole t-SNE pipeline on the GPU against the CPU twins, bit for bit: the optimiser in 1-, 2- and 3-D on the
 * real affinities, and the estimator in single-device and distributed mode (local[2]), with a separation check.
 */
@Tag("gpu")
class GpuTsneGpuTest {

    private static TsneResult run(TsneTestData data, int dim, Backend b, TsneGridOptions grid) {
        TsneConfig cfg = new TsneConfig();
        cfg.dimension = dim;
        cfg.perplexity = 20;
        cfg.maxIter = 300;
        cfg.exaggerationIterations = 150;
        cfg.backend = b;
        cfg.grid = grid;
        cfg.validate(data.n);
        KnnGraph g = TsneAffinities.knn(data.floats(), data.n, data.d, cfg.effectiveK(data.n), b);
        SparseRows p = JointProbabilities.symmetrize(g, TsneAffinities.conditional(g, cfg.perplexity, b));
        return TsneOptimizer.optimize(p, TsneInit.random(data.n, dim, 9), cfg, null);
    }

    @Test
    void optimiserOnTheGpuGivesTheCpuBits() {
        GpuTestSupport.deviceOrSkip();
        TsneTestData data = TsneTestData.clusters(5, 400, 12, 21);
        for (int dim = 1; dim <= 3; dim++) {
            // capped grids keep the CPU twin's convolution affordable (the GPU does not care)
            TsneGridOptions grid = new TsneGridOptions(4, 2.0, 8, new int[] {0, 2000, 60, 8});
            TsneResult gpu = run(data, dim, Backend.GPU, grid);
            TsneResult cpu = run(data, dim, Backend.CPU, grid);
            assertArrayEquals(cpu.embedding, gpu.embedding, "dim " + dim);
            assertArrayEquals(cpu.klValues, gpu.klValues, "dim " + dim);
            double acc = TsneQuality.knnLabelAccuracy(gpu.embedding, dim, data.labels, 10);
            System.err.printf("[tsne] GPU dim %d: KL %.4f, kNN-label accuracy %.4f, timings %s%n", dim, gpu.finalKl(),
                    acc, gpu.timings);
            if (dim > 1) {
                assertTrue(acc >= 0.95, "dim " + dim + ": accuracy " + acc);
            }
        }
    }

    @Test
    void estimatorOnTheGpuGivesTheCpuBitsInBothModes() {
        GpuTestSupport.deviceOrSkip();
        TsneTestData data = TsneTestData.clusters(4, 150, 8, 22);
        StructType schema = new StructType().add("features", SQLDataTypes.VectorType(), false);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < data.n; i++) {
            double[] v = new double[data.d];
            System.arraycopy(data.x, i * data.d, v, 0, data.d);
            rows.add(RowFactory.create(Vectors.dense(v)));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        Dataset<Row> df = SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 3), schema);
        GpuTsne e = new GpuTsne().setPerplexity(15).setMaxIter(200).setExaggerationIterations(100).setSeed(4)
                .setLearningRate(50).setGridMaxIntervals(60);
        double[] ref = e.copy(ParamMap.empty()).setBackend("cpu").setMode("single").fit(df).embeddingArray();
        for (String mode : new String[] {"single", "distributed"}) {
            GpuTsneModel m = e.copy(ParamMap.empty()).setBackend("gpu").setMode(mode).fit(df);
            assertEquals(mode, m.summary().mode());
            assertArrayEquals(ref, m.embeddingArray(), mode);
        }
        assertTrue(TsneQuality.knnLabelAccuracy(ref, 2, data.labels, 10) >= 0.95);
    }

    /**
     * Distributed mode in one barrier stage on the GPU (1 task: the device-resident loop on the joined slices; 2
     * tasks on the one device: each the device-resident loop on its rows, rows copied peer to peer) and the
     * per-iteration path give the CPU twin's bits.
     */
    @Test
    void oneBarrierStageOnTheGpuGivesTheCpuBits() throws Exception {
        GpuTestSupport.deviceOrSkip();
        TsneTestData data = TsneTestData.clusters(3, 100, 8, 23);
        StructType schema = new StructType().add("features", SQLDataTypes.VectorType(), false);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < data.n; i++) {
            double[] v = new double[data.d];
            System.arraycopy(data.x, i * data.d, v, 0, data.d);
            rows.add(RowFactory.create(Vectors.dense(v)));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        Dataset<Row> df = SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 3), schema);
        GpuTsne e = new GpuTsne().setPerplexity(15).setMaxIter(60).setExaggerationIterations(30).setSeed(5)
                .setLearningRate(50).setGridMaxIntervals(60).setKlEvery(20).setInit("random").setQualitySampleSize(0);
        GpuTsneModel cpu = e.copy(ParamMap.empty()).setBackend("cpu").setMode("single").fit(df);
        GpuTsne gpu = e.copy(ParamMap.empty()).setBackend("gpu").setMode("distributed");
        GpuTsneModel[] m = new GpuTsneModel[3];
        String[][] settings = {{null, "1"}, {null, "2"}, {"false", null}};
        for (int r = 0; r < 3; r++) {
            final int at = r;
            List<String> jobs = GpuTsneSparkTest.jobsOf(settings[r][0], settings[r][1], () -> m[at] = gpu.fit(df));
            boolean stage = jobs.stream().anyMatch(j -> j.contains("one barrier stage"));
            assertEquals(settings[r][0] == null, stage, String.join("\n", jobs));
            assertArrayEquals(cpu.embeddingArray(), m[r].embeddingArray(), "GPU run " + r);
            assertArrayEquals(cpu.summary().klHistory(), m[r].summary().klHistory(), "GPU run " + r);
            System.err.printf("[tsne] GPU distributed %s: timings %s%n", String.join("/", String.valueOf(settings[r][0]),
                    String.valueOf(settings[r][1])), m[r].summary().timings());
        }
    }
}
