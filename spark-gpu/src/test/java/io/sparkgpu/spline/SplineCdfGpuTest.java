package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.Random;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** GpuMonotoneCdf and the quantile partitioner with backend gpu against the CPU twin, bit for bit. */
@Tag("gpu")
class SplineCdfGpuTest {
    @Test
    void cdfQuantileDensityAndBoundsAreTheCpuBits() {
        GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        Random r = new Random(21);
        double[] v = new double[30_011];
        for (int i = 0; i < v.length; i++) {
            v[i] = i % 13 == 0 ? 3.0 : Math.exp(1.3 * r.nextGaussian()); // an atom and a long tail
        }
        for (String kind : new String[] {"rational", "schumaker"}) {
            for (int knots : new int[] {2, 257, 2049}) {
                GpuMonotoneCdfModel cpu = new GpuMonotoneCdf().setKind(kind).setNumKnots(knots).setBackend("cpu")
                        .fit(GpuMonotoneCdfTest.column(spark, v, null, 3));
                GpuMonotoneCdfModel gpu = new GpuMonotoneCdf().setKind(kind).setNumKnots(knots).setBackend("gpu")
                        .fit(GpuMonotoneCdfTest.column(spark, v, null, 3));
                String what = kind + ", " + knots + " knots";
                assertTrue(cpu.spline().sameBits(gpu.spline()), what);
                double[] z = new Random(knots).doubles(100_003, -1, 40).toArray();
                double[] p = new Random(knots + 1).doubles(100_003).toArray();
                assertArrayEquals(cpu.cdf(z), gpu.cdf(z), 0.0, what);
                assertArrayEquals(cpu.density(z), gpu.density(z), 0.0, what);
                assertArrayEquals(cpu.quantile(p), gpu.quantile(p), 0.0, what);
                assertArrayEquals(SplineRangePartitioner.fromCdf(cpu, 7).bounds(),
                        SplineRangePartitioner.fromCdf(gpu, 7).bounds(), 0.0, what);
            }
        }
    }

    /** The counted partitioner: F on the GPU in the histogram pass gives the CPU twin's bins, so the same cuts. */
    @Test
    void countedPartitionerIsTheCpuOne() {
        GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        for (String kind : new String[] {"lognormal", "zipf", "bimodal"}) {
            org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> df = SplineRangePartitionerTest.skewedKeys(spark,
                    kind, 300_007, 3);
            SplineRangePartitioner cpu = SplineRangePartitioner.fit(df, "key", 37, "cpu");
            SplineRangePartitioner gpu = SplineRangePartitioner.fit(df, "key", 37, "gpu");
            assertTrue(cpu.equals(gpu), kind);
            assertArrayEquals(cpu.expectedSizes(), SplineRangePartitioner.partitionSizes(gpu.partition(df, "key")),
                    kind);
            // the whole column's exact quantiles by counts: the GPU map's bins are the CPU's, so the same knots
            org.apache.spark.sql.Dataset<org.apache.spark.sql.Row> keys = df.select("key");
            assertArrayEquals(CountedQuantiles.knots(keys, "key", 1025, io.sparkgpu.cuda.Backend.CPU),
                    CountedQuantiles.knots(keys, "key", 1025, io.sparkgpu.cuda.Backend.GPU), 0.0, kind);
        }
    }
}
