package io.sparkgpu.tsne.optimize;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.testutil.GpuTestSupport;
import io.sparkgpu.tsne.TsneConfig;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * {@link TsneTransform} on the GPU (kNN into the reference, calibration, attractive term, exact repulsion with
 * per-point z, or S2G/G2G once and G2S with per-point z) against the CPU twins, bit for bit, with dof 1 and 0.6.
 */
@Tag("gpu")
class TsneTransformGpuTest {

    @Test
    void gpuTransformGivesTheTwinBits() {
        GpuTestSupport.deviceOrSkip();
        TsneTransformTest.Data data = new TsneTransformTest.Data(300, 40, 7);
        TsneTransform.Settings s = new TsneTransform.Settings();
        s.maxIter = 120;
        for (String repulsion : new String[] {TsneConfig.REPULSION_EXACT, TsneConfig.REPULSION_GRID}) {
            for (double dof : new double[] {1.0, 0.6}) {
                double[][] out = new double[2][];
                Backend[] backends = {Backend.CPU, Backend.GPU};
                for (int b = 0; b < 2; b++) {
                    TsneConfig cfg = TsneTransformTest.config(repulsion);
                    cfg.dof = dof;
                    cfg.backend = backends[b];
                    out[b] = TsneTransform.embed(data.yRef, data.xRef, data.nRef, TsneTransformTest.D, data.xNew,
                            data.nq, 30, cfg, s, null);
                }
                assertArrayEquals(out[0], out[1], 0.0, repulsion + " dof " + dof);
            }
        }
    }
}
