package io.sparkgpu.tsne.repulsion;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneForcesTestData;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The exact repulsion kernels (tsne_exact_d1..d3) against their CPU twin, bit for bit: awkward n (fewer points than
 * lanes, not a multiple of 32, more rows than one block), row slices at offsets, 1-, 2- and 3-D.
 */
@Tag("gpu")
class ExactRepulsionGpuTest {
    @Test
    void kernelsEqualTheTwinBitForBit() {
        GpuTestSupport.deviceOrSkip();
        for (int dim = 1; dim <= 3; dim++) {
            for (int n : new int[] {4, 33, 257, 3001}) {
                double[] y = TsneForcesTestData.clusters(n, dim, 4, 40, 97L * n + dim);
                int[][] slices = {{0, n}, {1, n - 1}, {n / 3, n - n / 3}, {n - 1, 1}};
                for (int[] sl : slices) {
                    String what = "dim " + dim + " n " + n + " rows " + sl[0] + "+" + sl[1];
                    Repulsion cpu = ExactRepulsionCpu.repulsion(y, n, dim, sl[0], sl[1], GridRepulsion.zShift(n));
                    Repulsion gpu = ExactRepulsion.repulsion(y, n, dim, sl[0], sl[1], Backend.GPU, null);
                    assertArrayEquals(cpu.force, gpu.force, 0.0, what + ": forces");
                    assertArrayEquals(cpu.zFixed, gpu.zFixed, what + ": z sum");
                }
            }
        }
    }
}
