package io.sparkgpu.kmeans;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/**
 * The host side of the kmeans module (KMeansGpu, KMeansAccumulator) agrees with the sizes and layouts the kernels
 * use (native-kernels/src/main/cuda/include/layout/kmeans.cuh), and every kernel the host can ask for exists.
 */
class KMeansKernelLayoutTest {

    /** The DMAX of a register kernel's name ("kmeans_step_d32" -> 32), 0 for the generic kmeans_step_dany. */
    private static int dmax(String kernel) {
        return kernel.endsWith("dany") ? 0 : Integer.parseInt(kernel.substring(kernel.lastIndexOf("_d") + 2));
    }

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/kmeans.cuh");
        h.assertValue("KMEANS_BLOCK", KMeansGpu.BLOCK);
        h.assertValue("KMEANS_REG_MAX_D", KMeansGpu.FILTER_MAX_D);
        h.assertValue("KMEANS_REG_MAX_D", KMeansGpu.SORTED_MAX_D);
        for (int d = 1; d <= 300; d++) {
            assertEquals(h.eval("KMEANS_PADDED_DIM", d), KMeansGpu.paddedDim(d), "paddedDim(" + d + ")");
            int step = dmax(KMeansGpu.kernelFor(d));
            assertTrue(step == 0 ? d > h.value("KMEANS_REG_MAX_D") : d <= step, KMeansGpu.kernelFor(d));
            assertEquals(step == 0 ? 1 : h.eval("KMEANS_STEP_NP", step), KMeansGpu.pointsPerThread(d),
                    "pointsPerThread(" + d + ")");
            if (d <= KMeansGpu.FILTER_MAX_D) {
                int filt = dmax(KMeansGpu.filterKernelFor(d));
                assertTrue(d <= filt, KMeansGpu.filterKernelFor(d));
                assertEquals(h.eval("KMEANS_FILT_NP", filt), KMeansGpu.filterPointsPerThread(d),
                        "filterPointsPerThread(" + d + ")");
            }
        }
        for (int k : new int[] {1, 2, 3, 7, 64, 255, 1000, 4097}) {
            for (int d : new int[] {1, 3, 8, 17, 32, 63, 64, 100, 3000}) {
                assertEquals(h.eval("KMEANS_ACC_LEN", k, d), KMeansAccumulator.length(k, d),
                        "length(" + k + ", " + d + ")");
                assertEquals(4 * h.eval("KMEANS_FILT_FLOATS", k, d), KMeansGpu.filterFloatBytes(k, d),
                        "filterFloatBytes(" + k + ", " + d + ")");
            }
            for (int ppt : new int[] {1, 2, 4}) {
                assertEquals(4 * h.eval("KMEANS_SORT_INTS", k, (long) KMeansGpu.BLOCK * ppt),
                        KMeansGpu.sortBytes(k, ppt), "sortBytes(" + k + ", " + ppt + ")");
            }
        }
        h.assertAllCompared();
    }

    /** Every kernel name the host can produce is an entry point of kmeans.cu. */
    @Test
    void everyKernelTheHostNamesExists() {
        String src = KernelHeader.source("kmeans.cu");
        for (int d = 1; d <= 100; d++) {
            String step = KMeansGpu.kernelFor(d);
            assertTrue(src.contains("ENTRY(" + step + ", "), step + " missing from kmeans.cu");
            if (d <= KMeansGpu.SORTED_MAX_D) {
                assertTrue(src.contains("ENTRY(" + step + "_sorted, "), step + "_sorted missing from kmeans.cu");
            }
            if (d <= KMeansGpu.FILTER_MAX_D) {
                String filt = KMeansGpu.filterKernelFor(d);
                assertTrue(src.contains("ENTRY(" + filt + ", "), filt + " missing from kmeans.cu");
                assertTrue(src.contains("ENTRY(" + filt + "_sorted, "), filt + "_sorted missing from kmeans.cu");
            }
        }
        assertTrue(src.contains("ENTRY(" + KMeansGpu.PROBE_KERNEL + ", "), KMeansGpu.PROBE_KERNEL);
    }
}
