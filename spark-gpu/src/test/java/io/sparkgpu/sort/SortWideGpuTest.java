package io.sparkgpu.sort;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The general key path on the GPU against the CPU twin: the wide stable order (low-word passes, sort_gather, high-
 * word passes) for every key width around the word boundary, tile boundaries and 10^7 keys, and GpuSort on
 * backend=gpu giving the CPU backend's rows (counting and radix paths).
 */
@Tag("gpu")
class SortWideGpuTest {

    @Test
    void wideOrderEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        long seed = 1;
        for (int bits : new int[] {1, 8, 9, 16, 24, 25, 31, 32, 33, 40, 48, 63, 64}) {
            for (int n : new int[] {0, 1, 2, 4095, 4096, 4097, 70_001, 1_000_003}) {
                for (int distinct : new int[] {3, 1 << 20}) {
                    long[] k = SortWideCpuTest.keys(n, bits, distinct, seed++);
                    assertArrayEquals(SortCpu.orderWide(k, bits), SortGpu.orderWide(dev, k, bits),
                            "bits=" + bits + " n=" + n + " distinct=" + distinct);
                }
            }
        }
    }

    @Test
    void tenMillionWideKeysEqualTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int bits : new int[] {32, 64}) {
            long[] k = SortWideCpuTest.keys(10_000_000, bits, 1 << 30, 7 + bits);
            assertArrayEquals(SortCpu.orderWide(k, bits), SortGpu.orderWide(dev, k, bits), "bits=" + bits);
        }
    }

    @Test
    void dataFrameSortOnTheGpuEqualsTheCpuBackend() {
        GpuTestSupport.deviceOrSkip();
        SplittableRandom r = new SplittableRandom(9);
        List<Row> rows = new ArrayList<>();
        for (int i = 0; i < 200_000; i++) {
            rows.add(RowFactory.create(r.nextInt(12) == 0 ? null : r.nextInt(1000), r.nextLong(), r.nextGaussian(), i));
        }
        StructType schema = new StructType().add("small", DataTypes.IntegerType, true)
                .add("wide", DataTypes.LongType, false).add("x", DataTypes.DoubleType, false)
                .add("id", DataTypes.IntegerType, false);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(SparkTestSession.get().sparkContext());
        Dataset<Row> df = SparkTestSession.get().createDataFrame(jsc.parallelize(rows, 4), schema);
        for (String key : new String[] {"small", "wide", "x"}) {
            SortMetrics m = new SortMetrics(SparkTestSession.get().sparkContext());
            List<Row> gpu = GpuSort.sort(df, new SortConfig(key).backend(Backend.GPU).numPartitions(3).metrics(m))
                    .collectAsList();
            List<Row> cpu = GpuSort.sort(df, new SortConfig(key).backend(Backend.CPU).numPartitions(3)).collectAsList();
            assertEquals(cpu, gpu, key);
            assertEquals("gpu", m.backend(), key + ": " + m);
        }
    }
}
