package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU kernel vs CPU twin. The expected tolerance is zero: both compute every distance with the same
 * sequence of correctly rounded double operations (per dimension a subtraction and one fused multiply-add:
 * __fma_rn on the GPU, Math.fma in Java; nvcc runs with --fmad=false so nothing else is fused), break ties
 * the same way, and add fixed-point integers, whose sum does not depend on the order the atomics happen in.
 * So labels, distances and accumulators must be bitwise equal.
 */
@Tag("gpu")
class KMeansGpuTest {

    static KMeansData data(Random r, int n, int d, boolean cosine) {
        double[] x = new double[n * d];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            double ss = 0;
            for (int j = 0; j < d; j++) {
                double v = r.nextInt(10) == 0 ? r.nextInt(3) : r.nextGaussian() * (1 + j % 5) - 2;
                x[i * d + j] = v;
                ss += v * v;
            }
            if (cosine) {
                if (ss == 0) {
                    x[i * d] = 1;
                    ss = 1;
                }
                for (int j = 0; j < d; j++) {
                    x[i * d + j] /= Math.sqrt(ss);
                }
            }
            w[i] = r.nextInt(5) == 0 ? 0.0 : r.nextDouble() * 3;
        }
        return new KMeansData(x, w, n, d, null);
    }

    static double[] centresFrom(KMeansData p, int k, Random r) {
        double[] c = new double[k * p.d];
        for (int i = 0; i < k; i++) {
            System.arraycopy(p.x, r.nextInt(p.n) * p.d, c, i * p.d, p.d);
            if (i % 3 == 1) { // perturb some so that not every centre is a data point
                c[i * p.d] += 1e-3;
            }
        }
        return c;
    }

    private static void compare(CudaDevice dev, KMeansData p, int k, boolean cosine, long seed) {
        Random r = new Random(seed);
        compare(dev, p, centresFrom(p, k, r), k, cosine);
    }

    /** GPU launches per accumulation variant in this JVM (both compared with the twin), to prove both ran. */
    static final java.util.Map<String, Integer> RUNS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Runs body once with the atomic and once with the sorted accumulation (KMeansGpu.useSorted), restoring the
     * switch afterwards.
     */
    static void inBothAccumulationModes(java.util.function.Consumer<Boolean> body) {
        final boolean saved = KMeansGpu.useSorted;
        try {
            for (boolean sorted : new boolean[] {false, true}) {
                KMeansGpu.useSorted = sorted;
                body.accept(sorted);
            }
        } finally {
            KMeansGpu.useSorted = saved;
        }
    }

    /**
     * Checks that the last step ran the variant asked for: atomic mode never runs a *_sorted kernel; sorted mode
     * runs one for every accumulating step with d <= 64 whose sort region surely fits (k <= 1000: at most 9 KB
     * next to at most 140 KB of FP32 centres), and never for d > 64.
     */
    static void assertVariant(boolean sorted, int d, int k, String what) {
        String kernel = KMeansGpu.lastKernel();
        if (!sorted || d > KMeansGpu.SORTED_MAX_D) {
            assertTrue(!kernel.endsWith("_sorted"), "kernel " + kernel + " in atomic mode or d > 64: " + what);
        } else if (k <= 1000) {
            assertTrue(kernel.endsWith("_sorted"), "sorted mode ran " + kernel + ": " + what);
        }
        RUNS.merge(kernel.endsWith("_sorted") ? "sorted" : "atomic", 1, Integer::sum);
    }

    private static void compare(CudaDevice dev, KMeansData p, double[] centres, int k, boolean cosine) {
        KMeansScales s = KMeansCpuTest.scalesFor(p, cosine);
        int[] lc = new int[p.n];
        double[] dc = new double[p.n];
        long[] ac = KMeansCpu.step(p, centres, k, cosine, s, true, lc, dc, false);
        inBothAccumulationModes(sorted -> {
            int[] lg = new int[p.n];
            double[] dg = new double[p.n];
            long[] ag = KMeansGpu.step(dev, p, centres, k, cosine, s, true, lg, dg, false);
            String what = "n=" + p.n + " d=" + p.d + " k=" + k + (cosine ? " cosine" : " euclidean") + ", "
                    + (sorted ? "sorted" : "atomic") + " mode, kernel " + KMeansGpu.lastKernel();
            assertVariant(sorted, p.d, k, what);
            assertArrayEquals(lc, lg, "labels " + what);
            assertArrayEquals(dc, dg, 0.0, "distances " + what);
            assertArrayEquals(ac, ag, "accumulator " + what);
        });
    }

    @Test
    void gpuEqualsCpuTwinOnAwkwardShapes() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(42);
        int[] dims = {1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 257, 512};
        int cases = 0;
        for (int d : dims) {
            for (int k : new int[] {2, 5, 64, 1000}) {
                if ((long) k * d > 300_000 && !(k == 1000 && d == 512)) {
                    continue;
                }
                int n = k == 1000 ? 2049 + d : 1000 + 13 * d + 1; // never a multiple of the block size
                for (boolean cosine : new boolean[] {false, true}) {
                    if (cosine && k == 1000 && d != 512) {
                        continue;
                    }
                    compare(dev, data(r, n, d, cosine), k, cosine, r.nextLong());
                    cases++;
                }
            }
        }
        assertTrue(cases > 40, "cases run: " + cases);
    }

    @Test
    void emptyAndTinyPartitions() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        KMeansData empty = new KMeansData(new double[0], new double[0], 0, 3, null);
        KMeansScales s = KMeansScales.fromBounds(1, 1, new double[] {1, 1, 1}, false);
        long[] acc = KMeansGpu.step(dev, empty, new double[6], 2, false, s, true, null, null, false);
        assertArrayEquals(new long[KMeansAccumulator.length(2, 3)], acc);
        Random r = new Random(3);
        for (int n = 1; n <= 5; n++) {
            compare(dev, data(r, n, 4, false), 2, false, n);
        }
    }

    /**
     * Tails of the kernels' loops: each thread takes two centres at a time (odd k and k = 1 leave one centre
     * alone) and, for d <= 32, two points i and i + 256 per grid-stride step of 512 (n around multiples of
     * 512 and n = 1..3 leave the second point past the end); centre rows are zero-padded to a multiple of 4
     * dimensions (d = 1, 3, 5, ... in every kernel variant).
     */
    @Test
    void tailsOfTheTwoPointAndTwoCentreLoops() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(77);
        int[] dims = {1, 3, 4, 5, 8, 13, 16, 29, 32, 33, 62, 64, 66};
        int[] ks = {1, 2, 3, 7};
        int[] ns = {1, 2, 3, 255, 256, 257, 511, 512, 513, 1025};
        int cases = 0;
        for (int d : dims) {
            for (int k : ks) {
                for (int n : ns) {
                    boolean cosine = (cases % 3) == 2;
                    compare(dev, data(r, n, d, cosine), Math.min(k, n), cosine, r.nextLong());
                    compare(dev, data(r, n, d, cosine), k, cosine, r.nextLong()); // k > n: some centres repeat
                    cases++;
                }
            }
        }
        assertEquals(dims.length * ks.length * ns.length, cases);
    }

    /**
     * Centres too large for shared memory are read from global memory by a separate code path; odd k and d
     * that is not a multiple of 4 there too.
     */
    @Test
    void centresInGlobalMemoryWithOddShapes() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(78);
        for (int d : new int[] {5, 16, 32, 33, 64, 70}) {
            // the smallest odd k whose centres exceed this device's shared memory
            int k = (int) (dev.maxSharedMemoryOptin() / (8L * KMeansGpu.paddedDim(d))) + 1;
            k += 1 - (k & 1);
            assertTrue(8L * k * KMeansGpu.paddedDim(d) > dev.maxSharedMemoryOptin(), "centres must not fit in shared");
            for (int n : new int[] {1, 777}) {
                compare(dev, data(r, n, d, false), k, false, r.nextLong());
            }
            compare(dev, data(r, 513, d, true), k, true, r.nextLong());
        }
    }

    /**
     * Exact ties between centres: neighbours c and c+1 (evaluated together on the GPU) that are equal, equal
     * centres in different pairs, and points with small integer coordinates lying on centres. The lower index
     * must win everywhere, as in the CPU twin.
     */
    @Test
    void tiesBetweenCentresGoToTheLowerIndex() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(79);
        for (int d : new int[] {2, 3, 7, 16, 31, 33, 64, 65}) {
            for (int k : new int[] {1, 2, 5, 8, 33}) {
                int n = 1 + r.nextInt(1500);
                double[] x = new double[n * d];
                for (int i = 0; i < x.length; i++) {
                    x[i] = r.nextInt(3) - 1;
                }
                double[] w = new double[n];
                for (int i = 0; i < n; i++) {
                    w[i] = r.nextInt(4) * 0.5;
                }
                KMeansData p = new KMeansData(x, w, n, d, null);
                double[] centres = new double[k * d];
                for (int c = 0; c < k; c++) {
                    if (c > 0 && r.nextInt(2) == 0) {
                        int from = r.nextBoolean() ? c - 1 : r.nextInt(c);
                        System.arraycopy(centres, from * d, centres, c * d, d);
                    } else {
                        System.arraycopy(x, r.nextInt(n) * d, centres, c * d, d);
                    }
                }
                compare(dev, p, centres, k, false);
            }
        }
    }

    @Test
    void streamingInChunksAndResidentDataGiveTheSameBits() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(5);
        KMeansData p = data(r, 50_003, 24, false);
        double[] centres = centresFrom(p, 37, r);
        KMeansScales s = KMeansCpuTest.scalesFor(p, false);
        long[] cpu = KMeansCpu.step(p, centres, 37, false, s, true, null, null, false);
        long saved = KMeansGpu.chunkBytes;
        try {
            KMeansGpu.chunkBytes = 8L * 25 * 1001; // 1001-row chunks
            inBothAccumulationModes(sorted -> {
                assertArrayEquals(cpu, KMeansGpu.step(dev, p, centres, 37, false, s, true, null, null, false),
                        "chunked, sorted=" + sorted);
                assertVariant(sorted, 24, 37, "chunked");
            });
        } finally {
            KMeansGpu.chunkBytes = saved;
        }
        KMeansData resident = p.withResidencyKey("test-resident/0");
        long before = DeviceResidentCache.of(dev).usedBytes();
        assertArrayEquals(cpu, KMeansGpu.step(dev, resident, centres, 37, false, s, true, null, null, false), "first");
        assertEquals(before + 8L * 25 * 50_003, DeviceResidentCache.of(dev).usedBytes(), "rows kept on the device");
        assertArrayEquals(cpu, KMeansGpu.step(dev, resident, centres, 37, false, s, true, null, null, false), "resident");
        DeviceResidentCache.of(dev).evictPrefix("test-resident/");
        assertEquals(before, DeviceResidentCache.of(dev).usedBytes());
    }

    @Test
    void minUpdateOfDistancesForKMeansParallel() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(8);
        KMeansData p = data(r, 3333, 10, false);
        double[] c = centresFrom(p, 7, r);
        double[] dc = new double[p.n];
        java.util.Arrays.fill(dc, 4.0);
        double[] dg = dc.clone();
        KMeansCpu.step(p, c, 7, false, null, false, null, dc, true);
        KMeansGpu.step(dev, p, c, 7, false, null, false, null, dg, true);
        assertArrayEquals(dc, dg, 0.0);
    }

    @Test
    void concurrentTasksShareOneGpuAndMemoryIsReleased() throws Exception {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(13);
        KMeansData p = data(r, 20_001, 32, false);
        double[] centres = centresFrom(p, 64, r);
        KMeansScales s = KMeansCpuTest.scalesFor(p, false);
        long[] expected = KMeansCpu.step(p, centres, 64, false, s, true, null, null, false);
        long baseline = dev.allocatedBytes();
        for (int threads : new int[] {4, 8}) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<long[]>> fs = new ArrayList<>();
                for (int t = 0; t < threads * 3; t++) {
                    fs.add(pool.submit(() -> KMeansGpu.step(dev, p, centres, 64, false, s, true, null, null, false)));
                }
                for (Future<long[]> f : fs) {
                    assertArrayEquals(expected, f.get(), threads + " threads");
                }
            } finally {
                pool.shutdown();
            }
        }
        assertEquals(baseline, dev.allocatedBytes(), "device memory held by buffers after the passes");
    }

    /** GPU vs twin on one adversarial set: labels, distances and accumulator; returns the recheck count. */
    private static long compareAdversarial(CudaDevice dev, KMeansAdversarialData a) {
        compare(dev, a.data, a.centres, a.k, false);
        boolean screened = KMeansGpu.lastKernel().startsWith("kmeans_filt_");
        boolean expectScreened = a.data.d <= KMeansGpu.FILTER_MAX_D && KMeansGpu.useFilter
                && KMeansGpu.filterFloatBytes(a.k, a.data.d) <= dev.maxSharedMemoryOptin() - 1024;
        assertEquals(expectScreened, screened, "kernel " + KMeansGpu.lastKernel() + " for " + a);
        assertEquals(a.data.n, KMeansGpu.lastPointCount());
        assertTrue(KMeansGpu.lastRecheckCount() <= a.data.n);
        return KMeansGpu.lastRecheckCount();
    }

    /**
     * The FP32 screening kernels against the twin on adversarial data: exact ties on integer grids, duplicate
     * centres, data far from the origin (1e6 + 1e-3 noise), 1e30 and 1e-30 scales, dimensions of scale 1e-20
     * to 1e20, points within ulps of a bisector, zero weights. d covers every screening kernel and its
     * padding (and 100, 3000: the FP64 generic kernel), k = 1, 2, 3, 64, 1000. The recheck path must
     * actually run on the tie data (otherwise this test would prove nothing about it).
     */
    @Test
    void screeningKernelsEqualTheTwinOnAdversarialData() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(2024);
        java.util.Map<String, Long> rechecks = new java.util.TreeMap<>();
        int cases = 0;
        for (String kind : KMeansAdversarialData.KINDS) {
            for (int d : new int[] {1, 3, 5, 8, 16, 31, 32, 33, 64, 100}) {
                for (int k : new int[] {1, 2, 3, 64}) {
                    int n = 700 + 37 * d + k; // never a multiple of the block size
                    long rc = compareAdversarial(dev, KMeansAdversarialData.make(kind, r, n, d, k));
                    if (k > 1) {
                        rechecks.merge(kind, rc, Long::sum);
                    }
                    cases++;
                }
            }
            for (int d : new int[] {3, 32}) {
                compareAdversarial(dev, KMeansAdversarialData.make(kind, r, 2500, d, 1000));
                cases++;
            }
        }
        System.out.println("GPU screening rechecks per kind (k > 1): " + rechecks);
        for (String kind : new String[] {"ties", "duplicates", "neartie"}) {
            assertTrue(rechecks.get(kind) > 0, "the recheck path never ran on " + kind + " data: " + rechecks);
        }
        assertTrue(cases >= KMeansAdversarialData.KINDS.length * 42, "cases " + cases);
    }

    /**
     * The sorted accumulation's segments: every point in one cluster (segments far longer than a warp's groups
     * and a tile's worth of one label), labels spread over k = 1000 (most segments empty or of one point), and
     * the benchmark shape d = 32, k = 64 on blobs in random order; both modes equal the twin, and both kernel
     * families (FP32 screening and FP64) run the sorted variant.
     */
    @Test
    void sortedAccumulationOnSkewedAndSpreadLabels() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(4242);
        for (int d : new int[] {1, 5, 8, 16, 24, 32, 40, 64}) {
            // one cluster takes everything: centre 0 at the data, the others far away
            KMeansData p = data(r, 70_001 + d, d, false);
            double[] centres = new double[64 * d];
            for (int c = 1; c < 64; c++) {
                for (int j = 0; j < d; j++) {
                    centres[c * d + j] = 1e6 * c;
                }
            }
            compare(dev, p, centres, 64, false);
            compare(dev, data(r, 30_011, d, false), 1000, false, r.nextLong());
            compare(dev, data(r, 5_003, d, false), 1, false, r.nextLong());
            KMeansGpu.useFilter = false;
            try {
                compare(dev, p, centres, 64, false);
                assertTrue(KMeansGpu.lastKernel().startsWith("kmeans_step_d"), KMeansGpu.lastKernel());
            } finally {
                KMeansGpu.useFilter = true;
            }
        }
        KMeansAdversarialData b = KMeansAdversarialData.blobs(r, 200_003, 32, 64, 1.0);
        compare(dev, b.data, b.centres, b.k, false);
        assertTrue(RUNS.getOrDefault("sorted", 0) >= 8 * 4, "sorted runs: " + RUNS);
        assertTrue(RUNS.getOrDefault("atomic", 0) >= 8 * 4, "atomic runs: " + RUNS);
    }

    /** d = 3000 (spark-rapids-ml's benchmark width) runs the FP64 generic kernel and equals the twin. */
    @Test
    void wideRowsUseTheGenericKernel() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(3000);
        for (int k : new int[] {1, 2, 1000}) {
            KMeansAdversarialData a = KMeansAdversarialData.make("gauss", r, k == 1000 ? 300 : 1100, 3000, k);
            assertEquals(0, compareAdversarial(dev, a));
            assertEquals("kmeans_step_dany", KMeansGpu.lastKernel());
        }
    }

    /** Separated blobs: almost no point needs the FP64 recheck (< 1%), at the benchmark's d = 32, k = 64. */
    @Test
    void rechecksAreRareOnSeparatedBlobs() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(31);
        for (int d : new int[] {8, 32, 64}) {
            KMeansAdversarialData a = KMeansAdversarialData.blobs(r, 100_003, d, 64, 1.0);
            long rc = compareAdversarial(dev, a);
            assertTrue(KMeansGpu.lastKernel().startsWith("kmeans_filt_"), KMeansGpu.lastKernel());
            System.out.printf("GPU screening on blobs d=%d k=64: %s, %d rechecks of %d points%n", d,
                    KMeansGpu.lastKernel(), rc, a.data.n);
            assertTrue(rc < a.data.n / 100, "rechecks " + rc + " of " + a.data.n + " at d=" + d);
        }
        // and near-ties do trigger it, counted by the device counter
        KMeansAdversarialData t = KMeansAdversarialData.make("neartie", r, 20_000, 32, 64);
        assertTrue(compareAdversarial(dev, t) > 0, "near-tie points must be rechecked");
    }

    /** The screening kernels and the FP64 kernels give the same bits (both equal the twin). */
    @Test
    void screeningAndFp64KernelsAgree() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(32);
        for (String kind : new String[] {"far", "neartie", "gauss"}) {
            KMeansAdversarialData a = KMeansAdversarialData.make(kind, r, 5003, 32, 64);
            KMeansScales s = a.scales();
            int[] l1 = new int[a.data.n];
            int[] l2 = new int[a.data.n];
            double[] d1 = new double[a.data.n];
            double[] d2 = new double[a.data.n];
            long[] f = KMeansGpu.step(dev, a.data, a.centres, a.k, false, s, true, l1, d1, false);
            assertTrue(KMeansGpu.lastKernel().startsWith("kmeans_filt_"));
            KMeansGpu.useFilter = false;
            try {
                long[] g = KMeansGpu.step(dev, a.data, a.centres, a.k, false, s, true, l2, d2, false);
                assertEquals("kmeans_step_d32", KMeansGpu.lastKernel());
                assertArrayEquals(g, f, kind);
            } finally {
                KMeansGpu.useFilter = true;
            }
            assertArrayEquals(l2, l1, kind);
            assertArrayEquals(d2, d1, 0.0, kind);
        }
    }

    /** k-means|| cost passes (no accumulator, distances min-updated) through the screening kernels. */
    @Test
    void minUpdateThroughTheScreeningKernels() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(33);
        for (String kind : KMeansAdversarialData.KINDS) {
            for (int d : new int[] {3, 32, 64}) {
                KMeansAdversarialData a = KMeansAdversarialData.make(kind, r, 3001, d, 5);
                double[] dc = new double[a.data.n];
                for (int i = 0; i < dc.length; i++) {
                    dc[i] = i % 3 == 0 ? Double.POSITIVE_INFINITY : i % 3 == 1 ? 0.0 : r.nextDouble();
                }
                double[] dg = dc.clone();
                KMeansCpu.step(a.data, a.centres, a.k, false, null, false, null, dc, true);
                KMeansGpu.step(dev, a.data, a.centres, a.k, false, null, false, null, dg, true);
                assertTrue(KMeansGpu.lastKernel().startsWith("kmeans_filt_"));
                assertArrayEquals(dc, dg, 0.0, a.toString());
            }
        }
    }
}
