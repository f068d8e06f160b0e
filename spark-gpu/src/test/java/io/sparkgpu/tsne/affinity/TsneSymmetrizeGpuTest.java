package io.sparkgpu.tsne.affinity;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import java.util.Random;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * GPU symmetrisation (tsne_sym_*) vs JointProbabilities.symmetrize, bitwise: random graphs with k = 1 and k = n - 1,
 * mutual and one-way neighbours, a hub whose in-degree passes the kernel's shared-memory capacity (2048, so the
 * in-place global-memory sort runs), rows nobody points to, and a real kNN graph with duplicates.
 */
@Tag("gpu")
class TsneSymmetrizeGpuTest {

    @Test
    void symmetrizeMatchesCpuTwinBitwise() {
        GpuTestSupport.deviceOrSkip();
        Random r = new Random(31);
        int[][] shapes = {{2, 1}, {7, 6}, {300, 1}, {1000, 17}, {3001, 5}, {513, 90}};
        for (int[] s : shapes) {
            for (boolean hub : new boolean[] {false, true}) {
                KnnGraph g = TsneSymmetrizeTest.randomGraph(r, s[0], s[1], hub);
                double[] pc = TsneSymmetrizeTest.randomPcond(r, g);
                TsneSymmetrizeTest.assertSame(JointProbabilities.symmetrize(g, pc),
                        TsneAffinities.symmetrize(g, pc, Backend.GPU, null), "n=" + s[0] + " k=" + s[1] + " hub=" + hub);
            }
        }
        int n = 700;
        int d = 5;
        float[] x = TsneAffinitiesTest.data(r, n, d, false); // no lattice ties: perplexity 10 must be reachable
        KnnGraph g = TsneAffinities.knn(x, n, d, 30, Backend.CPU);
        double[] pc = TsneAffinities.conditional(g, 10, Backend.CPU);
        TsneSymmetrizeTest.assertSame(JointProbabilities.symmetrize(g, pc), TsneAffinities.symmetrize(g, pc, Backend.GPU, null), "kNN");
        // calibration and symmetrisation in one step (p_{j|i} kept on the device) give the two steps' bits
        TsneSymmetrizeTest.assertSame(JointProbabilities.symmetrize(g, pc), TsneAffinities.joint(g, 10, Backend.GPU,
                null), "joint, GPU");
    }
}
