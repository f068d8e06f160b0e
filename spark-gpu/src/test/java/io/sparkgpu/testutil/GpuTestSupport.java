package io.sparkgpu.testutil;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.CudaRuntime;
import org.junit.jupiter.api.Assumptions;

/** For tests tagged {@code gpu}: the device, or a visible skip explaining why there is none. */
public final class GpuTestSupport {
    private GpuTestSupport() {
    }

    public static CudaDevice deviceOrSkip() {
        CudaRuntime.Status s = CudaRuntime.status();
        if (!s.available) {
            String msg = "GPU test skipped: " + s.reason;
            System.err.println("[spark-gpu] " + msg);
            Assumptions.assumeTrue(false, msg);
        }
        CudaDevice dev = CudaRuntime.device(CudaRuntime.selectDeviceOrdinal());
        System.err.println("[spark-gpu] GPU test on " + dev + ", " + s);
        return dev;
    }
}
