package io.sparkgpu.tsne;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.BackendUsage;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.testutil.SparkTestSession;
import io.sparkgpu.tsne.affinity.JointProbabilities;
import io.sparkgpu.tsne.affinity.KnnGraph;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.affinity.TsneAffinities;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.optimize.AttractiveForces;
import io.sparkgpu.tsne.optimize.TsneOptimizer;
import io.sparkgpu.tsne.repulsion.ExactRepulsion;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import io.sparkgpu.tsne.repulsion.InterpGrid;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The backend policy in every phase of t-SNE, on any machine. Under {@code auto}, a device failure injected into any
 * one phase (kNN, calibration, attractive term, S2G, G2G, G2S, exact repulsion, the device-resident optimiser) gives
 * exactly the bits of an all-CPU fit, and the run's {@link TsneTimings#backends()} says the phase ran on the CPU and why; under
 * {@code gpu} the phase fails with a {@link CudaException} naming it. On a GPU host the other phases run on the GPU
 * ("mixed"), and faults in the force phases strike inside the device-resident iteration.
 */
class TsneBackendFallbackTest {
    /** Every phase with a GPU twin (the exact repulsion last: the runs of the others take the grid). */
    static final List<String> PHASES = List.of(TsneAffinities.KNN_PHASE, TsneAffinities.AFFINITIES_PHASE,
            AttractiveForces.ATTRACTIVE_PHASE, GridRepulsion.S2G_PHASE, GridConvolution.PHASE, GridRepulsion.G2S_PHASE,
            TsneOptimizer.PHASE, ExactRepulsion.PHASE);

    private static final TsneTestData DATA = TsneTestData.clusters(3, 30, 6, 4);

    /** The grid repulsion (its phases are those under test), or the exact one for {@link ExactRepulsion#PHASE}. */
    private static TsneConfig cfg(Backend backend) {
        return cfg(backend, TsneConfig.REPULSION_GRID);
    }

    private static String repulsionOf(String phase) {
        return phase.equals(ExactRepulsion.PHASE) ? TsneConfig.REPULSION_EXACT : TsneConfig.REPULSION_GRID;
    }

    private static TsneConfig cfg(Backend backend, String repulsion) {
        TsneConfig c = new TsneConfig();
        c.repulsion = repulsion;
        c.perplexity = 8;
        c.maxIter = 30;
        c.exaggerationIterations = 10;
        c.klEvery = 10;
        c.init = TsneConfig.INIT_RANDOM;
        c.learningRate = 40;
        c.grid = new TsneGridOptions(4, 2.0, 10, new int[] {0, 200, 40, 10});
        c.backend = backend;
        return c;
    }

    /** The single-device pipeline: affinities, then the optimiser; P, result and where each phase ran. */
    private static final class Run {
        final SparseRows p;
        final TsneResult r;
        final BackendUsage usage;

        Run(SparseRows p, TsneResult r, BackendUsage usage) {
            this.p = p;
            this.r = r;
            this.usage = usage;
        }
    }

    private static Run run(Backend backend) {
        return run(backend, TsneConfig.REPULSION_GRID);
    }

    private static Run run(Backend backend, String repulsion) {
        TsneConfig c = cfg(backend, repulsion);
        TsneTimings t = new TsneTimings();
        SparseRows p = TsneTrainer.affinities(DATA.floats(), DATA.n, DATA.d, c, t, "features");
        TsneResult r = TsneOptimizer.single(p, TsneInit.random(DATA.n, 2, 7), c, null, t);
        assertTrue(r.timings == t);
        return new Run(p, r, t.backends());
    }

    private static void assertSameBits(Run ref, Run got, String what) {
        assertArrayEquals(ref.p.rowPtr, got.p.rowPtr, what + ": P rows");
        assertArrayEquals(ref.p.col, got.p.col, what + ": P columns");
        assertArrayEquals(ref.p.val, got.p.val, what + ": P bits");
        assertArrayEquals(ref.r.embedding, got.r.embedding, what + ": embedding bits");
        assertArrayEquals(ref.r.klValues, got.r.klValues, what + ": KL bits");
    }

