package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.List;
import java.util.Random;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Spark-level: the distributed affinities with backend gpu (kernels on the executors' device) equal the CPU
 * twin's bit for bit, in both kNN modes and for 1 and 5 partitions. Skipped with the reason where no GPU is
 * usable; needs Spark, so it runs from Maven or the Spark bundle ({@code spark-bundle/run spark-gpu-tests
 * --select-class io.sparkgpu.tsne.affinity.TsneAffinitiesSparkGpuTest}), not from the GPU bundle.
 */
@Tag("gpu")
@Tag("gpu-spark")
class TsneAffinitiesSparkGpuTest {

    @Test
    void gpuEqualsCpuOnSpark() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(8);
        List<Row> rows = TsneAffinitiesSparkTest.points(r, 700, 13);
        for (int parts : new int[] {1, 5}) {
            for (long bytes : new long[] {TsneAffinitiesSpark.DEFAULT_BROADCAST_BYTES, 0}) {
                Dataset<Row> df = TsneAffinitiesSparkTest.frame(rows, parts, TsneAffinitiesSparkTest.VEC, false);
                TsneAffinitiesSpark.Result cpu = TsneAffinitiesSpark.fromVectors(df, "features", 20, 0, Backend.CPU,
                        bytes);
                TsneAffinitiesSpark.Result gpu = TsneAffinitiesSpark.fromVectors(df, "features", 20, 0, Backend.GPU,
                        bytes);
                SparseRows a = TsneAffinitiesSparkTest.concat(cpu);
                SparseRows b = TsneAffinitiesSparkTest.concat(gpu);
                assertArrayEquals(a.rowPtr, b.rowPtr);
                assertArrayEquals(a.col, b.col);
                assertArrayEquals(a.val, b.val);
                cpu.unpersist();
                gpu.unpersist();
            }
        }
    }
}
