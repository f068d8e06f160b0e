package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import io.sparkgpu.tsne.repulsion.GridRepulsion;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The device-resident iteration ({@link TsneDeviceState}) against the host loop with the CPU twins, bit for bit: the
 * fixed-point conversion kernel on random and edge values, and whole short runs in 1-, 2- and 3-D with DIRECT and
 * FFT G2G and with the exact repulsion on awkward sizes, KL history included; divergence is reported as on the CPU.
 */
@Tag("gpu")
class TsneDeviceStateGpuTest {

    @Test
    void fixedToDoubleKernelEqualsTheJavaRounding() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        Random rnd = new Random(5);
        int nodes = 4099;
        int[] shifts = {0, 40, 90, 123, 7};
        long[] acc = new long[2 * shifts.length * nodes];
        for (int t = 0; t < acc.length / 2; t++) {
            switch (t % 6) {
                case 0: // fits in 64 bits, either sign
                    acc[2 * t] = rnd.nextLong();
                    acc[2 * t + 1] = acc[2 * t] < 0 ? -1 : 0;
                    break;
                case 1: // just beyond 64 bits
                    acc[2 * t] = rnd.nextLong();
                    acc[2 * t + 1] = rnd.nextBoolean() ? 1 : -2;
                    break;
                case 2: // ties at the rounding position: low bits 100..0 below 53 significant bits
                    acc[2 * t] = (rnd.nextLong() & ~0x7FFL) | 0x400L;
                    acc[2 * t + 1] = (rnd.nextLong() >>> (4 + rnd.nextInt(50))) | 1L;
                    break;
                case 3: // a tie broken by a sticky bit far below
                    acc[2 * t] = 1L;
                    acc[2 * t + 1] = (1L << 55) | (1L << 3);
                    break;
                default: // anything below 2^124 in magnitude
                    acc[2 * t] = rnd.nextLong();
                    acc[2 * t + 1] = rnd.nextLong() >> (4 + rnd.nextInt(60));
            }
        }
        double[] gpu = TsneDeviceState.fixedToDouble(dev, acc, nodes, shifts);
        for (int t = 0; t < gpu.length; t++) {
            double cpu = GridRepulsion.toDouble(acc[2 * t], acc[2 * t + 1], shifts[t / nodes]);
            assertEquals(Double.doubleToRawLongBits(cpu), Double.doubleToRawLongBits(gpu[t]),
                    "value " + t + ": lo " + acc[2 * t] + " hi " + acc[2 * t + 1] + " shift " + shifts[t / nodes]);
        }
    }

    /** m null: the exact repulsion; else the grid with G2G method m. */
    private static TsneResult run(SparseRows p, int n, int dim, Backend b, GridConvolution.Method m, int iters) {
        TsneConfig cfg = new TsneConfig();
        cfg.repulsion = m == null ? TsneConfig.REPULSION_EXACT : TsneConfig.REPULSION_GRID;
        cfg.dimension = dim;
        cfg.perplexity = 10;
        cfg.maxIter = iters;
        cfg.exaggerationIterations = iters / 2;
        cfg.klEvery = 20;
        cfg.backend = b;
        cfg.convolution = m == null ? GridConvolution.Method.AUTO : m;
        // capped grids keep the CPU twin affordable; the growth of the grid is still exercised
        cfg.grid = new TsneGridOptions(dim == 3 ? 3 : 4, 2.0, 3, new int[] {0, 400, 10, 4});
        cfg.validate(n);
        return TsneOptimizer.optimize(p, TsneInit.random(n, dim, 11), cfg, null);
    }

    @Test
    void deviceLoopGivesTheHostLoopBits() {
        GpuTestSupport.deviceOrSkip();
        int[] sizes = {257, 1000};
        for (int dim = 1; dim <= 3; dim++) {
            for (int n : sizes) {
                TsneTestData data = TsneTestData.clusters(4, n / 4, 8, 30 + n + dim);
                n = data.n;
                SparseRows p = data.densePerplexityP(10);
                for (GridConvolution.Method m : new GridConvolution.Method[] {GridConvolution.Method.DIRECT,
                        GridConvolution.Method.FFT, null}) {
                    String what = "dim " + dim + " n " + n + " " + (m == null ? "exact" : m);
                    TsneResult cpu = run(p, n, dim, Backend.CPU, m, 80);
                    TsneResult gpu = run(p, n, dim, Backend.GPU, m, 80);
                    assertArrayEquals(cpu.embedding, gpu.embedding, 0.0, what + ": embedding");
                    assertArrayEquals(cpu.klIterations, gpu.klIterations, what + ": KL iterations");
                    assertArrayEquals(cpu.klValues, gpu.klValues, 0.0, what + ": KL");
                    System.err.printf("[tsne-device] %s: KL %.5f, per iteration %.3f ms GPU vs %.3f ms CPU%n", what,
                            gpu.finalKl(), 1e3 * iterationSeconds(gpu.timings), 1e3 * iterationSeconds(cpu.timings));
                }
            }
        }
    }

    private static double iterationSeconds(TsneTimings t) {
        double s = 0;
        for (TsneTimings.Phase ph : new TsneTimings.Phase[] {TsneTimings.Phase.ATTRACTIVE, TsneTimings.Phase.S2G,
                TsneTimings.Phase.G2G, TsneTimings.Phase.G2S, TsneTimings.Phase.EXACT, TsneTimings.Phase.UPDATE}) {
            s += t.secondsPerIteration(ph);
        }
        return s;
    }

    @Test
    void divergenceIsReportedAsOnTheCpu() {
        GpuTestSupport.deviceOrSkip();
        TsneTestData data = TsneTestData.clusters(3, 40, 5, 77);
        SparseRows p = data.densePerplexityP(10);
        Backend[] backends = {Backend.CPU, Backend.GPU};
        for (String repulsion : new String[] {TsneConfig.REPULSION_GRID, TsneConfig.REPULSION_EXACT}) {
            String[] seen = new String[2];
            for (int b = 0; b < 2; b++) {
                TsneConfig cfg = new TsneConfig();
                cfg.perplexity = 10;
                cfg.maxIter = 200;
                cfg.learningRate = 1e300;
                cfg.backend = backends[b];
                cfg.repulsion = repulsion;
                cfg.grid = new TsneGridOptions(4, 2.0, 3, new int[] {0, 400, 10, 4});
                RuntimeException e = assertThrows(RuntimeException.class,
                        () -> TsneOptimizer.optimize(p, TsneInit.random(data.n, 2, 3), cfg, null), backends[b].name());
                seen[b] = e.getClass().getSimpleName() + ": " + e.getMessage();
                System.err.println("[tsne-device] " + repulsion + " " + backends[b] + ": " + seen[b]);
            }
            assertEquals(seen[0], seen[1], repulsion + ": the GPU loop fails as the CPU loop does");
            assertTrue(seen[0].startsWith("ArithmeticException"), seen[0]);
        }
    }
}
