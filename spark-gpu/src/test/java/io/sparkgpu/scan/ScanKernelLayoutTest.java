package io.sparkgpu.scan;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.sparkgpu.testutil.KernelHeader;
import org.junit.jupiter.api.Test;

/**
 * The host side of the scan module (ScanGpu, ScanSpec) agrees with the parameter-array layouts and sizes the kernels
 * use (native-kernels/src/main/cuda/include/layout/scan.cuh).
 */
class ScanKernelLayoutTest {

    @Test
    void layoutMatchesTheKernels() {
        KernelHeader h = KernelHeader.load("include/layout/scan.cuh");
        h.assertValue("SCAN_BLOCK", ScanGpu.BLOCK);
        h.assertValue("SCAN_MAX_EXCL", ScanSpec.MAX_EXCLUDED);
        for (long nx : new long[] {1, 2, 100, ScanShape.MAX_AXIS_ND, ScanShape.MAX_AXIS_1D}) {
            assertEquals(h.eval("SCAN_STRIP_BYTES", nx), ScanGpu.stripBytes(nx), "stripBytes(" + nx + ")");
        }
        Object[][] p = {
            {"SCAN_P_DIMS", ScanGpu.P_DIMS}, {"SCAN_P_NX", ScanGpu.P_NX}, {"SCAN_P_NY", ScanGpu.P_NY},
            {"SCAN_P_NZ", ScanGpu.P_NZ}, {"SCAN_P_TX", ScanGpu.P_TX}, {"SCAN_P_TY", ScanGpu.P_TY},
            {"SCAN_P_WX", ScanGpu.P_WX}, {"SCAN_P_SY", ScanGpu.P_SY}, {"SCAN_P_SZ", ScanGpu.P_SZ},
            {"SCAN_P_LO", ScanGpu.P_LO}, {"SCAN_P_HI", ScanGpu.P_HI}, {"SCAN_P_K", ScanGpu.P_K},
            {"SCAN_P_Q", ScanGpu.P_Q}, {"SCAN_P_U0", ScanGpu.P_U0}, {"SCAN_P_U1", ScanGpu.P_U1},
            {"SCAN_P_MINC", ScanGpu.P_MINC}, {"SCAN_P_MAXC", ScanGpu.P_MAXC}, {"SCAN_P_MAXBQ", ScanGpu.P_MAXBQ},
            {"SCAN_P_BQTOT", ScanGpu.P_BQTOT}, {"SCAN_P_DIR", ScanGpu.P_DIR}, {"SCAN_P_NEXCL", ScanGpu.P_NEXCL},
            {"SCAN_P_COUNT", ScanGpu.P_COUNT},
            {"SCAN_D_C", ScanGpu.D_C}, {"SCAN_D_B", ScanGpu.D_B}, {"SCAN_D_F", ScanGpu.D_F}, {"SCAN_D_G", ScanGpu.D_G},
            {"SCAN_D_V0", ScanGpu.D_V0}, {"SCAN_D_HALFN", ScanGpu.D_HALFN}, {"SCAN_D_CSCALE", ScanGpu.D_CSCALE},
            {"SCAN_D_COUNT", ScanGpu.D_COUNT},
        };
        for (Object[] e : p) {
            h.assertValue((String) e[0], (Integer) e[1]);
        }
        h.assertAllCompared();
    }
}
