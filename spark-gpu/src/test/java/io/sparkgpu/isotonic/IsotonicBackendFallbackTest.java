package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The backend policy for isotonic regression, on any machine: a device failure injected into the solve under
 * {@code auto} gives exactly the CPU twin's model and reports the CPU; under {@code gpu} it is an error naming the
 * phase.
 */
class IsotonicBackendFallbackTest {
    private static final StructType SCHEMA = new StructType()
            .add("label", DataTypes.DoubleType).add("features", DataTypes.DoubleType).add("w", DataTypes.DoubleType);

    /** Noisy increasing labels on features {0.5 k}, ties and 10% zero weights. */
    private static IsoTestData data(int n, long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] x = new double[n];
        double[] y = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            x[i] = r.nextInt(n / 3) * 0.5;
            y[i] = Math.log1p(x[i]) + r.nextGaussian() * 0.5;
            w[i] = r.nextInt(10) == 0 ? 0.0 : 0.25 + r.nextDouble();
        }
        return new IsoTestData(x, y, w);
    }

    private static IsotonicConfig cfg(Backend backend, IsotonicConfig.Algorithm algorithm) {
        IsotonicConfig c = new IsotonicConfig();
        c.backend = backend;
        c.algorithm = algorithm;
        c.direction = IsotonicConfig.Direction.INCREASING;
        return c;
    }

    private static void assertSameModel(IsotonicResult ref, IsotonicResult r) {
        assertArrayEquals(ref.boundaries, r.boundaries, "boundaries");
        assertArrayEquals(ref.predictions, r.predictions, "prediction bits");
        assertEquals(ref.numRows, r.numRows);
        assertEquals(ref.zeroWeightRows, r.zeroWeightRows);
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void localFitUnderAutoHasTheCpuBits(String kind) {
        IsoTestData d = data(3000, 1);
        double[] cuts = {100, 300};
        for (IsotonicConfig.Algorithm alg : IsotonicConfig.Algorithm.values()) {
            IsotonicResult ref = IsotonicLocal.fit(d.x, d.y, d.w, cfg(Backend.CPU, alg), cuts, IsoColumns.DEFAULT);
            try (BackendFaults f = BackendFaults.of(kind, IsotonicSolver.PHASE)) {
                IsotonicResult r = IsotonicLocal.fit(d.x, d.y, d.w, cfg(Backend.AUTO, alg), cuts, IsoColumns.DEFAULT);
                assertEquals(3, f.fired(), alg + ": one solve per range, each struck");
                assertSameModel(ref, r);
                assertEquals("cpu", r.backend);
            }
        }
    }

    @Test
    void solveReportsTheFallback() {
        IsoTestData d = data(500, 2);
        IsoScales sc = IsoScales.forData(d.y, d.w, d.x.length);
        IsoPoints p = IsoPoints.pool(d.x, d.y, d.w, d.x.length, false, sc, false, IsoColumns.DEFAULT);
        try (BackendFaults f = BackendFaults.fakeDevice(IsotonicSolver.PHASE)) {
            BackendChooser.Ran<L2Blocks> r = IsotonicSolver.solveL2(p, IsotonicConfig.Algorithm.PAVA, Backend.AUTO, 256);
            assertEquals("cpu", r.backend());
            assertTrue(r.fallbackReason().contains(IsotonicSolver.PHASE), r.fallbackReason());
            assertTrue(r.value.sameAs(IsotonicCpu.pava(p)));
            IsotonicSolver.Solved s = IsotonicSolver.solveRows(d.x, d.y, d.w, d.x.length, false, sc,
                    IsoColumns.DEFAULT, cfg(Backend.AUTO, IsotonicConfig.Algorithm.PAVA));
            assertTrue(!s.gpu && s.l2().sameAs(r.value));
            assertEquals(2, f.fired());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void gpuBackendFailsNamingThePhase(String kind) {
        IsoTestData d = data(500, 3);
        IsoScales sc = IsoScales.forData(d.y, d.w, d.x.length);
        for (IsotonicConfig.Algorithm alg : IsotonicConfig.Algorithm.values()) {
            try (BackendFaults f = BackendFaults.of(kind, IsotonicSolver.PHASE)) {
                CudaException e = assertThrows(CudaException.class, () -> IsotonicSolver.solveRows(d.x, d.y, d.w,
                        d.x.length, false, sc, IsoColumns.DEFAULT, cfg(Backend.GPU, alg)));
                assertTrue(e.getMessage().contains(IsotonicSolver.PHASE) && e.getMessage().contains("injected"),
                        alg + ": " + e.getMessage());
                assertEquals(1, f.fired());
            }
        }
        // user errors are not device failures: they propagate as they are, fault or not
        d.y[7] = Double.NaN;
        try (BackendFaults f = BackendFaults.fakeDevice(IsotonicSolver.PHASE)) {
            assertThrows(IllegalArgumentException.class, () -> IsotonicSolver.solveRows(d.x, d.y, d.w, d.x.length,
                    false, sc, IsoColumns.DEFAULT, cfg(Backend.AUTO, IsotonicConfig.Algorithm.PAVA)));
        }
    }

    @Test
    void sparkFitUnderAutoEqualsTheCpuFitAndUnderGpuFails() {
        IsoTestData d = data(4000, 4);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < d.x.length; i++) {
            rows.add(RowFactory.create(d.y[i], d.x[i], d.w[i]));
        }
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        Dataset<Row> df = SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 3), SCHEMA).cache();
        try {
            for (long localRows : new long[] {-1, 0}) { // the driver's small path, the range path
                IsotonicConfig c = cfg(Backend.CPU, IsotonicConfig.Algorithm.PAVA);
                c.localRows = localRows;
                c.numPartitions = 2;
                IsotonicResult ref = IsotonicTrainer.train(df, "features", 0, "label", "w", c);
                try (BackendFaults f = BackendFaults.midCall(IsotonicSolver.PHASE)) {
                    c.backend = Backend.AUTO;
                    IsotonicResult r = IsotonicTrainer.train(df, "features", 0, "label", "w", c);
                    assertTrue(f.fired() > 0, "localRows " + localRows);
                    assertSameModel(ref, r);
                    assertEquals("cpu", r.backend);
                    assertTrue(r.phaseBackends().get("solve").startsWith("cpu"), r.phaseBackends().toString());

                    c.backend = Backend.GPU;
                    // in a task or on the driver: the CudaException itself reaches the caller
                    CudaException e = assertThrows(CudaException.class,
                            () -> IsotonicTrainer.train(df, "features", 0, "label", "w", c));
                    assertTrue(e.getMessage().contains(IsotonicSolver.PHASE) && e.getMessage().contains("injected")
                            && e.getMessage().contains("backend=gpu"), e.getMessage());
                }
            }
        } finally {
            df.unpersist();
        }
    }
}
