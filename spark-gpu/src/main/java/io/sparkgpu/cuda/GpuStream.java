package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuStreamCreate;
import static jcuda.driver.JCudaDriver.cuStreamDestroy;
import static jcuda.driver.JCudaDriver.cuStreamSynchronize;

import jcuda.driver.CUstream;
import jcuda.driver.CUstream_flags;

/**
 * A non-blocking CUDA stream owned by one task thread, with its device bound to the thread. Concurrent
 * Spark tasks on one GPU each use their own stream, so their copies and kernels overlap.
 */
public final class GpuStream implements AutoCloseable {
    private final CudaDevice device;
    private final CUstream stream;
    private boolean closed;

    public GpuStream(CudaDevice device) {
        this.device = device;
        device.bind();
        stream = new CUstream();
        cuStreamCreate(stream, CUstream_flags.CU_STREAM_NON_BLOCKING);
    }

    public CudaDevice device() {
        return device;
    }

    public CUstream handle() {
        return stream;
    }

    /** Waits for all work on this stream; asynchronous kernel faults surface here. */
    public void synchronize(String what) {
        try {
            cuStreamSynchronize(stream);
        } catch (RuntimeException e) {
            throw new CudaException(what + " failed on " + device + ": " + CudaRuntime.describe(e), e);
        }
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            device.bind();
            cuStreamDestroy(stream);
        }
    }
}