    /** Some fallback reason names the phase and the injected fault (the fault struck where the phase runs). */
    private static void assertFellBack(BackendUsage u, String phase, String what) {
        boolean named = false;
        for (String why : u.fallbackReasons().values()) {
            named |= why.contains(phase) && why.contains("injected");
        }
        assertTrue(named, what + ": " + u);
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void aFaultInAnyPhaseUnderAutoGivesTheCpuBits(String kind) {
        Map<String, Run> refs = new java.util.HashMap<>();
        for (String phase : PHASES) {
            Run ref = refs.computeIfAbsent(repulsionOf(phase), r -> run(Backend.CPU, r));
            assertEquals("cpu", ref.usage.backend());
            assertTrue(ref.usage.fallbackReasons().isEmpty(), "cpu asked for: " + ref.usage);
            String what = kind + " fault in " + phase;
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                Run got = run(Backend.AUTO, repulsionOf(phase));
                assertTrue(f.fired() > 0, what + ": the fault struck");
                assertSameBits(ref, got, what);
                assertNotEquals("gpu", got.usage.backend(), what);
                assertTrue(got.usage.backend().equals("cpu") || got.usage.backend().equals("mixed"), what);
                assertEquals("cpu", got.usage.backend(phase) != null ? got.usage.backend(phase)
                        : got.usage.backend(TsneOptimizer.PHASE), what + ": " + got.usage);
                assertFellBack(got.usage, phase, what);
            }
        }
    }

    @Test
    void aLateFaultInTheLoopStillGivesTheCpuBits() {
        Map<String, Run> refs = new java.util.HashMap<>();
        // a GPU host fails the device-resident run at iteration 8 (the CPU rerun starts again from y0); without a GPU
        // the host loop's phase fails from its 8th call on
        for (String phase : List.of(AttractiveForces.ATTRACTIVE_PHASE, GridConvolution.PHASE, GridRepulsion.G2S_PHASE,
                ExactRepulsion.PHASE)) {
            Run ref = refs.computeIfAbsent(repulsionOf(phase), r -> run(Backend.CPU, r));
            try (BackendFaults f = BackendFaults.midCall(phase, 7)) {
                Run got = run(Backend.AUTO, repulsionOf(phase));
                assertTrue(f.fired() > 0, phase);
                assertSameBits(ref, got, "late fault in " + phase);
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void underGpuEachPhaseFailsNamingIt(String kind) {
        TsneConfig c = cfg(Backend.CPU);
        float[] x = DATA.floats();
        int k = c.effectiveK(DATA.n);
        KnnGraph g = TsneAffinities.knn(x, DATA.n, DATA.d, k, Backend.CPU);
        SparseRows p = JointProbabilities.symmetrize(g, TsneAffinities.conditional(g, c.perplexity, Backend.CPU));
        double[] y = TsneInit.random(DATA.n, 2, 7);
        InterpGrid grid = TsneForcesTestData.plan(y, DATA.n, 2, c.grid);
        long[] q = GridRepulsion.s2g(grid, DATA.n, y, DATA.n, Backend.CPU);
        double[] charges = GridRepulsion.chargesToDouble(grid, DATA.n, q);
        double[] phi = GridConvolution.convolve(grid, charges, GridConvolution.Method.AUTO, Backend.CPU);
        Map<String, Supplier<Object>> onGpu = Map.of(
                TsneAffinities.KNN_PHASE, () -> TsneAffinities.knn(x, DATA.n, DATA.d, k, Backend.GPU),
                TsneAffinities.AFFINITIES_PHASE, () -> TsneAffinities.conditional(g, c.perplexity, Backend.GPU),
                AttractiveForces.ATTRACTIVE_PHASE, () -> AttractiveForces.attractive(p, y, 2, Backend.GPU),
                GridRepulsion.S2G_PHASE, () -> GridRepulsion.s2g(grid, DATA.n, y, DATA.n, Backend.GPU),
                GridConvolution.PHASE, () -> GridConvolution.convolve(grid, charges, GridConvolution.Method.AUTO,
                        Backend.GPU),
                GridRepulsion.G2S_PHASE, () -> GridRepulsion.g2s(grid, DATA.n, phi, y, DATA.n, Backend.GPU),
                TsneOptimizer.PHASE, () -> TsneOptimizer.single(p, y, cfg(Backend.GPU), null, new TsneTimings()),
                ExactRepulsion.PHASE, () -> ExactRepulsion.repulsion(y, DATA.n, 2, 3, DATA.n - 3, Backend.GPU, null));
        assertEquals(PHASES.size(), onGpu.size());
        for (String phase : PHASES) {
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                CudaException e = assertThrows(CudaException.class, () -> onGpu.get(phase).get(), phase);
                assertTrue(e.getMessage().contains(phase) && e.getMessage().contains("injected"),
                        phase + ": " + e.getMessage());
                assertEquals(1, f.fired(), phase);
            }
        }
    }

    @Test
    void underGpuAFaultInsideTheDeviceResidentLoopNamesItsPhase() {
        Assumptions.assumeTrue(BackendChooser.gpuUsable("tsne", "tsne_step"),
                "needs a GPU: the device-resident loop");
        Run ref = run(Backend.CPU);
        for (String phase : PHASES.subList(2, PHASES.size())) {
            try (BackendFaults f = BackendFaults.midCall(phase, 5)) {
                CudaException e = assertThrows(CudaException.class, () -> TsneOptimizer.single(ref.p,
                        TsneInit.random(DATA.n, 2, 7), cfg(Backend.GPU, repulsionOf(phase)), null, new TsneTimings()));
                assertTrue(e.getMessage().contains(TsneOptimizer.PHASE) && e.getMessage().contains(phase),
                        e.getMessage());
            }
        }
    }

    // ------------------------------------------------------------------ estimator, every mode

    private static final StructType SCHEMA = new StructType().add("name", DataTypes.StringType, false)
            .add("features", SQLDataTypes.VectorType(), false);

    private static Dataset<Row> frame() {
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < DATA.n; i++) {
            double[] v = new double[DATA.d];
            System.arraycopy(DATA.x, i * DATA.d, v, 0, DATA.d);
            rows.add(RowFactory.create("p" + i, Vectors.dense(v)));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        return SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 2), SCHEMA);
    }

