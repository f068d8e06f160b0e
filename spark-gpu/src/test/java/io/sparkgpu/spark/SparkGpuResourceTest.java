package io.sparkgpu.spark;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaRuntime;
import io.sparkgpu.kmeans.GpuKMeans;
import io.sparkgpu.kmeans.GpuKMeansModel;
import io.sparkgpu.testutil.GeneratedBlobs;
import io.sparkgpu.testutil.LocalGpuSessions;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.resource.ResourceInformation;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPUs as Spark task resources on an embedded local-cluster ({@link LocalGpuSpark}), with a fake discovery
 * script, so it runs without a GPU (CI): tasks get the addresses the worker discovered,
 * {@link CudaRuntime#selectDeviceOrdinal()} follows them, {@code 1/tasksPerGpu} limits how many tasks share
 * a GPU at once, and k-means (CPU twin here) gives the same bits however many tasks share a GPU. The GPU
 * counterpart is {@link SparkGpuResourceGpuTest}.
 */
@Tag("gpu-spark")
class SparkGpuResourceTest {

    @AfterAll
    static void stop() {
        LocalGpuSessions.stopAll();
    }

    /** What one task saw: its gpu addresses, the ordinal our runtime picked, and when it ran. */
    static final class Seen implements java.io.Serializable {
        private static final long serialVersionUID = 1L;
        String[] addresses;
        int ordinal;
        long start;
        long end;
    }

    static List<Seen> probe(SparkSession spark, int tasks, long sleepMs) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Integer> ids = IntStream.range(0, tasks).boxed().collect(Collectors.toList());
        return jsc.parallelize(ids, tasks).map(i -> {
            Seen s = new Seen();
            s.start = System.currentTimeMillis();
            scala.Option<ResourceInformation> gpu = TaskContext.get().resources().get("gpu");
            s.addresses = gpu.isDefined() ? gpu.get().addresses() : new String[0];
            s.ordinal = CudaRuntime.selectDeviceOrdinal();
            Thread.sleep(sleepMs);
            s.end = System.currentTimeMillis();
            return s;
        }).collect();
    }

    /** Largest number of the tasks (optionally only those on {@code address}) running at one instant. */
    static int maxConcurrent(List<Seen> seen, String address) {
        int best = 0;
        for (Seen a : seen) {
            int running = 0;
            for (Seen b : seen) {
                if ((address == null || address.equals(b.addresses[0])) && b.start <= a.start && a.start < b.end) {
                    running++;
                }
            }
            best = Math.max(best, running);
        }
        return best;
    }

    @Test
    void tasksGetTheDiscoveredGpusAndTheRuntimeUsesThem() {
        // two fake GPUs, 4 cores, 2 tasks per GPU
        SparkSession spark = LocalGpuSessions.start(4, 2, List.of("0", "1"), 1024);
        assertEquals("0.5", spark.conf().get(LocalGpuSpark.TASK_GPU_AMOUNT));
        List<Seen> seen = probe(spark, 16, 400);
        Map<String, Integer> perAddress = new HashMap<>();
        for (Seen s : seen) {
            assertEquals(1, s.addresses.length, "each task gets one GPU address");
            assertTrue(s.addresses[0].equals("0") || s.addresses[0].equals("1"), "address " + s.addresses[0]);
            assertEquals(Integer.parseInt(s.addresses[0]), s.ordinal, "selectDeviceOrdinal follows the task's address");
            perAddress.merge(s.addresses[0], 1, Integer::sum);
        }
        assertEquals(2, perAddress.size(), "both GPUs are used: " + perAddress);
        assertTrue(maxConcurrent(seen, "0") <= 2 && maxConcurrent(seen, "1") <= 2,
                "at most 2 tasks share a GPU at once");
        int all = maxConcurrent(seen, null);
        assertTrue(all >= 2 && all <= 4, "concurrent tasks: " + all);
    }

    @Test
    void sharingOneGpuChangesConcurrencyButNotTheResult() {
        final long n = 30_000;
        final int d = 8;
        final int k = 6;
        double[][] init = GeneratedBlobs.firstRows(k, d, k, 3);
        List<double[][]> centres = new ArrayList<>();
        for (int tasksPerGpu : new int[] {1, 4}) {
            SparkSession spark = LocalGpuSessions.start(4, tasksPerGpu, List.of("0"), 1024);
            int concurrent = maxConcurrent(probe(spark, 8, 400), null);
            if (tasksPerGpu == 1) {
                assertEquals(1, concurrent, "one task per GPU at a time");
            } else {
                assertTrue(concurrent >= 2 && concurrent <= 4, "tasks sharing the GPU at once: " + concurrent);
            }
            Dataset<Row> df = GeneratedBlobs.frame(spark, n, d, k, 8, 3);
            GpuKMeansModel m = new GpuKMeans().setK(k).setMaxIter(5).setTol(0).setInitialCenters(init)
                    .setBackend("cpu").fit(df);
            assertEquals("cpu", m.summary().backend());
            assertEquals(5, m.summary().numIter());
            assertEquals(n, java.util.Arrays.stream(m.summary().clusterSizes()).sum());
            centres.add(m.clusterCentersArray());
        }
        for (int c = 0; c < k; c++) {
            assertArrayEquals(centres.get(0)[c], centres.get(1)[c], 0.0, "centre " + c + ", 1 vs 4 tasks per GPU");
        }
    }

    /** Executor id -> the gpu addresses its tasks were given (and, checked here, ordinals under the address map). */
    static Map<String, java.util.Set<String>> addressesPerExecutor(SparkSession spark, int tasks) {
        JavaSparkContext jsc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        List<Integer> ids = IntStream.range(0, tasks).boxed().collect(Collectors.toList());
        List<String[]> seen = jsc.parallelize(ids, tasks).map(i -> {
            scala.Option<ResourceInformation> gpu = TaskContext.get().resources().get("gpu");
            Thread.sleep(100);
            return new String[] {org.apache.spark.SparkEnv.get().executorId(),
                    gpu.isDefined() ? String.join(",", gpu.get().addresses()) : "",
                    Integer.toString(CudaRuntime.selectDeviceOrdinal())};
        }).collect();
        Map<String, java.util.Set<String>> out = new java.util.TreeMap<>();
        for (String[] s : seen) {
            out.computeIfAbsent(s[0], e -> new java.util.TreeSet<>()).add(s[1] + "->" + s[2]);
        }
        return out;
    }

    /**
     * Issue 20's plumbing without several GPUs: two executors (one worker each) split two fake GPU addresses, the
     * address map sends both to ordinal 0, and a fit gives the one-executor bits.
     */
    @Test
    void twoExecutorsSplitTheGpusAndTheAddressMapPicksTheDevice() {
        final long n = 20_000;
        final int d = 4;
        final int k = 5;
        double[][] init = GeneratedBlobs.firstRows(k, d, k, 5);
        SparkSession spark = LocalGpuSessions.start(LocalGpuSpark.of(1, 1, List.of("0", "1"), 1024).executors(2)
                .config(io.sparkgpu.cuda.SparkGpuConf.ADDRESS_MAP, "0:0,1:0"));
        assertEquals("local-cluster[2,1,1024]", spark.sparkContext().master());
        // both executors are up before the first job (spark.scheduler.minRegisteredResourcesRatio=1.0), so data
        // cached by that job is spread over both
        assertEquals(3, spark.sparkContext().statusTracker().getExecutorInfos().length, "driver + 2 executors at start");
        Map<String, java.util.Set<String>> per = addressesPerExecutor(spark, 8);
        assertEquals(2, per.size(), "both executors ran tasks: " + per);
        java.util.Set<String> all = new java.util.TreeSet<>();
        for (java.util.Set<String> a : per.values()) {
            assertEquals(1, a.size(), "one address per executor: " + per);
            all.addAll(a);
        }
        assertEquals(java.util.Set.of("0->0", "1->0"), all, "disjoint addresses, both mapped to ordinal 0: " + per);
        GpuKMeansModel two = new GpuKMeans().setK(k).setMaxIter(4).setTol(0).setInitialCenters(init).setBackend("cpu")
                .fit(GeneratedBlobs.frame(spark, n, d, k, 6, 5));
        SparkSession single = LocalGpuSessions.start(2, 1, List.of("0"), 1024);
        GpuKMeansModel one = new GpuKMeans().setK(k).setMaxIter(4).setTol(0).setInitialCenters(init).setBackend("cpu")
                .fit(GeneratedBlobs.frame(single, n, d, k, 6, 5));
        for (int c = 0; c < k; c++) {
            assertArrayEquals(one.clusterCentersArray()[c], two.clusterCentersArray()[c], 0.0, "centre " + c + ", 2 executors vs 1");
        }
        assertEquals(one.summary().trainingCost(), two.summary().trainingCost(), 0.0);
    }

    @Test
    void claimingDiscoveryScriptHandsEachWorkerDisjointAddresses() throws Exception {
        java.nio.file.Path dir = java.nio.file.Files.createTempDirectory("sparkgpu-claims");
        java.nio.file.Path script = LocalGpuSpark.writeClaimingDiscoveryScript(dir, List.of("0", "1", "2", "3"), 2);
        String[] outs = new String[3];
        int[] rcs = new int[3];
        for (int i = 0; i < 3; i++) {
            Process p = new ProcessBuilder(script.toString()).redirectErrorStream(true).start();
            outs[i] = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8).trim();
            rcs[i] = p.waitFor();
        }
        assertEquals("{\"name\":\"gpu\",\"addresses\":[\"0\",\"1\"]}", outs[0]);
        assertEquals(0, rcs[0]);
        assertEquals("{\"name\":\"gpu\",\"addresses\":[\"2\",\"3\"]}", outs[1]);
        assertEquals(0, rcs[1]);
        assertTrue(rcs[2] != 0 && outs[2].contains("no free GPU address"), outs[2]);
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LocalGpuSpark.of(2, 1, List.of("0", "1", "2"), 1024).executors(2));
        assertTrue(e.getMessage().contains("executors must divide"), e.getMessage());
    }

    @Test
    void localMasterWithTaskGpuAmountIsRefusedInsteadOfHanging() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> LocalGpuSpark.checkMaster("local[4]", "0.25"));
        assertTrue(e.getMessage().contains("local-cluster"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LocalGpuSpark.checkMaster("local", "1"));
        assertThrows(IllegalArgumentException.class, () -> LocalGpuSpark.checkMaster("local[*]", "0.5"));
        LocalGpuSpark.checkMaster("local[4]", null);
        LocalGpuSpark.checkMaster("local-cluster[1,4,1024]", "0.25");
        LocalGpuSpark.checkMaster("spark://host:7077", "0.25");
    }

    @Test
    void settingsDescribeOneExecutorWithAllGpus() {
        LocalGpuSpark l = LocalGpuSpark.of(16, 8, List.of("0", "1"), 4096);
        Map<String, String> s = l.settings(java.nio.file.Paths.get("/x/gpus.sh"));
        assertEquals("local-cluster[1,16,4096]", s.get("spark.master"));
        assertEquals("0.125", s.get(LocalGpuSpark.TASK_GPU_AMOUNT));
        assertEquals("2", s.get("spark.worker.resource.gpu.amount"));
        assertEquals("2", s.get("spark.executor.resource.gpu.amount"));
        assertEquals("/x/gpus.sh", s.get("spark.worker.resource.gpu.discoveryScript"));
        assertEquals("1.0", s.get("spark.scheduler.minRegisteredResourcesRatio"), "the first job waits for every executor");
        assertEquals(LocalGpuSpark.absoluteClassPath(System.getProperty("java.class.path")),
                s.get("spark.executor.extraClassPath"));
        assertEquals("/a/b.jar:" + java.nio.file.Paths.get("c.jar").toAbsolutePath() + ":"
                + java.nio.file.Paths.get("").toAbsolutePath() + "/lib/*", LocalGpuSpark.absoluteClassPath("/a/b.jar:c.jar::lib/*"));
        assertThrows(IllegalArgumentException.class, () -> LocalGpuSpark.of(4, 2, List.of("gpu0"), 1024));
        assertThrows(IllegalArgumentException.class, () -> LocalGpuSpark.of(0, 2, List.of("0"), 1024));
    }
}
