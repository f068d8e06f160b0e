package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneConfig;
import io.sparkgpu.tsne.TsneGridOptions;
import io.sparkgpu.tsne.TsneResult;
import io.sparkgpu.tsne.TsneTestData;
import io.sparkgpu.tsne.TsneTimings;
import io.sparkgpu.tsne.affinity.SparseRows;
import io.sparkgpu.tsne.init.TsneInit;
import io.sparkgpu.tsne.repulsion.GridConvolution;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The heavy-tailed kernel (dof != 1) and late exaggeration on the GPU against the CPU twins, bit for bit: each phase
 * on its own (attractive, exact repulsion, S2G/G2G/G2S with DIRECT and FFT, through the host-array wrappers) and the
 * device-resident iteration, in 1-, 2- and 3-D.
 */
@Tag("gpu")
class HeavyTailGpuTest {

    private static TsneConfig config(int dim, double dof, GridConvolution.Method m, Backend b) {
        TsneConfig cfg = new TsneConfig();
        cfg.repulsion = m == null ? TsneConfig.REPULSION_EXACT : TsneConfig.REPULSION_GRID;
        cfg.convolution = m == null ? GridConvolution.Method.AUTO : m;
        cfg.dimension = dim;
        cfg.perplexity = 10;
        cfg.maxIter = 60;
        cfg.exaggerationIterations = 20;
        cfg.lateExaggeration = 2.5;
        cfg.lateExaggerationIter = 45;
        cfg.klEvery = 20;
        cfg.dof = dof;
        cfg.backend = b;
        cfg.grid = new TsneGridOptions(dim == 3 ? 3 : 4, 2.0, 3, new int[] {0, 400, 10, 4});
        return cfg;
    }

    @Test
    void phasesGiveTheTwinBits() {
        GpuTestSupport.deviceOrSkip();
        for (int dim = 1; dim <= 3; dim++) {
            TsneTestData data = TsneTestData.clusters(4, 70, 8, 60 + dim);
            SparseRows p = data.densePerplexityP(10);
            double[] y = TsneInit.random(data.n, dim, 7);
            for (int t = 0; t < y.length; t++) {
                y[t] *= 5e4; // spread out, so that the grid has many boxes
            }
            for (double dof : new double[] {0.5, 1.0, 1.6}) {
                for (GridConvolution.Method m : new GridConvolution.Method[] {GridConvolution.Method.DIRECT,
                        GridConvolution.Method.FFT, null}) {
                    String what = "dim " + dim + " dof " + dof + " " + (m == null ? "exact" : m);
                    GradientSource.Forces[] f = new GradientSource.Forces[2];
                    Backend[] backends = {Backend.CPU, Backend.GPU};
                    for (int b = 0; b < 2; b++) {
                        TsneConfig cfg = config(dim, dof, m, backends[b]);
                        try (GradientSource src = new LocalGradientSource(p, dim, cfg.grid, cfg.convolution,
                                backends[b], m == null, dof)) {
                            f[b] = src.forces(y, true, new TsneTimings());
                        }
                    }
                    assertArrayEquals(f[0].attr, f[1].attr, 0.0, what + ": attractive");
                    assertArrayEquals(f[0].rep, f[1].rep, 0.0, what + ": repulsive");
                    assertEquals(f[0].z, f[1].z, 0.0, what + ": Z");
                    assertArrayEquals(f[0].kl, f[1].kl, what + ": KL");
                }
            }
        }
    }

    @Test
    void deviceLoopGivesTheHostLoopBits() {
        GpuTestSupport.deviceOrSkip();
        for (int dim = 1; dim <= 3; dim++) {
            TsneTestData data = TsneTestData.clusters(4, 65, 8, 80 + dim);
            SparseRows p = data.densePerplexityP(10);
            double[] y0 = TsneInit.random(data.n, dim, 11);
            for (double dof : new double[] {0.4, 1.5}) {
                for (GridConvolution.Method m : new GridConvolution.Method[] {GridConvolution.Method.DIRECT,
                        GridConvolution.Method.FFT, null}) {
                    String what = "dim " + dim + " dof " + dof + " " + (m == null ? "exact" : m);
                    TsneResult cpu = TsneOptimizer.optimize(p, y0, config(dim, dof, m, Backend.CPU), null);
                    TsneResult gpu = TsneOptimizer.optimize(p, y0, config(dim, dof, m, Backend.GPU), null);
                    assertArrayEquals(cpu.embedding, gpu.embedding, 0.0, what + ": embedding");
                    assertArrayEquals(cpu.klValues, gpu.klValues, 0.0, what + ": KL");
                }
            }
        }
    }
}
