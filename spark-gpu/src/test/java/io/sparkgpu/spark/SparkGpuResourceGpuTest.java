package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.kmeans.KMeansData;
import io.sparkgpu.kmeans.KMeansEngine;
import io.sparkgpu.testutil.GeneratedBlobs;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.testutil.LocalGpuSessions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.ml.param.ParamMap;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * Spark-level GPU tests on an embedded local-cluster whose tasks get this host's GPUs as the {@code gpu}
 * resource ({@link LocalGpuSpark}; discovery from CUDA's device count): (a) a task's device is the address
 * Spark assigned it and its k-means pass runs on that GPU; (b) 1, 4 and 8 tasks sharing one GPU give the
 * same centres bit for bit; (c) the GPU fit equals the CPU twin's bit for bit; (d) repeated fits leave no
 * device memory behind.
 *
 * <p>Without a GPU the class is skipped with the reason. With {@code -Dsparkgpu.test.gpuDryRun=true} it runs
 * every Spark code path with backend cpu and fake GPU address "0" instead, checking only what does not need
 * a device: the Spark bundle's build traces the classes Spark loads that way (scripts/make-spark-gpu-bundle.sh).
 */
@Tag("gpu")
@Tag("gpu-spark")
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class SparkGpuResourceGpuTest {
    static final boolean DRY = Boolean.getBoolean("sparkgpu.test.gpuDryRun");
    /** The backend the GPU fits use: gpu, or cpu in a dry run. */
    static final String GPU = DRY ? "cpu" : "gpu";
    static final int CORES = 8;
    static final long N = DRY ? 40_000 : 400_000;
    static final int D = 32;
    static final int K = 16;
    static final int PARTITIONS = 16;
    static final int ITERS = 8;
    static final long SEED = 11;
    static final long MEMORY_MB = DRY ? 1024 : 8192;
    /** Free device memory may differ by this much between baseline and after repeated fits. */
    static final long FREE_TOLERANCE = 64L << 20;

    static List<String> addresses;
    static double[][] init;

    /** Why the tests skip (no usable GPU), or null. */
    static String skipReason;

    @BeforeAll
    static void device() {
        init = GeneratedBlobs.firstRows(K, D, K, SEED);
        if (DRY) {
            System.err.println("[spark-gpu] SparkGpuResourceGpuTest: DRY RUN (sparkgpu.test.gpuDryRun): backend cpu, "
                    + "fake GPU address 0; GPU-only checks are not made");
            addresses = List.of("0");
            return;
        }
        CudaRuntime.Status st = CudaRuntime.status();
        if (!st.available) {
            skipReason = "GPU test skipped: " + st.reason;
            return;
        }
        GpuTestSupport.deviceOrSkip();
        addresses = LocalGpuSpark.cudaAddresses();
    }

    /** Each test skips on its own, so that reports count every skipped test with the reason. */
    @BeforeEach
    void needsGpu() {
        if (skipReason != null) {
            System.err.println("[spark-gpu] " + skipReason);
            Assumptions.assumeTrue(false, skipReason);
        }
    }

    @AfterAll
    static void stop() {
        LocalGpuSessions.stopAll();
    }

    static SparkSession session(int tasksPerGpu) {
        return LocalGpuSessions.start(CORES, tasksPerGpu, addresses, MEMORY_MB);
    }

    static GpuKMeansModel fit(SparkSession spark, String backend) {
        Dataset<Row> df = GeneratedBlobs.frame(spark, N, D, K, PARTITIONS, SEED);
        long t0 = System.nanoTime();
        GpuKMeansModel m = new GpuKMeans().setK(K).setMaxIter(ITERS).setTol(0).setInitialCenters(init)
                .setBackend(backend).fit(df);
        System.err.printf("[spark-gpu] fit backend=%s on %s: %.2f s, cost %.10e, summary backend %s%n", backend,
                spark.sparkContext().master(), (System.nanoTime() - t0) / 1e9, m.summary().trainingCost(),
                m.summary().backend());
        assertEquals(backend, m.summary().backend(), "every pass ran on the requested backend");
        assertEquals(ITERS, m.summary().numIter());
        assertEquals(N, Arrays.stream(m.summary().clusterSizes()).sum());
        return m;
    }

    static void assertSameBits(GpuKMeansModel a, GpuKMeansModel b, String what) {
        for (int c = 0; c < K; c++) {
            assertArrayEquals(a.clusterCentersArray()[c], b.clusterCentersArray()[c], 0.0, what + ": centre " + c);
        }
        assertEquals(a.summary().trainingCost(), b.summary().trainingCost(), 0.0, what + ": training cost");
        assertArrayEquals(a.summary().clusterSizes(), b.summary().clusterSizes(), what + ": cluster sizes");
    }

    /** What one task saw. */
    static final class TaskView implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        String[] addresses;
        int selected;
        int deviceOrdinal = -1;
        String backend;
        boolean labelsMatchCpu;
    }

    @Test
    @Order(1)
    void deviceIsTheTasksAssignedGpuAndThePassRunsThere() {
        SparkSession spark = session(4);
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        final String backend = GPU;
        final boolean dry = DRY;
        List<TaskView> views = jsc.parallelize(IntStream.range(0, 16).boxed().collect(Collectors.toList()), 16).map(i -> {
            TaskView v = new TaskView();
            scala.Option<ResourceInformation> gpu = TaskContext.get().resources().get("gpu");
            v.addresses = gpu.isDefined() ? gpu.get().addresses() : new String[0];
            v.selected = CudaRuntime.selectDeviceOrdinal();
            if (!dry) {
                v.deviceOrdinal = CudaRuntime.device(v.selected).ordinal();
            }
            // a small prediction pass on the backend under test, compared with the CPU twin's labels
            int n = 5000;
            int d = 7;
            int k = 5;
            double[] x = new double[n * d];
            java.util.SplittableRandom r = new java.util.SplittableRandom(i);
            for (int j = 0; j < x.length; j++) {
                x[j] = r.nextGaussian();
            }
            double[] centres = Arrays.copyOf(x, k * d);
            KMeansData data = new KMeansData(x, new double[n], n, d, null);
            int[] labels = new int[n];
            v.backend = KMeansEngine.step(Backend.parse(backend, "backend"), data, centres, k, false, null, false,
                    labels, null, false).backend();
            int[] cpu = new int[n];
            KMeansEngine.cpuStep(data, centres, k, false, null, false, cpu, null, false);
            v.labelsMatchCpu = Arrays.equals(labels, cpu);
            return v;
        }).collect();
        for (TaskView v : views) {
            assertEquals(1, v.addresses.length, "one gpu address per task");
            assertTrue(addresses.contains(v.addresses[0]), "address " + v.addresses[0] + " was discovered");
            assertEquals(Integer.parseInt(v.addresses[0]), v.selected, "selectDeviceOrdinal is the task's address");
            if (!DRY) {
                assertEquals(v.selected, v.deviceOrdinal, "the device opened is the selected one");
            }
            assertEquals(GPU, v.backend, "KMeansStep ran on " + GPU);
            assertTrue(v.labelsMatchCpu, "labels equal the CPU twin's");
        }
    }

    @Test
    @Order(2)
    void oneFourAndEightTasksSharingAGpuGiveTheSameCentres() {
        GpuKMeansModel ref = null;
        for (int tasksPerGpu : new int[] {1, 4, 8}) {
            SparkSession spark = session(tasksPerGpu);
            int concurrent = SparkGpuResourceTest.maxConcurrent(SparkGpuResourceTest.probe(spark, 2 * CORES, 300), null);
            System.err.println("[spark-gpu] " + tasksPerGpu + " task(s) per GPU: up to " + concurrent + " ran at once");
            assertTrue(concurrent <= Math.min(CORES, tasksPerGpu * addresses.size()), "concurrent tasks: " + concurrent);
            if (tasksPerGpu > 1) {
                assertTrue(concurrent >= 2, "tasks shared a GPU: " + concurrent);
            }
            GpuKMeansModel m = fit(spark, GPU);
            if (ref == null) {
                ref = m;
            } else {
                assertSameBits(ref, m, tasksPerGpu + " tasks per GPU vs 1");
            }
        }
    }

    @Test
    @Order(3)
    void gpuFitEqualsTheCpuTwinBitForBit() {
        SparkSession spark = session(8);
        GpuKMeansModel gpu = fit(spark, GPU);
        GpuKMeansModel cpu = fit(spark, "cpu");
        assertSameBits(gpu, cpu, GPU + " vs cpu");
    }

    /**
     * Two executors, one GPU each (issue 20): on a host with two or more GPUs the first two devices; on a one-GPU
     * host two scheduled addresses mapped to the one device ({@code spark.sparkgpu.gpu.addressMap=0:0,1:0}), the
     * same code path. Each executor's tasks see only their own address, and the fit equals the one-executor fit
     * and the CPU twin bit for bit.
     */
    @Test
    @Order(5)
    void twoExecutorsWithAGpuEachGiveTheOneExecutorBits() {
        GpuKMeansModel one = fit(session(8), GPU);
        boolean real = !DRY && addresses.size() >= 2;
        LocalGpuSpark spec = LocalGpuSpark.of(CORES / 2, 4, real ? addresses.subList(0, 2) : List.of("0", "1"), MEMORY_MB)
                .executors(2);
        if (!real) {
            spec.config(io.sparkgpu.cuda.SparkGpuConf.ADDRESS_MAP, "0:0,1:0");
        }
        SparkSession spark = LocalGpuSessions.start(spec);
        Map<String, java.util.Set<String>> perExecutor = SparkGpuResourceTest.addressesPerExecutor(spark, 4 * CORES);
        System.err.println("[spark-gpu] two executors (" + (real ? "two GPUs" : "one GPU, two mapped addresses") + "): "
                + perExecutor);
        assertEquals(2, perExecutor.size(), "tasks ran on both executors: " + perExecutor);
        for (java.util.Set<String> a : perExecutor.values()) {
            assertEquals(1, a.size(), "each executor has one GPU: " + perExecutor);
        }
        GpuKMeansModel two = fit(spark, GPU);
        assertSameBits(one, two, "two executors vs one");
        assertSameBits(two, fit(spark, "cpu"), "two executors: " + GPU + " vs cpu");
    }

    /** Per GPU address: {allocatedBytes, resident usedBytes, free, total} as seen by the executor. */
    static Map<String, long[]> memory(SparkSession spark) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        final boolean dry = DRY;
        List<Object[]> rows = jsc.parallelize(IntStream.range(0, CORES).boxed().collect(Collectors.toList()), CORES)
                .map(i -> {
                    int ord = CudaRuntime.selectDeviceOrdinal();
                    long[] m = new long[4];
                    if (!dry) {
                        CudaDevice dev = CudaRuntime.device(ord);
                        long[] info = dev.memoryInfo();
                        m = new long[] {dev.allocatedBytes(), DeviceResidentCache.of(dev).usedBytes(), info[0], info[1]};
                    } else {
                        CudaRuntime.status(); // loads what the real probe loads, short of a device
                    }
                    return new Object[] {Integer.toString(ord), m};
                }).collect();
        Map<String, long[]> out = new TreeMap<>();
        for (Object[] r : rows) {
            out.put((String) r[0], (long[]) r[1]);
        }
        return out;
    }

    /**
     * t-SNE's distributed mode on one executor holding every GPU (a task per GPU in one process): the tasks copy
     * each other's rows of Y peer to peer and give the CPU twin's bits. Needs two GPUs.
     */
    @Test
    @Order(6)
    void distributedTsneOnOneExecutorWithTwoGpusGivesTheCpuBits() {
        Assumptions.assumeTrue(!DRY && addresses.size() >= 2, "needs two GPUs");
        // a task per GPU (without the setting, a fit this small runs as one task: one per 500,000 points)
        SparkSession spark = LocalGpuSessions.start(LocalGpuSpark.of(CORES, 1, addresses, MEMORY_MB)
                .config(GpuTasks.TASKS, "2"));
        Dataset<Row> df = TwoExecutorFitsGpuTest.tsneFrame(spark, 10_500, 6);
        io.sparkgpu.tsne.GpuTsne e = new io.sparkgpu.tsne.GpuTsne().setIdCol("id").setPerplexity(20).setMaxIter(100)
                .setExaggerationIterations(40).setSeed(8).setInit("random").setQualitySampleSize(0);
        io.sparkgpu.tsne.GpuTsneModel cpu = e.copy(ParamMap.empty()).setBackend("cpu").setMode("single").fit(df);
        io.sparkgpu.tsne.GpuTsneModel gpu = e.copy(ParamMap.empty()).setBackend("gpu").setMode("distributed").fit(df);
        System.err.println("[spark-gpu] t-SNE distributed on one executor with " + addresses.size() + " GPUs: "
                + gpu.summary().timings());
        assertArrayEquals(cpu.embeddingArray(), gpu.embeddingArray(), "embedding");
    }

    @Test
    @Order(4)
    void repeatedFitsLeaveNoDeviceMemoryBehind() {
        SparkSession spark = session(8);
        fit(spark, GPU); // warm-up: context, module, streams
        Map<String, long[]> base = memory(spark);
        List<String> report = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            fit(spark, GPU);
        }
        Map<String, long[]> after = memory(spark);
        for (Map.Entry<String, long[]> e : base.entrySet()) {
            long[] b = e.getValue();
            long[] a = after.get(e.getKey());
            report.add("GPU " + e.getKey() + ": allocated " + b[0] + " -> " + (a == null ? "?" : a[0]) + " B, resident "
                    + b[1] + " -> " + (a == null ? "?" : a[1]) + " B, free " + (b[2] >> 20) + " -> "
                    + (a == null ? "?" : a[2] >> 20) + " MiB");
        }
        System.err.println("[spark-gpu] device memory: " + report);
        if (DRY) {
            return;
        }
        for (Map.Entry<String, long[]> e : base.entrySet()) {
            long[] b = e.getValue();
            long[] a = after.get(e.getKey());
            assertTrue(a != null, "GPU " + e.getKey() + " probed again");
            assertEquals(0, b[0], "no buffer held between fits (GPU " + e.getKey() + ")");
            assertEquals(0, b[1], "no resident rows left after a fit (GPU " + e.getKey() + ")");
            assertEquals(b[0], a[0], "allocated bytes back to baseline (GPU " + e.getKey() + ")");
            assertEquals(b[1], a[1], "resident bytes back to baseline (GPU " + e.getKey() + ")");
            assertTrue(Math.abs(a[2] - b[2]) <= FREE_TOLERANCE, "free device memory within "
                    + (FREE_TOLERANCE >> 20) + " MiB of baseline: " + report);
        }
    }
}