    private static GpuTsne estimator(String backend, String mode) {
        return new GpuTsne().setPerplexity(8).setMaxIter(20).setExaggerationIterations(10).setKlEvery(10).setSeed(3)
                .setInit("random").setLearningRate(40).setGridMinIntervals(10).setGridMaxIntervals(40).setIdCol("name")
                .setQualitySampleSize(0).setBackend(backend).setMode(mode).setRepulsion("grid");
    }

    @Test
    void estimatorInEveryModeUnderAutoEqualsTheCpuFit() {
        Dataset<Row> df = frame().cache();
        String stage = TsneTrainer.DISTRIBUTED_STAGE;
        try {
            GpuTsneModel ref = estimator("cpu", "single").fit(df);
            assertEquals("cpu", ref.summary().backendUsed());
            // single mode; distributed with Spark jobs per iteration; distributed in one barrier stage
            String[][] runs = {{"single", "true"}, {"distributed", "false"}, {"distributed", "true"}};
            for (String[] m : runs) {
                String what = m[0] + (m[0].equals("distributed") ? ", one stage " + m[1] : "");
                try (BackendFaults f = BackendFaults.midCall("tsne")) { // every phase
                    System.setProperty(stage, m[1]);
                    GpuTsneModel got = estimator("auto", m[0]).fit(df);
                    assertTrue(f.fired() > 0, what);
                    assertArrayEquals(ref.embeddingArray(), got.embeddingArray(), what + ": embedding bits");
                    assertArrayEquals(ref.summary().klHistory(), got.summary().klHistory(), what);
                    GpuTsneSummary s = got.summary();
                    assertEquals("auto", s.backend(), "the setting");
                    assertEquals("cpu", s.backendUsed(), what + ": " + s.phaseBackends());
                    for (String phase : PHASES.subList(0, 6)) {
                        assertEquals("cpu", s.phaseBackends().get(phase), what + ": " + phase + " " + s.phaseBackends());
                    }
                } finally {
                    System.clearProperty(stage);
                }
            }
            try (BackendFaults f = BackendFaults.midCall("tsne")) {
                CudaException e = assertThrows(CudaException.class, () -> estimator("gpu", "single").fit(df));
                assertTrue(e.getMessage().contains(TsneAffinities.KNN_PHASE) && e.getMessage().contains("injected"),
                        e.getMessage());
            }
        } finally {
            df.unpersist();
        }
    }
}
