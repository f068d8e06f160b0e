package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuEventCreate;
import static jcuda.driver.JCudaDriver.cuEventDestroy;
import static jcuda.driver.JCudaDriver.cuEventElapsedTime;
import static jcuda.driver.JCudaDriver.cuEventRecord;
import static jcuda.driver.JCudaDriver.cuEventSynchronize;
import static jcuda.driver.JCudaDriver.cuStreamWaitEvent;

import jcuda.driver.CUevent;
import jcuda.driver.CUevent_flags;

/**
 * One CUDA event: a point in a stream's work that other streams can wait for ({@link #waitOn}) without the host
 * waiting, and (when created with timing) the clock of that point for {@link #millisSince}. Used to order work across
 * streams (a cached workspace's stream and its caller's) and to time phases of a loop that never waits for the GPU
 * between them. Not thread-safe; one owner records it.
 */
public final class GpuEvent implements AutoCloseable {
    private final CudaDevice dev;
    private final CUevent event = new CUevent();
    private boolean closed;

    /** An event on {@code dev}; {@code timing}: whether {@link #millisSince} may be used (a little slower). */
    public GpuEvent(CudaDevice dev, boolean timing) {
        this.dev = dev;
        dev.bind();
        try {
            cuEventCreate(event, timing ? CUevent_flags.CU_EVENT_DEFAULT : CUevent_flags.CU_EVENT_DISABLE_TIMING);
        } catch (RuntimeException e) {
            throw new CudaException("cannot create a CUDA event on " + dev + ": " + e.getMessage(), e);
        }
    }

    /** Marks the end of the work queued on {@code s} so far. */
    public GpuEvent record(GpuStream s) {
        cuEventRecord(event, s.handle());
        return this;
    }

    /** Makes the work queued on {@code s} from now on wait for the work this event marks (the host does not wait). */
    public void waitOn(GpuStream s) {
        cuStreamWaitEvent(s.handle(), event, 0);
    }

    /** Waits on the host for the work this event marks; asynchronous kernel faults surface here. */
    public void synchronize(String what) {
        try {
            cuEventSynchronize(event);
        } catch (RuntimeException e) {
            throw new CudaException(what + " failed on " + dev + ": " + CudaRuntime.describe(e), e);
        }
    }

    /** Milliseconds from {@code earlier} to this event; both must have been recorded and completed. */
    public double millisSince(GpuEvent earlier) {
        float[] ms = new float[1];
        cuEventElapsedTime(ms, earlier.event, event);
        return ms[0];
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            dev.bind();
            cuEventDestroy(event);
        } catch (RuntimeException ignored) {
            // a broken context: the original failure is the one to report
        }
    }
}
