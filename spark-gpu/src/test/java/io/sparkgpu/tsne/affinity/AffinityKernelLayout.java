package io.sparkgpu.tsne.affinity;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.testutil.KernelHeader;

/**
 * The kNN and affinities part of io.sparkgpu.tsne.TsneKernelLayoutTest (include/layout/tsne.cuh against
 * {@link TsneAffinitiesGpu}), here because the constants are package-private.
 */
public final class AffinityKernelLayout {
    private AffinityKernelLayout() {
    }

    public static void check(KernelHeader h) {
        h.assertValue("TSNE_KNN_THREADS", TsneAffinitiesGpu.KNN_THREADS);
        h.assertValue("TSNE_KNN_KQ", TsneAffinitiesGpu.KQ);
        h.assertValue("TSNE_KNN_KD", TsneAffinitiesGpu.KD);
        assertEquals(h.eval("TSNE_KNN_KR", TsneAffinitiesGpu.RPT), TsneAffinitiesGpu.KR);
        assertEquals(TsneAffinitiesGpu.RPT == 4 ? "tsne_knn_tile" : "tsne_knn_tile8", TsneAffinitiesGpu.KNN_KERNEL);
        for (int k : new int[] {1, 5, 30, 90, 150}) {
            for (int qDims : new int[] {TsneAffinitiesGpu.KD, 64, 96, 800}) {
                assertEquals(h.eval("TSNE_KNN_SHARED_BYTES", k, qDims, TsneAffinitiesGpu.RPT),
                        TsneAffinitiesGpu.knnSharedBytes(k, qDims), "knnSharedBytes(" + k + ", " + qDims + ")");
            }
            assertEquals(h.eval("TSNE_AFF_SHARED_BYTES", k), TsneAffinitiesGpu.affSharedBytes(k));
        }
        h.assertValue("TSNE_AFF_THREADS", TsneAffinitiesGpu.AFF_THREADS);
        h.assertValue("TSNE_TC_KR", TsneAffinitiesGpu.TC_KR);
        h.assertValue("TSNE_TC_RLD", TsneAffinitiesGpu.TC_RLD);
        h.assertValue("TSNE_TC_DLD", TsneAffinitiesGpu.TC_DLD);
        for (int c : new int[] {17, 135, 300}) {
            for (int qDims : new int[] {TsneAffinitiesGpu.KD, 8, 56, 784}) {
                assertEquals(h.eval("TSNE_TC_SHARED_BYTES", c, qDims), TsneAffinitiesGpu.tcSharedBytes(c, qDims),
                        "tcSharedBytes(" + c + ", " + qDims + ")");
            }
        }
        h.assertValue("TSNE_SYM_THREADS", TsneAffinitiesGpu.SYM_THREADS);
        h.assertValue("TSNE_SYM_CAP", TsneAffinitiesGpu.SYM_CAP);
    }
}
