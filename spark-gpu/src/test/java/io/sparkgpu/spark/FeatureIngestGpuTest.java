package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.kmeans.KMeansData;
import io.sparkgpu.kmeans.KMeansEngine;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.SparkTestSession;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.apache.spark.api.java.JavaSparkContext;
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
 * Packing tasks (Spark local[2], so the tasks share this JVM and its GPU context) with a
 * {@link ResidentBlockSink} leave every non-empty partition resident on the device, x then w, bit for bit equal to
 * the host block they return, and the host blocks are those packed without a sink: partitions of 1000 points (many
 * chunks, a partial last one), 14 and 7 points (the last chunk exactly full), 5 and 1 point (a single chunk) and
 * none, in chunks of 7, 5 and 1 point and FeatureIngest's default, from rows and (where Parquet is available)
 * columnar batches; {@link KMeansEngine#pack} with a GPU backend does the same under its residency keys. No
 * device, staging or pinned byte is left behind.
 */
@Tag("gpu")
@Tag("gpu-spark")
class FeatureIngestGpuTest {
    @TempDir
    Path tmp;

    static final int D = 33;
    static final int[] SIZES = {1000, 0, 1, 5, 7, 14};
    static final FeatureIngest.PointCheck CLEAN = FeatureIngestTest.CLEAN;

    /** One partition per entry of SIZES, in that order: array&lt;double&gt; features of size D and a weight. */
    static Dataset<Row> frame(SparkSession spark) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        StructType schema = new StructType().add("features", DataTypes.createArrayType(DataTypes.DoubleType, false), false)
                .add("w", DataTypes.DoubleType, false);
        Random r = new Random(3);
        List<List<Row>> parts = new ArrayList<>();
        for (int n : SIZES) {
            List<Row> rows = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                double[] f = new double[D];
                for (int j = 0; j < D; j++) {
                    f[j] = FeatureIngestTest.value(r); // -0.0, subnormals, huge and ordinary values
                }
                rows.add(RowFactory.create(f, r.nextDouble() * 3));
            }
            parts.add(rows);
        }
        return spark.createDataFrame(jsc.parallelize(parts, parts.size()).flatMap(List::iterator), schema);
    }

    /** Sinks into the device the task resolves to (this JVM's), under {@code prefix + partition}. */
    static FeatureIngest.ChunkSinks sinks(String prefix) {
        return pid -> new ResidentBlockSink(CudaRuntime.device(CudaRuntime.selectDeviceOrdinal()), prefix + pid);
    }

    /** Every block of {@code got} equals {@code want} and, when not empty, is resident under {@code prefix + p}. */
    static void assertResidentBlocks(DeviceResidentCache cache, String prefix, List<FeatureBlock> want,
                                     List<FeatureBlock> got, long used0, String what) {
        assertEquals(want.size(), got.size(), what);
        long resident = 0;
        for (int p = 0; p < got.size(); p++) {
            FeatureBlock a = want.get(p);
            FeatureBlock b = got.get(p);
            String at = what + ", partition " + p + " (n=" + b.n + ")";
            assertEquals(a.n, b.n, at);
            assertArrayEquals(FeatureIngestTest.bits(a.x), FeatureIngestTest.bits(b.x), at + ": host x with a sink");
            assertArrayEquals(FeatureIngestTest.bits(a.w), FeatureIngestTest.bits(b.w), at + ": host w with a sink");
            if (b.n > 0) {
                ResidentBlockSinkGpuTest.assertResident(cache, prefix + p, b, at);
                resident += 8L * b.n * (b.d + 1);
            }
        }
        assertEquals(used0 + resident, cache.usedBytes(), what + ": resident bytes (nothing for empty partitions)");
        assertEquals(0, cache.stagedBytes(), what + ": staging left");
    }

    @Test
    void packingTasksLeaveTheirBlocksResidentBitForBit() throws Exception {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        SparkSession spark = SparkTestSession.get();
        ResidentBlockSinkGpuTest.Baseline base = new ResidentBlockSinkGpuTest.Baseline(dev);
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        Dataset<Row> df = frame(spark);
        List<Dataset<Row>> inputs = new ArrayList<>(List.of(df));
        if (parquetAvailable()) {
            String dir = tmp.resolve("pq").toString();
            df.write().parquet(dir);
            inputs.add(spark.read().parquet(dir));
        }
        long chunk = FeatureIngest.CHUNK_VALUES;
        try {
            for (long values : new long[] {chunk, 7 * D, 5 * D, D}) {
                FeatureIngest.CHUNK_VALUES = values;
                for (int in = 0; in < inputs.size(); in++) {
                    Dataset<Row> input = inputs.get(in);
                    String what = (in == 0 ? "rows" : "parquet") + ", chunks of " + values / D + " points";
                    List<FeatureBlock> want = FeatureIngest.read(input, "features", "w", CLEAN).collect();
                    if (in == 0) {
                        assertEquals(SIZES.length, want.size());
                    }
                    long used0 = cache.usedBytes();
                    String prefix = "ingest-gpu-test-" + UUID.randomUUID() + "/";
                    List<FeatureBlock> got = FeatureIngest.read(input, "features", "w", CLEAN, sinks(prefix)).collect();
                    assertResidentBlocks(cache, prefix, want, got, used0, what);
                    cache.evictPrefix(prefix);
                    ResidentBlockSink.forgetSeconds(prefix);

                    // k-means' packing with a GPU backend: the same under its residency keys
                    String fitId = "kmeans-ingest-gpu-test-" + UUID.randomUUID();
                    List<KMeansData> packed = KMeansEngine.pack(input, "features", "w", false, fitId, Backend.GPU)
                            .collect();
                    List<FeatureBlock> asBlocks = new ArrayList<>();
                    for (int p = 0; p < packed.size(); p++) {
                        KMeansData k = packed.get(p);
                        assertEquals(fitId + "/" + p, k.residencyKey, what);
                        asBlocks.add(new FeatureBlock(k.x, k.w, k.n, k.n == 0 ? 0 : k.d, p));
                    }
                    assertResidentBlocks(cache, fitId + "/", want, asBlocks, used0, what + ", KMeansTrainer.pack");
                    cache.evictPrefix(fitId);
                    ResidentBlockSink.forgetSeconds(fitId);
                }
            }
        } finally {
            FeatureIngest.CHUNK_VALUES = chunk;
        }
        base.assertNothingLeft();
    }

    /** The trimmed Spark bundle of the GPU host may keep no file sources; there the Parquet input is skipped, visibly. */
    static boolean parquetAvailable() {
        try {
            Class.forName("org.apache.spark.sql.execution.datasources.jdbc.JdbcRelationProvider");
            Class.forName("org.apache.parquet.hadoop.ParquetFileReader");
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            System.err.println("[spark-gpu] FeatureIngestGpuTest: Parquet input skipped, not in this runtime (" + e + ")");
            return false;
        }
    }
}
