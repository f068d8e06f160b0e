package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * A pair of CUDA events recorded around kernels on one stream, for timings that exclude transfers: start(s),
 * launches, stop(s), synchronise the stream, then {@link #millis()}.
 */
public final class KernelTimer implements AutoCloseable {
    private final CudaDevice dev;
    private final CUevent a = new CUevent();
    private final CUevent b = new CUevent();

    public KernelTimer(CudaDevice dev) {
        this.dev = dev;
        dev.bind();
        try {
            cuEventCreate(a, CUevent_flags.CU_EVENT_DEFAULT);
            cuEventCreate(b, CUevent_flags.CU_EVENT_DEFAULT);
        } catch (RuntimeException e) {
            throw new CudaException("cannot create CUDA events on " + dev + ": " + e.getMessage(), e);
        }
    }

    public void start(GpuStream s) {
        cuEventRecord(a, s.handle());
    }

    public void stop(GpuStream s) {
        cuEventRecord(b, s.handle());
    }

    /** Milliseconds between start and stop; call after the stream has been synchronised. */
    public double millis() {
        float[] ms = new float[1];
        cuEventElapsedTime(ms, a, b);
        return ms[0];
    }

    @Override
    public void close() {
        try {
            dev.bind();
            cuEventDestroy(a);
            cuEventDestroy(b);
        } catch (RuntimeException ignored) {
            // a broken context: the original failure is the one to report
        }
    }
}
