package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.BackendChooser;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU kernels against their CPU twins, bitwise: every comparison is exact, so the blocks and their 128-bit sums
 * must be identical (no tolerance). No Spark types here: these run in the Spark-free GPU bundle.
 */
@Tag("gpu")
class IsotonicGpuTest {
    private static final int[] SIZES = {1, 2, 3, 31, 32, 33, 127, 255, 256, 257, 1000, 4097, 65_537, 1_000_003};

    private static IsoPoints random(int n, long seed, int shape) {
        SplittableRandom r = new SplittableRandom(seed);
        double[] s = new double[n];
        double[] w = new double[n];
        for (int i = 0; i < n; i++) {
            w[i] = shape == 0 ? 0.25 + r.nextDouble() : 1.0;
            switch (shape) {
                case 1: s[i] = n - i; break;                                  // strictly decreasing
                case 2: s[i] = (i % 2 == 0) ? i : i - 3; break;               // saw-tooth
                case 3: s[i] = 1.5; break;                                    // constant
                case 4: s[i] = i == n - 1 ? -1e9 : i; break;                  // increasing, then a cliff
                default: s[i] = Math.sqrt(i) + 5 * r.nextGaussian();          // noisy increasing
            }
        }
        return IsoTestData.sums(s, w);
    }

    @Test
    void pavaMergeEqualsCpuTwinBitwise() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : SIZES) {
            for (int shape = 0; shape <= 4; shape++) {
                IsoPoints p = random(n, 1000L * n + shape, shape);
                L2Blocks cpu = IsotonicCpu.pava(p);
                for (int chunk : new int[] {1, 7, 256, 1024}) {
                    if (chunk == 1 && n > 100_000) {
                        continue; // one thread per point: covered at smaller sizes
                    }
                    L2Blocks gpu = IsotonicGpu.pavaMerge(dev, p, chunk, null);
                    assertTrue(cpu.sameAs(gpu), "n=" + n + " shape=" + shape + " chunk=" + chunk + ": GPU " + gpu
                            + " vs CPU " + cpu);
                    if (n < 5000 && shape == 0) {
                        assertTrue(cpu.sameAs(IsotonicCpu.pavaMerge(p, chunk, 2)), "CPU PAVA-merge twin");
                    }
                }
            }
        }
    }

    @Test
    void mlsEqualsCpuTwinBitwise() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (int n : new int[] {1, 2, 33, 255, 257, 1025, 4097, 20_011}) {
            for (int shape = 0; shape <= 4; shape++) {
                IsoPoints p = random(n, 77L * n + shape, shape);
                L2Blocks ref = IsotonicCpu.pava(p);
                L2Blocks gpu = IsotonicGpu.mls(dev, p, null);
                assertTrue(ref.sameAs(gpu), "MLS n=" + n + " shape=" + shape + ": GPU " + gpu + " vs PAVA " + ref);
                if (n <= 4097) {
                    assertTrue(ref.sameAs(IsotonicCpu.mls(p, 2)), "CPU MLS twin n=" + n);
                }
            }
        }
    }

    @Test
    void solverUsesTheGpuAndKernelTimingIsReported() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        IsoTestData d = IsoTestData.noisy(300_001, 50_000, 5, true);
        IsoPoints p = d.points();
        BackendChooser.Ran<L2Blocks> ran = IsotonicSolver.solveL2(p, IsotonicConfig.Algorithm.PAVA, Backend.GPU, 256);
        assertEquals("gpu", ran.backend());
        assertNull(ran.fallbackReason());
        L2Blocks gpu = ran.value;
        assertTrue(gpu.sameAs(IsotonicCpu.pava(p)));
        IsoTestData.assertKkt(p, gpu, IsoScales.forData(d.y, d.w, d.x.length));
        double[] ms = new double[1];
        IsotonicGpu.pavaMerge(dev, p, 256, ms);
        assertTrue(ms[0] > 0, "kernel time " + ms[0]);
        long before = dev.allocatedBytes();
        IsotonicGpu.mls(dev, random(3000, 1, 0), ms);
        assertEquals(before, dev.allocatedBytes(), "device buffers released");
    }
}
