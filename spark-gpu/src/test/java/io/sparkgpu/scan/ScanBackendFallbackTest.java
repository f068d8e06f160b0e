package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.BackendFaults;
import io.sparkgpu.cuda.CudaException;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The backend policy for the scan statistic, on any machine: a device failure injected into the scans or the
 * replicas under {@code auto} gives exactly the CPU twin's clusters, LLRs and p-values and reports the CPU per
 * phase; under {@code gpu} it is an error naming the phase.
 */
class ScanBackendFallbackTest {

    private static ScanTables tables() {
        return ScanTables.of(ScanTestData.grid(ScanModel.POISSON, new ScanShape(12, 9), 31));
    }

    private static void assertSameResult(ScanResult ref, ScanResult r) {
        assertEquals(ref.clusters().size(), r.clusters().size());
        for (int i = 0; i < ref.clusters().size(); i++) {
            ScanCluster a = ref.clusters().get(i);
            ScanCluster b = r.clusters().get(i);
            assertEquals(a.index(), b.index());
            assertEquals(Double.doubleToLongBits(a.llr()), Double.doubleToLongBits(b.llr()));
            assertEquals(Double.doubleToLongBits(a.pValue()), Double.doubleToLongBits(b.pValue()));
        }
        assertArrayEquals(ref.replicaLlrs(), r.replicaLlrs(), "replica bits");
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void localScanUnderAutoHasTheCpuBitsAndSaysCpuPerPhase(String kind) {
        ScanTables t = tables();
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        ScanResult ref = LocalScan.run(t, spec, 3, 19, 7, Backend.CPU, 2);
        // on a GPU host the other phase runs on it
        String overall = BackendChooser.gpuUsable(ScanGpu.MODULE, ScanGpu.PROBE_KERNEL) ? "mixed" : "cpu";
        for (String phase : List.of(ScanStep.SCAN, ScanStep.REPLICAS)) {
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                ScanResult r = LocalScan.run(t, spec, 3, 19, 7, Backend.AUTO, 2);
                assertTrue(f.fired() > 0, phase);
                assertSameResult(ref, r);
                assertEquals(overall, r.backend(), phase);
                String where = r.phaseBackends().get(phase.equals(ScanStep.SCAN) ? ScanResult.SCAN : ScanResult.REPLICAS);
                assertTrue(where.startsWith("cpu on the driver"), phase + ": " + r.phaseBackends());
            }
        }
    }

    @Test
    void stepsReportTheFallback() {
        ScanTables t = tables();
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        try (BackendFaults f = BackendFaults.fakeDevice("scan")) { // the module: both phases
            BackendChooser.Ran<ScanBest> b = ScanStep.best(Backend.AUTO, t, spec, 0, t.shape().ranges());
            assertEquals(ScanCpu.scan(t, spec, 0, t.shape().ranges()), b.value);
            assertEquals("cpu", b.backend());
            assertEquals(0.0, b.gpuSeconds());
            assertTrue(b.fallbackReason().contains(ScanStep.SCAN), b.fallbackReason());
            BackendChooser.Ran<double[]> m = ScanStep.replicaMaxima(Backend.AUTO, t, spec, 3, 0, 5, null);
            assertArrayEquals(ScanCpu.replicaMaxima(t, spec, 3, 0, 5, null), m.value);
            assertTrue(m.fallbackReason().contains(ScanStep.REPLICAS), m.fallbackReason());
            assertEquals(2, f.fired());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"unusable", "mid-call", "fake-device"})
    void gpuBackendFailsNamingThePhase(String kind) {
        ScanTables t = tables();
        ScanSpec spec = ScanSpec.all(ScanDirection.HIGH);
        for (String phase : List.of(ScanStep.SCAN, ScanStep.REPLICAS)) {
            try (BackendFaults f = BackendFaults.of(kind, phase)) {
                CudaException e = assertThrows(CudaException.class, () -> {
                    if (phase.equals(ScanStep.SCAN)) {
                        ScanStep.best(Backend.GPU, t, spec, 0, t.shape().ranges());
                    } else {
                        ScanStep.replicaMaxima(Backend.GPU, t, spec, 3, 0, 5, null);
                    }
                });
                assertTrue(e.getMessage().contains(phase) && e.getMessage().contains("injected"), e.getMessage());
                assertEquals(1, f.fired());
            }
        }
        try (BackendFaults f = BackendFaults.of(kind, "scan")) {
            CudaException e = assertThrows(CudaException.class, () -> LocalScan.run(t, spec, 3, 19, 7, Backend.GPU, 1));
            assertTrue(e.getMessage().contains(ScanStep.SCAN) && e.getMessage().contains("injected"), e.getMessage());
        }
    }

    @Test
    void sparkTasksUnderAutoEqualTheCpuFitAndUnderGpuFail() {
        Dataset<Row> df = GpuScanStatisticTest.cells(SparkTestSession.get(), 6).cache();
        try {
            GpuScanStatistic est = GpuScanStatisticTest.estimator().setNumPartitions(2); // cpu
            GpuScanModel ref = ScanTrainerPathsTest.with(() -> est.fit(df), ScanTrainer.LOCAL_WORK, "0");
            try (BackendFaults f = BackendFaults.midCall(ScanStep.REPLICAS)) {
                GpuScanModel auto = ScanTrainerPathsTest.with(() -> est.copy(new org.apache.spark.ml.param.ParamMap())
                        .setBackend("auto").fit(df), ScanTrainer.LOCAL_WORK, "0");
                assertTrue(f.fired() > 0);
                ScanTrainerPathsTest.assertSameBits(ref, auto, "auto with failing replicas");
                assertEquals("cpu in 2 tasks", auto.phaseBackends().get(ScanResult.REPLICAS));
            }
            try (BackendFaults f = BackendFaults.midCall("scan")) {
                CudaException e = assertThrows(CudaException.class, () -> ScanTrainerPathsTest.with(
                        () -> est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("gpu").fit(df),
                        ScanTrainer.LOCAL_WORK, "0"));
                assertTrue(e.getMessage().contains(ScanStep.SCAN + " failed") && e.getMessage().contains("injected"),
                        e.getMessage());
            }
        } finally {
            df.unpersist();
        }
    }
}
