package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneForcesTestData;
import io.sparkgpu.tsne.TsneGridOptions;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The S2G and G2S kernels (tsne_s2g_d*, tsne_g2s_d*) against their CPU twins, bit for bit, on awkward sizes (1 row,
 * window edges, p = 1..8, dims 1-3), and the whole repulsive pipeline for several row splits.
 */
@Tag("gpu")
class GridRepulsionGpuTest {
    @Test
    void s2gAndG2sKernelsEqualTwinsBitForBit() {
        GpuTestSupport.deviceOrSkip();
        long seed = 100;
        for (int dim = 1; dim <= 3; dim++) {
            for (int p = 1; p <= 8; p++) {
                if (dim == 3 && p > 5 && p != 8) {
                    continue;
                }
                for (int rows : new int[] {1, 255, 257, 3001}) {
                    long nTotal = rows + 1000L;
                    double[] y = TsneForcesTestData.clusters(rows, dim, 3, 25, seed++);
                    int boxes = dim == 3 ? 5 : 9;
                    TsneGridOptions opt = new TsneGridOptions(p, 0.3, boxes, new int[] {0, boxes, boxes, boxes});
                    InterpGrid g = TsneForcesTestData.plan(y, rows, dim, opt);
                    String what = "dim " + dim + " p " + p + " rows " + rows;
                    long[] cpu = GridRepulsionCpu.s2g(g, nTotal, y, rows);
                    assertArrayEquals(cpu, GridRepulsion.s2g(g, nTotal, y, rows, Backend.GPU), what + ": S2G");
                    double[] phi = new double[g.charges() * g.nodes()];
                    Random r = new Random(seed++);
                    for (int t = 0; t < phi.length; t++) {
                        phi[t] = r.nextDouble() * nTotal * (t < g.nodes() ? 1 : 10);
                    }
                    Repulsion c = GridRepulsionCpu.g2s(g, nTotal, GridRepulsion.zShift(nTotal), phi, y, rows);
                    Repulsion gg = GridRepulsion.g2s(g, nTotal, phi, y, rows, Backend.GPU);
                    assertArrayEquals(c.force, gg.force, 0.0, what + ": G2S forces");
                    assertArrayEquals(c.zFixed, gg.zFixed, what + ": z sum");
                    assertEquals(c.zShift, gg.zShift);
                }
            }
        }
    }

    /** The whole repulsive pipeline on the GPU equals the CPU pipeline for 1, 2 and 5 row slices. */
    @Test
    void gpuPipelineEqualsCpuPipelineForAnySplit() {
        GpuTestSupport.deviceOrSkip();
        for (int dim = 1; dim <= 3; dim++) {
            int n = 1203;
            double[] y = TsneForcesTestData.clusters(n, dim, 4, 20, 70 + dim);
            TsneGridOptions opt = new TsneGridOptions(3, 1.0, 8, new int[] {0, 400, 200, 40});
            GridRepulsionTest.Rep cpu = GridRepulsionTest.repulsion(y, n, dim, opt, new int[] {0, n}, Backend.CPU);
            for (int[] cuts : new int[][] {{0, n}, {0, 600, n}, {0, 1, 300, 301, 900, n}}) {
                GridRepulsionTest.Rep gpu = GridRepulsionTest.repulsion(y, n, dim, opt, cuts, Backend.GPU);
                assertArrayEquals(cpu.charges, gpu.charges, "dim " + dim);
                assertArrayEquals(cpu.force, gpu.force, 0.0, "dim " + dim);
                assertArrayEquals(cpu.zTotal, gpu.zTotal, "dim " + dim);
            }
        }
    }
}
