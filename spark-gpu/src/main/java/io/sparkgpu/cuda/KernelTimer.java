package io.sparkgpu.cuda;

/**
 * A pair of CUDA events recorded around kernels on one stream, for timings that exclude transfers: start(s),
 * launches, stop(s), synchronise the stream, then {@link #millis()}.
 */
public final class KernelTimer implements AutoCloseable {
    private final GpuEvent a;
    private final GpuEvent b;

    public KernelTimer(CudaDevice dev) {
        a = new GpuEvent(dev, true);
        try {
            b = new GpuEvent(dev, true);
        } catch (RuntimeException e) {
            GpuResources.closeAfter(e, a);
            throw e;
        }
    }

    public void start(GpuStream s) {
        a.record(s);
    }

    public void stop(GpuStream s) {
        b.record(s);
    }

    /** Milliseconds between start and stop; call after the stream has been synchronised. */
    public double millis() {
        return b.millisSince(a);
    }

    @Override
    public void close() {
        GpuResources.closeAll(a, b);
    }
}
