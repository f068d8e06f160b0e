package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.common.DetMath;
import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU kernels vs CPU twin, bitwise: kNN graphs (indices and float distances), exp/log, conditional affinities.
 * Sizes are awkward on purpose: n not a multiple of the 64-row tiles, d = 1, 3, 50, 784 (not a multiple of the
 * 32-dimension chunks), k up to n - 1 and 300, exact ties and duplicates, offsets, padding, forced chunking.
 */
@Tag("gpu")
class TsneAffinitiesGpuTest {

    static void assertSame(KnnGraph want, KnnGraph got, String what) {
        assertEquals(want.rowOffset, got.rowOffset, what);
        assertEquals(want.rows, got.rows, what);
        assertArrayEquals(want.index, got.index, what + ": indices");
        assertArrayEquals(want.dist2, got.dist2, what + ": distances");
    }

    @Test
    void knnMatchesCpuTwinBitwise() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(21);
        int[][] shapes = {{2, 1, 1}, {65, 1, 64}, {130, 3, 129}, {257, 3, 90}, {200, 50, 199}, {150, 784, 30},
            {1000, 50, 90}, {333, 17, 300}, {129, 2, 5}};
        for (int[] s : shapes) {
            for (boolean ties : new boolean[] {false, true}) {
                int n = s[0];
                int d = s[1];
                int k = s[2];
                float[] x = TsneAffinitiesTest.data(r, n, d, ties);
                KnnGraph cpu = TsneAffinities.knn(x, n, d, k, Backend.CPU);
                KnnGraph gpu = TsneAffinities.knn(x, n, d, k, Backend.GPU);
                assertSame(cpu, gpu, "n=" + n + " d=" + d + " k=" + k + " ties=" + ties);
            }
        }
    }

    @Test
    void knnBlocksPaddingAndChunkingMatchCpu() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(22);
        int n = 700;
        int d = 3;
        int k = 40;
        float[] x = TsneAffinitiesTest.data(r, n, d, true);
        int[][] blocks = {{0, 700, 0, 700}, {13, 100, 0, 20}, {100, 333, 50, 500}, {650, 50, 1, 699}, {0, 1, 0, 2}};
        long saved = TsneAffinitiesGpu.chunkBytes;
        try {
            for (long chunk : new long[] {saved, 4096}) { // 4096 B: many query and reference chunks
                TsneAffinitiesGpu.chunkBytes = chunk;
                for (int[] b : blocks) {
                    float[] q = Arrays.copyOfRange(x, b[0] * d, (b[0] + b[1]) * d);
                    float[] ref = Arrays.copyOfRange(x, b[2] * d, (b[2] + b[3]) * d);
                    KnnGraph cpu = TsneAffinities.knnBlock(q, b[0], b[1], ref, b[2], b[3], d, k, n, Backend.CPU);
                    KnnGraph gpu = TsneAffinities.knnBlock(q, b[0], b[1], ref, b[2], b[3], d, k, n, Backend.GPU);
                    assertSame(cpu, gpu, "block " + Arrays.toString(b) + " chunk " + chunk);
                }
            }
        } finally {
            TsneAffinitiesGpu.chunkBytes = saved;
        }
    }

    @Test
    void mathMatchesCpuTwinBitwise() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random r = new Random(23);
        double[] x = new double[200000];
        for (int i = 0; i < x.length; i++) {
            switch (i % 4) {
                case 0: x[i] = -r.nextDouble() * 760; break;
                case 1: x[i] = -r.nextDouble() * 1e-3; break;
                case 2: x[i] = r.nextDouble() * Math.pow(10, r.nextInt(40) - 20); break;
                default: x[i] = Double.longBitsToDouble(r.nextLong() & 0x7FEFFFFFFFFFFFFFL); break;
            }
        }
        x[0] = 0.0;
        x[1] = Double.MIN_VALUE;
        x[2] = 709.0;
        x[3] = -745.1;
        double[][] got = TsneAffinitiesGpu.math(dev, x);
        for (int i = 0; i < x.length; i++) {
            assertEquals(Double.doubleToRawLongBits(DetMath.exp(x[i])), Double.doubleToRawLongBits(got[0][i]),
                    "exp(" + x[i] + ")");
            assertEquals(Double.doubleToRawLongBits(DetMath.log(x[i])), Double.doubleToRawLongBits(got[1][i]),
                    "log(" + x[i] + ")");
        }
    }

    @Test
    void conditionalMatchesCpuTwinBitwise() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(24);
        int[][] shapes = {{300, 5, 90, 30}, {333, 17, 300, 100}, {65, 1, 64, 20}, {1000, 50, 90, 30}, {200, 3, 12, 3}};
        for (int[] s : shapes) {
            int n = s[0];
            float[] x = TsneAffinitiesTest.data(r, n, s[1], false);
            for (int i = 0; i < Math.min(n, 5) * s[1]; i++) {
                x[i] *= 300f; // outliers: very different bandwidths
            }
            KnnGraph g = TsneAffinities.knn(x, n, s[1], s[2], Backend.CPU);
            double[] cpu = TsneAffinities.conditional(g, s[3], Backend.CPU);
            double[] gpu = TsneAffinities.conditional(g, s[3], Backend.GPU);
            assertArrayEquals(cpu, gpu, "n=" + n + " k=" + s[2]);
            for (int i = 0; i < n; i++) {
                assertEquals(s[3], TsneAffinitiesTest.perplexity(gpu, i * s[2], s[2]), 1e-5);
            }
        }
    }
}
