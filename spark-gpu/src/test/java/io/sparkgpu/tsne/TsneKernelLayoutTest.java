package io.sparkgpu.tsne;

import io.sparkgpu.testutil.KernelHeader;
import io.sparkgpu.tsne.affinity.AffinityKernelLayout;
import io.sparkgpu.tsne.optimize.OptimizeKernelLayout;
import io.sparkgpu.tsne.repulsion.RepulsionKernelLayout;
import org.junit.jupiter.api.Test;

/**
 * The host side of the tsne module (affinity: TsneAffinitiesGpu; optimize: AttractiveForcesGpu, SellRows,
 * TsneDeviceState; repulsion: GridRepulsionGpu, G2GGpu, G2GPlan, InterpGrid; TsneGridOptions) agrees with the sizes
 * and layouts the kernels use (native-kernels/src/main/cuda/include/layout/tsne.cuh), every define of which is
 * compared, and every G2G pass the plan can ask for exists. Each sub-package checks its own package-private constants
 * (its *KernelLayout helper).
 */
class TsneKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/tsne.cuh");
        AffinityKernelLayout.check(h);
        OptimizeKernelLayout.check(h);
        RepulsionKernelLayout.check(h);
        h.assertValue("TSNE_MAX_P", TsneGridOptions.MAX_P);
        h.assertAllCompared();
    }

    /** tsne_g2g_pass_R exists for every radix a plan can use: the 5-smooth numbers 2..MAX_RADIX. */
    @Test
    void everyG2GPassExists() {
        RepulsionKernelLayout.everyG2GPassExists();
    }
}
