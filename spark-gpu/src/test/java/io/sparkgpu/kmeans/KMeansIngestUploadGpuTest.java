package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.SparkGpuConf;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.PinnedStagingPool;
import io.sparkgpu.spark.IngestTestHooks;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.util.List;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * k-means fits on a GPU whose packing tasks copy their chunks to the device while packing (chunks of 1, 5 and 64
 * points, so every partition has many chunks and a partial last one, next to an empty partition; vector and
 * array columns) give the CPU
 * twin's bits in every mode; the passes read the blocks the packing tasks assembled on the device. The summary
 * reports the packing threads' upload time, and nothing stays on the device or in pinned staging.
 */
@Tag("gpu")
@Tag("gpu-spark")
class KMeansIngestUploadGpuTest {
    /** Resident and staging bytes of every device's cache. */
    static long[] residentAndStaged() {
        long[] rs = new long[2];
        DeviceResidentCache.forEach(c -> {
            rs[0] += c.usedBytes();
            rs[1] += c.stagedBytes();
        });
        return rs;
    }

    @Test
    void chunkedUploadWhilePackingGivesTheCpuTwinsBitsInEveryMode() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        List<Row> rows = KMeansTrainerSparkTest.blobs(3000, 5, 6, 11);
        KMeansConfig cpu = KMeansTrainerSparkTest.config(6);
        cpu.backend = Backend.CPU;
        KMeansResult ref = KMeansTrainerSparkTest.inMode("job-per-pass", null,
                () -> KMeansTrainer.train(KMeansModesGpuTest.frame(spark, rows, 3, "dense"), "features", "w", cpu, null));
        KMeansConfig gpu = KMeansTrainerSparkTest.config(6);
        gpu.backend = Backend.GPU;
        // one fit first: module loading and the context's own allocations are not leaks
        KMeansTrainerSparkTest.inMode("local", null,
                () -> KMeansTrainer.train(KMeansModesGpuTest.frame(spark, rows, 2, "dense"), "features", "w", gpu, null));
        long deviceBytes = dev.allocatedBytes();
        long[] before = residentAndStaged();
        long chunk = IngestTestHooks.chunkValues(5);
        String was = System.setProperty(SparkGpuConf.UPLOAD_WHILE_PACKING, "true"); // off by default
        try {
            for (long values : new long[] {5, 25, 320}) { // 1, 5 and 64 points of 5 values
                IngestTestHooks.chunkValues(values);
                for (String kind : values == 25 ? List.of("dense", "array") : List.of("dense")) {
                    // 4 partitions, at least one of them empty: 3 partition ids hashed into 4 partitions (a union
                    // would do it more directly, but Spark's union needs Scala's parallel collections, which the
                    // trimmed GPU bundle leaves out)
                    Dataset<Row> df = KMeansModesGpuTest.frame(spark, rows, 3, kind)
                            .withColumn("p", functions.spark_partition_id())
                            .repartition(4, functions.col("p")).drop("p");
                    for (String[] m : new String[][] {{"local", null}, {"single-stage", "1"}, {"single-stage", "2"},
                            {"job-per-pass", null}}) {
                        String what = kind + ", chunks of " + values + " values, " + m[0] + (m[1] == null ? "" : " x" + m[1]);
                        KMeansResult r = KMeansTrainerSparkTest.inMode(m[0], m[1],
                                () -> KMeansTrainer.train(df, "features", "w", gpu, null));
                        KMeansModesGpuTest.assertSame(ref, r, what);
                        assertEquals("gpu", r.backend, what);
                        assertEquals(m[0], r.mode, what);
                        assertTrue(r.timings.get(KMeansTrainer.UPLOAD_MAX) >= 0, what + ": " + r.timings);
                        assertTrue(r.timings.get(KMeansTrainer.UPLOAD_SUM) >= r.timings.get(KMeansTrainer.UPLOAD_MAX),
                                what + ": " + r.timings);
                        assertFalse(r.timings.containsKey("upload while packing (longest task)"), what);
                    }
                }
            }
        } finally {
            IngestTestHooks.chunkValues(chunk);
            if (was == null) {
                System.clearProperty(SparkGpuConf.UPLOAD_WHILE_PACKING);
            } else {
                System.setProperty(SparkGpuConf.UPLOAD_WHILE_PACKING, was);
            }
        }
        long[] after = residentAndStaged();
        assertEquals(before[0], after[0], "resident k-means blocks left on the device");
        assertEquals(before[1], after[1], "staging left on the device");
        assertEquals(0, PinnedStagingPool.lentBytes(), "pinned staging still lent");
        assertEquals(deviceBytes, dev.allocatedBytes(), "device bytes held by our buffers after the fits");
    }
}
