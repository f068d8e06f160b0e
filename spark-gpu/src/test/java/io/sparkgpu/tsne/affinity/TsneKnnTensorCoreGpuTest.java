package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The tensor-core kNN (TF32 filter, exact re-rank, certificate, exact re-run of uncertified queries) vs the CPU
 * twin, bitwise: n not a multiple of the 64 x 128 tiles, d = 1 (mostly ties), 3, 17, 50, 784, duplicates, a
 * margin of 0 (most queries re-run), forced query and reference chunking, and query/reference blocks with offsets.
 */
@Tag("gpu")
class TsneKnnTensorCoreGpuTest {
    private static boolean before;

    /** The filter is off by default (measured slower, BENCHMARKS.md): these tests turn it on. */
    @BeforeAll
    static void tensorCoresOn() {
        before = TsneAffinitiesGpu.tensorCores;
        TsneAffinitiesGpu.tensorCores = true;
    }

    @AfterAll
    static void tensorCoresBack() {
        TsneAffinitiesGpu.tensorCores = before;
    }


    private static void requireTensorCores() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        org.junit.jupiter.api.Assumptions.assumeTrue(dev.computeCapability() >= 80, "needs sm_80+: " + dev);
    }

    private static void check(float[] x, int n, int d, int k, String what) {
        KnnGraph cpu = TsneAffinities.knn(x, n, d, k, Backend.CPU);
        TsneAffinitiesGpu.lastTensorCoreQueries = 0;
        KnnGraph gpu = TsneAffinities.knn(x, n, d, k, Backend.GPU);
        assertEquals(n, TsneAffinitiesGpu.lastTensorCoreQueries, what + ": the tensor-core path did not run");
        TsneAffinitiesGpuTest.assertSame(cpu, gpu, what + " (uncertified " + TsneAffinitiesGpu.lastUncertified + ")");
    }

    @Test
    void matchesCpuTwinBitwise() {
        requireTensorCores();
        Random r = new Random(41);
        int[][] shapes = {{1000, 50, 90}, {2001, 1, 30}, {700, 784, 40}, {1500, 3, 20}, {3001, 17, 60}, {333, 2, 5}};
        for (int[] s : shapes) {
            for (boolean ties : new boolean[] {false, true}) {
                float[] x = TsneAffinitiesTest.data(r, s[0], s[1], ties);
                check(x, s[0], s[1], s[2], "n=" + s[0] + " d=" + s[1] + " k=" + s[2] + " ties=" + ties);
            }
        }
    }

    @Test
    void filterCertifiesMostQueriesOfSpreadData() {
        requireTensorCores();
        Random r = new Random(42);
        int n = 4000;
        int d = 50;
        double[] centres = new double[10 * d]; // as the benchmark's blobs: centres in [-10, 10]^d, unit spread
        for (int t = 0; t < centres.length; t++) {
            centres[t] = 20 * r.nextDouble() - 10;
        }
        float[] x = new float[n * d];
        for (int i = 0; i < n; i++) {
            for (int t = 0; t < d; t++) {
                x[i * d + t] = (float) (centres[(i % 10) * d + t] + r.nextGaussian());
            }
        }
        check(x, n, d, 90, "clusters");
        assertTrue(TsneAffinitiesGpu.lastUncertified < n / 2, TsneAffinitiesGpu.lastUncertified + " of " + n
                + " queries uncertified: the filter margin is too small for this data");
    }

    @Test
    void zeroMarginAndChunkingStayExact() {
        requireTensorCores();
        Random r = new Random(43);
        int n = 1300;
        int d = 50;
        float[] x = TsneAffinitiesTest.data(r, n, d, false);
        int savedMargin = TsneAffinitiesGpu.margin;
        long savedChunk = TsneAffinitiesGpu.chunkBytes;
        try {
            TsneAffinitiesGpu.margin = 0; // C = k: most queries are re-run by the exact kernel
            check(x, n, d, 30, "margin 0");
            assertTrue(TsneAffinitiesGpu.lastUncertified > 0, "margin 0 should leave queries uncertified");
            TsneAffinitiesGpu.margin = -1;
            TsneAffinitiesGpu.chunkBytes = 200_000; // several query and reference chunks
            check(x, n, d, 30, "chunked");
            float[] q = java.util.Arrays.copyOfRange(x, 100 * d, 400 * d);
            float[] ref = java.util.Arrays.copyOfRange(x, 50 * d, 1250 * d);
            KnnGraph cpu = TsneAffinities.knnBlock(q, 100, 300, ref, 50, 1200, d, 30, n, Backend.CPU);
            KnnGraph gpu = TsneAffinities.knnBlock(q, 100, 300, ref, 50, 1200, d, 30, n, Backend.GPU);
            TsneAffinitiesGpuTest.assertSame(cpu, gpu, "blocks with offsets, chunked");
        } finally {
            TsneAffinitiesGpu.margin = savedMargin;
            TsneAffinitiesGpu.chunkBytes = savedChunk;
        }
    }
}
