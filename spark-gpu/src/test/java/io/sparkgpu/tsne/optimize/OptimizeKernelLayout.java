package io.sparkgpu.tsne.optimize;

import io.sparkgpu.testutil.KernelHeader;

/**
 * The attractive term and device-resident iteration part of io.sparkgpu.tsne.TsneKernelLayoutTest
 * (include/layout/tsne.cuh against {@link AttractiveForcesGpu}, {@link TsneDeviceState}, {@link SellRows}), here
 * because the constants are package-private.
 */
public final class OptimizeKernelLayout {
    private OptimizeKernelLayout() {
    }

    public static void check(KernelHeader h) {
        h.assertValue("TSNE_BLOCK", AttractiveForcesGpu.BLOCK);
        h.assertValue("TSNE_BLOCK", TsneDeviceState.BLOCK);
        h.assertValue("TSNE_SELL_C", SellRows.C);
    }
}
