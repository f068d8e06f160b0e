package io.sparkgpu.isotonic;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/**
 * The host side of the isotonic module (IsotonicGpu, IsoPoolGpu) agrees with the sizes and layouts the kernels use
 * (native-kernels/src/main/cuda/include/layout/isotonic.cuh).
 */
class IsotonicKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/isotonic.cuh");
        h.assertValue("ISO_MLS_THREADS", IsotonicGpu.SCAN_THREADS);
        // (sLo, sHi, wLo, wHi) records: IsoPoints.acc, Int128.compareRatioAt/addAt index 4 * i
        h.assertValue("ISO_RECORD_WORDS", 4);
        for (int threads : new int[] {32, 128, IsotonicGpu.MLS_BLOCK, 1024}) {
            assertEquals(h.eval("ISO_MLS_ARGMIN_SHARED_BYTES", threads), IsotonicGpu.argminSharedBytes(threads),
                    "argminSharedBytes(" + threads + ")");
        }
        h.assertValue("ISO_SP_THREADS", IsoPoolGpu.THREADS);
        h.assertValue("ISO_SP_SCAN_TILE", IsoPoolGpu.SCAN_TILE);
        h.assertValue("ISO_SP_RUN", IsoPoolGpu.RUN);
        h.assertValue("ISO_SP_DIGIT_BITS", IsoPoolGpu.DIGIT_BITS);
        h.assertValue("ISO_SP_DIGITS", IsoPoolGpu.DIGITS);
        h.assertValue("ISO_SP_PASSES", IsoPoolGpu.PASSES);
        h.assertValue("ISO_SP_C_INVALID", IsoPoolGpu.C_INVALID);
        h.assertValue("ISO_SP_C_ZERO_WEIGHT", IsoPoolGpu.C_ZERO_WEIGHT);
        h.assertValue("ISO_SP_C_DISTINCT", IsoPoolGpu.C_DISTINCT);
        h.assertValue("ISO_SP_C_WEIGHT_TOO_SMALL", IsoPoolGpu.C_WEIGHT_TOO_SMALL);
        h.assertValue("ISO_SP_COUNTERS", IsoPoolGpu.COUNTERS);
        h.assertAllCompared();
    }
}
