package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.spark.GpuTasks;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The estimator on a GPU through Spark (local[2]) on every path - the driver's GPU, one task, two tasks sharing
 * the GPU ({@code spark.sparkgpu.fit.gpuTasks=2}), numPartitions=3 - gives the CPU twin's clusters, LLRs and
 * p-values bit for bit, and the fit's timings count seconds inside GPU calls.
 */
@Tag("gpu")
@Tag("gpu-spark")
class ScanTrainerGpuTest {
    /** A 40 x 24 grid with a planted cluster: 960 cells, so 50 replicas are 48,000 (the driver by default). */
    static Dataset<Row> grid(SparkSession spark) {
        Random r = new Random(11);
        List<Row> rows = new ArrayList<>();
        for (int x = 0; x < 40; x++) {
            for (int y = 0; y < 24; y++) {
                double pop = 50 + r.nextInt(150);
                boolean hot = x >= 25 && x <= 29 && y >= 3 && y <= 6;
                rows.add(RowFactory.create(x, y, (long) ScanTestData.poisson(r, pop * (hot ? 0.06 : 0.03)), pop));
            }
        }
        return spark.createDataFrame(rows, GpuScanStatisticTest.CELLS2);
    }

    @Test
    void gpuPathsGiveTheCpuTwinsBits() {
        GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        Dataset<Row> df = grid(spark).cache();
        GpuScanStatistic est = GpuScanStatisticTest.estimator().setNumReplicas(49).setNumClusters(3);
        GpuScanModel cpu = ScanTrainerPathsTest.with(() -> est.fit(df), ScanTrainer.LOCAL_WORK, "0");
        assertEquals("cpu in 2 tasks", cpu.phaseBackends().get(ScanResult.REPLICAS));
        GpuScanModel cpuDriver = est.fit(df);
        assertEquals("cpu on the driver (2 threads)", cpuDriver.phaseBackends().get(ScanResult.REPLICAS));
        ScanTrainerPathsTest.assertSameBits(cpu, cpuDriver, "cpu on the driver");

        GpuScanStatistic gpu = est.copy(new ParamMap()).setBackend("gpu");
        Object[][] paths = {
            {"gpu on the driver", (java.util.function.Supplier<GpuScanModel>) () -> gpu.fit(df)},
            {"gpu in 1 task", (java.util.function.Supplier<GpuScanModel>) () -> ScanTrainerPathsTest.with(
                    () -> gpu.fit(df), ScanTrainer.LOCAL_WORK, "0")},
            {"gpu in 2 tasks", (java.util.function.Supplier<GpuScanModel>) () -> ScanTrainerPathsTest.with(
                    () -> gpu.fit(df), ScanTrainer.LOCAL_WORK, "0", GpuTasks.TASKS, "2")},
            {"gpu in 3 tasks", (java.util.function.Supplier<GpuScanModel>) () -> ScanTrainerPathsTest.with(
                    () -> gpu.copy(new ParamMap()).setNumPartitions(3).fit(df), ScanTrainer.LOCAL_WORK, "0")},
        };
        for (Object[] p : paths) {
            String where = (String) p[0];
            @SuppressWarnings("unchecked")
            GpuScanModel m = ((java.util.function.Supplier<GpuScanModel>) p[1]).get();
            assertEquals(where, m.phaseBackends().get(ScanResult.SCAN), m.result().timingsLine());
            assertEquals(where, m.phaseBackends().get(ScanResult.REPLICAS), m.result().timingsLine());
            assertEquals("gpu", m.result().backend());
            double g = m.timings().get(ScanResult.GPU_CALLS);
            assertTrue(g > 0 && g <= m.timings().get(ScanResult.TOTAL), m.result().timingsLine());
            ScanTrainerPathsTest.assertSameBits(cpu, m, where);
        }
        df.unpersist();
    }
}
