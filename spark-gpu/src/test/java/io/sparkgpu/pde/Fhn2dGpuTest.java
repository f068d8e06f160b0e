package io.sparkgpu.pde;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;

import io.sparkgpu.cuda.Backend;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.testutil.GpuTestSupport;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The 2-D ADI kernels against the CPU twin, bit for bit: final v and w and the recorded frames. */
@Tag("gpu")
class Fhn2dGpuTest {
    @Test
    void everyInitialStateEqualsTheTwin() {
        CudaDevice dev = GpuTestSupport.deviceOrSkip();
        for (String init : new String[] {Fhn2dConfig.SPIRAL, Fhn2dConfig.GAUSSIAN, Fhn2dConfig.PLANE}) {
            // not square, not a multiple of any block size
            Fhn2dConfig c = Fhn2dTest.config(67, 45, 60, 40, 0.1, 8, init);
            c.pulseWidth = 3;
            c.recordEvery = 20;
            c.backend = Backend.GPU;
            c.validate();
            FhnParams p = FhnParams.excitable(0);
            Fhn2d.Result cpu = Fhn2d.cpu(c, p);
            Fhn2d.Result gpu = Fhn2dGpu.run(dev, c, p);
            assertArrayEquals(cpu.v, gpu.v, init + ": v");
            assertArrayEquals(cpu.w, gpu.w, init + ": w");
            assertArrayEquals(cpu.field, gpu.field, init + ": field");
        }
    }
}
