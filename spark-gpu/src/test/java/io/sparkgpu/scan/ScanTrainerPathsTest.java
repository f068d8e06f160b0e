package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spark.GpuTasks;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;
import org.apache.spark.SparkContext;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Test;

/**
 * Where the estimator scans (local[2]): on the driver for small work, else in Spark tasks (one, several, one per
 * GPU by default with a GPU backend) - every path gives the same clusters, LLRs and p-values bit for bit; the
 * driver-path setting is read and checked; the fit's timings have their phases.
 */
class ScanTrainerPathsTest {
    static final List<String> PHASES = List.of(ScanResult.INPUT, ScanResult.SCAN, ScanResult.SECONDARY,
            ScanResult.REPLICAS, ScanResult.RESULT, ScanResult.GPU_CALLS, ScanResult.TOTAL);

    /** Runs {@code fit} with system properties set (key, value, key, value, ...), cleared afterwards. */
    static <T> T with(Supplier<T> fit, String... kv) {
        for (int i = 0; i < kv.length; i += 2) {
            System.setProperty(kv[i], kv[i + 1]);
        }
        try {
            return fit.get();
        } finally {
            for (int i = 0; i < kv.length; i += 2) {
                System.clearProperty(kv[i]);
            }
        }
    }

    /** Same clusters (box, index, LLR and p-value bits) and replica maxima. */
    static void assertSameBits(GpuScanModel ref, GpuScanModel m, String what) {
        assertEquals(ref.clusters().size(), m.clusters().size(), what);
        for (int i = 0; i < ref.clusters().size(); i++) {
            ScanCluster a = ref.clusters().get(i);
            ScanCluster b = m.clusters().get(i);
            assertEquals(a.index(), b.index(), what + ": cluster " + i);
            assertArrayEquals(a.box(), b.box(), what + ": cluster " + i);
            assertEquals(Double.doubleToLongBits(a.llr()), Double.doubleToLongBits(b.llr()), what + ": LLR " + i);
            assertEquals(Double.doubleToLongBits(a.pValue()), Double.doubleToLongBits(b.pValue()), what + ": p " + i);
        }
        double[] ra = ref.replicaLlrs();
        double[] rb = m.replicaLlrs();
        assertEquals(ra.length, rb.length, what);
        for (int r = 0; r < ra.length; r++) {
            assertEquals(Double.doubleToLongBits(ra[r]), Double.doubleToLongBits(rb[r]), what + ": replica " + r);
        }
    }

    static void assertPhases(GpuScanModel m, String what) {
        Map<String, Double> t = m.timings();
        assertEquals(PHASES, List.copyOf(t.keySet()), what + ": " + t);
        for (double v : t.values()) {
            assertTrue(v >= 0, what + ": " + t);
        }
        assertTrue(t.get(ScanResult.TOTAL) >= t.get(ScanResult.SCAN) + t.get(ScanResult.REPLICAS), what + ": " + t);
        for (String p : List.of(ScanResult.SCAN, ScanResult.SECONDARY, ScanResult.REPLICAS)) {
            assertTrue(m.phaseBackends().containsKey(p), what + ": " + m.phaseBackends());
        }
        assertTrue(m.result().timingsLine().startsWith(ScanResult.INPUT + " "), m.result().timingsLine());
    }

    @Test
    void everyPathGivesTheSameBitsAndTimings() {
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = GpuScanStatisticTest.cells(spark, 6).cache();
        GpuScanStatistic est = GpuScanStatisticTest.estimator(); // 12 x 9 cells, 19 replicas, 3 clusters, cpu
        String work = Long.toString(108L * 20);
        String less = Long.toString(108L * 20 - 1);

        GpuScanModel driver = with(() -> est.fit(df), ScanTrainer.LOCAL_WORK, work); // the limit is inclusive
        assertEquals(3, driver.clusters().size());
        assertEquals("cpu on the driver (2 threads)", driver.phaseBackends().get(ScanResult.SCAN));
        assertEquals("cpu on the driver (2 threads)", driver.phaseBackends().get(ScanResult.REPLICAS));
        assertEquals(0.0, driver.timings().get(ScanResult.GPU_CALLS));
        assertPhases(driver, "driver");
        GpuScanModel byDefault = est.fit(df); // 2160 <= 2^16
        assertEquals("cpu on the driver (2 threads)", byDefault.phaseBackends().get(ScanResult.SCAN));
        assertSameBits(driver, byDefault, "default");

        GpuScanModel one = with(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setNumPartitions(1).fit(df),
                ScanTrainer.LOCAL_WORK, less);
        assertEquals("cpu in 1 task", one.phaseBackends().get(ScanResult.SCAN));
        assertEquals("cpu in 1 task", one.phaseBackends().get(ScanResult.REPLICAS));
        assertPhases(one, "one task");
        assertSameBits(driver, one, "one task");

        GpuScanModel several = with(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setNumPartitions(3)
                .fit(df), ScanTrainer.LOCAL_WORK, "0");
        assertEquals("cpu in 3 tasks", several.phaseBackends().get(ScanResult.REPLICAS));
        assertSameBits(driver, several, "three tasks");

        // numPartitions 0: one task per core on the CPU twin, one per GPU (1 in local mode) where auto finds one
        GpuScanModel auto = with(() -> est.copy(new org.apache.spark.ml.param.ParamMap()).setBackend("auto")
                .setNumPartitions(0).fit(df), ScanTrainer.LOCAL_WORK, "0");
        String where = auto.phaseBackends().get(ScanResult.REPLICAS);
        assertTrue(where.equals("cpu in 2 tasks") || where.equals("gpu in 1 task"), where);
        assertSameBits(driver, auto, "auto");
        df.unpersist();
    }

    @Test
    void taskCountsAndTheSettingsAreChecked() {
        SparkContext sc = SparkTestSession.get().sparkContext();
        assertEquals(5, ScanTrainer.tasks(sc, 5, true));
        assertEquals(2, ScanTrainer.tasks(sc, 0, false), "the CPU twin: one task per core of local[2]");
        assertEquals(1, ScanTrainer.tasks(sc, 0, true), "a GPU in local mode: one task");
        assertEquals(3, (int) with(() -> ScanTrainer.tasks(sc, 0, true), GpuTasks.TASKS, "3"));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> with(() -> ScanTrainer.tasks(sc, 0, true), GpuTasks.TASKS, "0"));
        assertTrue(e.getMessage().contains(GpuTasks.TASKS), e.getMessage());

        assertEquals(ScanTrainer.DEFAULT_LOCAL_WORK, ScanTrainer.localWork());
        assertEquals(7L, (long) with(ScanTrainer::localWork, ScanTrainer.LOCAL_WORK, " 7 "));
        Dataset<Row> df = GpuScanStatisticTest.cells(SparkTestSession.get(), 7);
        for (String bad : new String[] {"-1", "lots", "1e5"}) {
            e = assertThrows(IllegalArgumentException.class,
                    () -> with(() -> GpuScanStatisticTest.estimator().fit(df), ScanTrainer.LOCAL_WORK, bad));
            assertTrue(e.getMessage().contains(ScanTrainer.LOCAL_WORK) && e.getMessage().contains(bad), e.getMessage());
        }
    }
}
