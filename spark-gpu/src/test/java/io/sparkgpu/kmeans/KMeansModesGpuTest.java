package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.linalg.SQLDataTypes;
import org.apache.spark.ml.linalg.Vector;
import org.apache.spark.ml.linalg.Vectors;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.RowFactory;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.types.DataTypes;
import org.apache.spark.sql.types.StructType;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The k-means fit on a GPU through Spark (local[2]) in every mode - on the driver, in one barrier stage with one
 * and two tasks, one job per pass - gives the CPU twin's bits, for dense and sparse vectors and array columns,
 * cached, uncached and Parquet-read input, 1, 2 and 7 partitions; and 100 fits leave no device memory behind.
 */
@Tag("gpu")
@Tag("gpu-spark")
class KMeansModesGpuTest {
    @TempDir
    Path tmp;

    static Dataset<Row> frame(SparkSession spark, List<Row> rows, int parts, String kind) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Row> conv = new ArrayList<>();
        for (Row r : rows) {
            Vector v = (Vector) r.get(0);
            Object f;
            switch (kind) {
                case "sparse": f = v.toSparse(); break;
                case "array": f = v.toArray(); break;
                default: f = v.toDense();
            }
            conv.add(RowFactory.create(f, r.getDouble(1))); // double[] for array<double> (Spark's encoder takes no java.util.List)
        }
        StructType schema = new StructType()
                .add("features", kind.equals("array") ? DataTypes.createArrayType(DataTypes.DoubleType, false)
                        : SQLDataTypes.VectorType(), false)
                .add("w", DataTypes.DoubleType, false);
        return spark.createDataFrame(jsc.parallelize(conv, parts), schema);
    }

    static void assertSame(KMeansResult ref, KMeansResult o, String what) {
        for (int c = 0; c < ref.centers.length; c++) {
            assertArrayEquals(ref.centers[c], o.centers[c], 0.0, what + ": centre " + c);
        }
        assertEquals(ref.trainingCost, o.trainingCost, 0.0, what);
        assertEquals(ref.finalCost, o.finalCost, 0.0, what);
        assertArrayEquals(ref.clusterSizes, o.clusterSizes, what);
        assertEquals(ref.iterations, o.iterations, what);
    }

    @Test
    void everyModeAndInputOnTheGpuGivesTheCpuTwinsBits() throws Exception {
        GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        // some points near the middle of two blobs, so that nearly tied distances occur
        List<Row> rows = KMeansTrainerSparkTest.blobs(3000, 5, 6, 11);
        KMeansConfig cpu = KMeansTrainerSparkTest.config(6);
        cpu.backend = Backend.CPU;
        KMeansResult ref = KMeansTrainerSparkTest.inMode("job-per-pass", null,
                () -> KMeansTrainer.train(frame(spark, rows, 3, "dense"), "features", "w", cpu, null));
        assertEquals("cpu", ref.backend);
        KMeansConfig gpu = KMeansTrainerSparkTest.config(6);
        gpu.backend = Backend.GPU;
        boolean parquet = parquetAvailable();
        for (String kind : List.of("dense", "sparse", "array")) {
            for (int parts : new int[] {1, 2, 7}) {
                Dataset<Row> df = frame(spark, rows, parts, kind);
                Path pq = parquet ? tmp.resolve(kind + parts) : null;
                if (parquet) {
                    df.write().parquet(pq.toString());
                }
                Dataset<Row> cached = df.cache();
                cached.count();
                for (String[] m : new String[][] {{"local", null}, {"single-stage", "1"}, {"single-stage", "2"},
                        {"job-per-pass", null}}) {
                    String what = kind + " " + parts + " partitions " + m[0] + (m[1] == null ? "" : " x" + m[1]);
                    assertSame(ref, KMeansTrainerSparkTest.inMode(m[0], m[1],
                            () -> KMeansTrainer.train(df, "features", "w", gpu, null)), what + " uncached");
                    KMeansResult c = KMeansTrainerSparkTest.inMode(m[0], m[1],
                            () -> KMeansTrainer.train(cached, "features", "w", gpu, null));
                    assertSame(ref, c, what + " cached");
                    assertEquals("gpu", c.backend, what);
                    assertEquals(m[0], c.mode, what);
                    if (parquet) {
                        assertSame(ref, KMeansTrainerSparkTest.inMode(m[0], m[1],
                                () -> KMeansTrainer.train(spark.read().parquet(pq.toString()), "features", "w", gpu,
                                        null)), what + " parquet");
                    }
                }
                cached.unpersist(true);
            }
        }
    }

    /** The trimmed Spark bundle of the GPU host keeps no file sources; there the Parquet inputs are skipped, visibly. */
    static boolean parquetAvailable() {
        try {
            Class.forName("org.apache.spark.sql.execution.datasources.jdbc.JdbcRelationProvider");
            Class.forName("org.apache.parquet.hadoop.ParquetFileReader");
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            System.err.println("[spark-gpu] KMeansModesGpuTest: Parquet inputs skipped, not in this runtime (" + e + ")");
            return false;
        }
    }

    @Test
    void aHundredFitsLeaveNoDeviceMemoryBehind() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        List<Row> rows = KMeansTrainerSparkTest.blobs(2000, 4, 4, 3);
        Dataset<Row> df = frame(spark, rows, 2, "dense").cache();
        df.count();
        KMeansConfig gpu = KMeansTrainerSparkTest.config(4);
        gpu.backend = Backend.GPU;
        gpu.maxIter = 3;
        // one fit first: module loading and the context's own allocations are not leaks
        KMeansTrainerSparkTest.inMode("single-stage", "2", () -> KMeansTrainer.train(df, "features", "w", gpu, null));
        long before = dev.allocatedBytes();
        long[] free0 = dev.memoryInfo();
        String[] modes = {"single-stage", "job-per-pass", "local"};
        for (int i = 0; i < 100; i++) {
            String mode = modes[i % 3];
            KMeansTrainerSparkTest.inMode(mode, mode.equals("single-stage") ? "2" : null,
                    () -> KMeansTrainer.train(df, "features", "w", gpu, null));
        }
        long[] resident = new long[1];
        DeviceResidentCache.forEach(c -> resident[0] += c.usedBytes());
        assertEquals(0, resident[0], "resident k-means blocks left on the device after 100 fits");
        assertEquals(before, dev.allocatedBytes(), "device bytes held by our buffers after 100 fits");
        long[] free1 = dev.memoryInfo();
        assertTrue(free1[0] >= free0[0] - (64L << 20), "free device memory fell from " + free0[0] + " to " + free1[0]);
        df.unpersist(true);
    }
}
