package io.sparkgpu.sort;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/**
 * The host side of the sort module (SortGpu) agrees with the launch shapes, chunk and tile sizes and the onesweep
 * histogram's layout the kernels use (native-kernels/src/main/cuda/include/layout/sort.cuh).
 */
class SortKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/sort.cuh");
        h.assertValue("HIST_THREADS", SortGpu.HIST_THREADS);
        h.assertValue("PYR_SEG_LOG", SortGpu.PYR_SEG_LOG);
        h.assertValue("OUT_THREADS", SortGpu.OUT_THREADS);
        h.assertValue("OUT_ITEMS", SortGpu.CHUNK / SortGpu.OUT_THREADS);
        h.assertValue("CHUNK", SortGpu.CHUNK);
        h.assertValue("SORT_THREADS", SortGpu.SORT_THREADS);
        h.assertValue("SORT_ITEMS", SortGpu.TILE / SortGpu.SORT_THREADS);
        h.assertValue("TILE", SortGpu.TILE);
        h.assertValue("SCAN_THREADS", SortGpu.SCAN_THREADS);
        h.assertValue("OS_DIGITS", 1 << SortGpu.MAX_PASS_BITS);
        h.assertValue("OS_MAX_PASSES", SortGpu.OS_MAX_PASSES);
        h.assertAllCompared();
    }
}
