package io.sparkgpu.spline;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/** The host side of the spline module agrees with the codes and sizes of include/layout/spline.cuh. */
class SplineKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/spline.cuh");
        h.assertValue("SPLINE_KIND_SCHUMAKER", SplineConfig.Kind.SCHUMAKER.code);
        h.assertValue("SPLINE_KIND_RATIONAL", SplineConfig.Kind.RATIONAL.code);
        h.assertValue("SPLINE_EXTRAP_CLIP", SplineConfig.Extrapolate.CLIP.code);
        h.assertValue("SPLINE_EXTRAP_LINEAR", SplineConfig.Extrapolate.LINEAR.code);
        h.assertValue("SPLINE_EXTRAP_NAN", SplineConfig.Extrapolate.NAN.code);
        h.assertValue("SPLINE_EXTRAP_ERROR", SplineConfig.Extrapolate.ERROR.code);
        h.assertValue("SPLINE_THREADS", SplineGpu.THREADS);
        h.assertValue("SPLINE_GUIDE", SplineGpu.GUIDE);
        h.assertValue("SPLINE_NEWTON_MAX_ITER", SplineCpu.NEWTON_MAX_ITER);
        h.assertValue("SPLINE_NO_BAD", SplineGpu.NO_BAD);
        assertEquals(SplineCpu.MAX_SLOPE, h.doubleValue("SPLINE_MAX_SLOPE"), 0.0);
        h.assertAllCompared();
    }
}
