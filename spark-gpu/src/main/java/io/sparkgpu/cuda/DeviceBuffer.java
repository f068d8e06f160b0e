package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuMemAlloc;
import static jcuda.driver.JCudaDriver.cuMemFree;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyDtoHAsync;
import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;
import static jcuda.driver.JCudaDriver.cuMemsetD8Async;

import jcuda.Pointer;
import jcuda.Sizeof;
import jcuda.driver.CUdeviceptr;

/**
 * Device memory owned by one caller and released by {@link #close()} (use try-with-resources). Copies are
 * issued on the caller's {@link GpuStream}; the caller synchronises the stream before reading host arrays.
 */
public final class DeviceBuffer implements AutoCloseable {
    private final CudaDevice device;
    private final CUdeviceptr ptr;
    private final long bytes;
    private boolean closed;

    private DeviceBuffer(CudaDevice device, CUdeviceptr ptr, long bytes) {
        this.device = device;
        this.ptr = ptr;
        this.bytes = bytes;
    }

    public static DeviceBuffer allocate(CudaDevice device, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative allocation: " + bytes);
        }
        device.bind();
        CUdeviceptr p = new CUdeviceptr();
        try {
            DeviceFaults.strike(DeviceFaults.ALLOC);
            cuMemAlloc(p, Math.max(bytes, 8));
        } catch (RuntimeException e) {
            throw new CudaException("cannot allocate " + bytes + " bytes on " + device + ": "
                    + CudaRuntime.describe(e), e);
        }
        device.addAllocated(bytes);
        return new DeviceBuffer(device, p, bytes);
    }

    public static DeviceBuffer ofDoubles(CudaDevice device, long count) {
        return allocate(device, count * Sizeof.DOUBLE);
    }

    public CUdeviceptr pointer() {
        ensureOpen();
        return ptr;
    }

    public long bytes() {
        return bytes;
    }

    public void upload(double[] src, int from, int count, long dstOffsetElems, GpuStream stream) {
        checkRange((dstOffsetElems + count) * Sizeof.DOUBLE);
        cuMemcpyHtoDAsync(ptr.withByteOffset(dstOffsetElems * Sizeof.DOUBLE),
                Pointer.to(src).withByteOffset((long) from * Sizeof.DOUBLE), (long) count * Sizeof.DOUBLE, stream.handle());
    }

    /**
     * Enqueues a copy of the first {@code count} doubles of pinned {@code src} to the start of this buffer: truly
     * asynchronous (from pageable memory the driver may wait for the stream first). {@code src} must not change until
     * the copy has run.
     */
    public void upload(PinnedHostBuffer src, int count, GpuStream stream) {
        checkRange((long) count * Sizeof.DOUBLE);
        if (count > src.capacityDoubles()) {
            throw new IllegalArgumentException(count + " doubles exceed a pinned buffer of " + src.bytes() + " bytes");
        }
        cuMemcpyHtoDAsync(ptr, src.pointer(), (long) count * Sizeof.DOUBLE, stream.handle());
    }

    /** Enqueues setting bytes [from, from + count) of this buffer to {@code value}. */
    public void fill(long from, long count, byte value, GpuStream stream) {
        ensureOpen();
        if (from < 0 || count < 0 || from + count > bytes) {
            throw new IllegalArgumentException("fill of bytes [" + from + ", " + (from + count) + ") exceeds buffer of "
                    + bytes + " bytes");
        }
        cuMemsetD8Async(ptr.withByteOffset(from), value, count, stream.handle());
    }

    public void upload(double[] src, GpuStream stream) {
        upload(src, 0, src.length, 0, stream);
    }

    public void upload(float[] src, GpuStream stream) {
        upload(src, 0, src.length, 0, stream);
    }

    /** Copies {@code src[from, from + count)} to element {@code dstOffsetElems} of this buffer (floats). */
    public void upload(float[] src, int from, int count, long dstOffsetElems, GpuStream stream) {
        checkRange((dstOffsetElems + count) * Sizeof.FLOAT);
        cuMemcpyHtoDAsync(ptr.withByteOffset(dstOffsetElems * Sizeof.FLOAT),
                Pointer.to(src).withByteOffset((long) from * Sizeof.FLOAT), (long) count * Sizeof.FLOAT, stream.handle());
    }

    public void upload(long[] src, GpuStream stream) {
        checkRange((long) src.length * Sizeof.LONG);
        cuMemcpyHtoDAsync(ptr, Pointer.to(src), (long) src.length * Sizeof.LONG, stream.handle());
    }

    public void upload(long[] src, int from, int count, long dstOffsetElems, GpuStream stream) {
        checkRange((dstOffsetElems + count) * Sizeof.LONG);
        cuMemcpyHtoDAsync(ptr.withByteOffset(dstOffsetElems * Sizeof.LONG),
                Pointer.to(src).withByteOffset((long) from * Sizeof.LONG), (long) count * Sizeof.LONG, stream.handle());
    }

    public void download(long[] dst, int count, GpuStream stream) {
        checkRange((long) count * Sizeof.LONG);
        cuMemcpyDtoHAsync(Pointer.to(dst), ptr, (long) count * Sizeof.LONG, stream.handle());
    }

    public void upload(int[] src, GpuStream stream) {
        checkRange((long) src.length * Sizeof.INT);
        cuMemcpyHtoDAsync(ptr, Pointer.to(src), (long) src.length * Sizeof.INT, stream.handle());
    }

    public void download(float[] dst, int count, GpuStream stream) {
        checkRange((long) count * Sizeof.FLOAT);
        cuMemcpyDtoHAsync(Pointer.to(dst), ptr, (long) count * Sizeof.FLOAT, stream.handle());
    }

    public void download(double[] dst, int count, GpuStream stream) {
        checkRange((long) count * Sizeof.DOUBLE);
        cuMemcpyDtoHAsync(Pointer.to(dst), ptr, (long) count * Sizeof.DOUBLE, stream.handle());
    }

    public void download(long[] dst, GpuStream stream) {
        checkRange((long) dst.length * Sizeof.LONG);
        cuMemcpyDtoHAsync(Pointer.to(dst), ptr, (long) dst.length * Sizeof.LONG, stream.handle());
    }

    public void download(int[] dst, int count, GpuStream stream) {
        checkRange((long) count * Sizeof.INT);
        cuMemcpyDtoHAsync(Pointer.to(dst), ptr, (long) count * Sizeof.INT, stream.handle());
    }

    /**
     * Enqueues a device-to-device copy of {@code bytes} bytes from {@code src} at byte offset {@code srcByteOffset}
     * to this buffer at byte offset {@code dstByteOffset}, on {@code stream} (buffers of the stream's device).
     */
    public void copyFrom(DeviceBuffer src, long srcByteOffset, long dstByteOffset, long bytes, GpuStream stream) {
        ensureOpen();
        src.ensureOpen();
        if (bytes < 0 || srcByteOffset < 0 || dstByteOffset < 0 || srcByteOffset + bytes > src.bytes
                || dstByteOffset + bytes > this.bytes) {
            throw new IllegalArgumentException("device copy of " + bytes + " bytes from offset " + srcByteOffset
                    + " of a buffer of " + src.bytes + " bytes to offset " + dstByteOffset + " of a buffer of "
                    + this.bytes + " bytes is out of range");
        }
        if (src.device != device || stream.device() != device) {
            throw new IllegalArgumentException("device copy between " + src.device + " and " + device + " on a stream of "
                    + stream.device());
        }
        if (bytes == 0) {
            return;
        }
        device.bind();
        try {
            DeviceFaults.strike(DeviceFaults.COPY);
            cuMemcpyDtoDAsync(ptr.withByteOffset(dstByteOffset), src.ptr.withByteOffset(srcByteOffset), bytes,
                    stream.handle());
        } catch (RuntimeException e) {
            throw new CudaException("device-to-device copy of " + bytes + " bytes failed on " + device + ": "
                    + CudaRuntime.describe(e), e);
        }
    }

    /** Copies {@code src[from, from + count)} to element {@code dstOffsetElems} of this buffer (ints). */
    public void upload(int[] src, int from, int count, long dstOffsetElems, GpuStream stream) {
        checkRange((dstOffsetElems + count) * Sizeof.INT);
        cuMemcpyHtoDAsync(ptr.withByteOffset(dstOffsetElems * Sizeof.INT),
                Pointer.to(src).withByteOffset((long) from * Sizeof.INT), (long) count * Sizeof.INT, stream.handle());
    }

    /** Copies {@code count} ints from element {@code srcOffsetElems} of this buffer to {@code dst[dstFrom...]}. */
    public void download(int[] dst, int dstFrom, int count, long srcOffsetElems, GpuStream stream) {
        checkRange((srcOffsetElems + count) * Sizeof.INT);
        cuMemcpyDtoHAsync(Pointer.to(dst).withByteOffset((long) dstFrom * Sizeof.INT),
                ptr.withByteOffset(srcOffsetElems * Sizeof.INT), (long) count * Sizeof.INT, stream.handle());
    }

    /** Copies {@code count} longs from element {@code srcOffsetElems} of this buffer to {@code dst[dstFrom...]}. */
    public void download(long[] dst, int dstFrom, int count, long srcOffsetElems, GpuStream stream) {
        checkRange((srcOffsetElems + count) * Sizeof.LONG);
        cuMemcpyDtoHAsync(Pointer.to(dst).withByteOffset((long) dstFrom * Sizeof.LONG),
                ptr.withByteOffset(srcOffsetElems * Sizeof.LONG), (long) count * Sizeof.LONG, stream.handle());
    }

    /** Copies {@code count} doubles from element {@code srcOffsetElems} of this buffer to {@code dst[dstFrom...]}. */
    public void download(double[] dst, int dstFrom, int count, long srcOffsetElems, GpuStream stream) {
        checkRange((srcOffsetElems + count) * Sizeof.DOUBLE);
        cuMemcpyDtoHAsync(Pointer.to(dst).withByteOffset((long) dstFrom * Sizeof.DOUBLE),
                ptr.withByteOffset(srcOffsetElems * Sizeof.DOUBLE), (long) count * Sizeof.DOUBLE, stream.handle());
    }

    /** Copies the first {@code bytes} bytes of {@code src} to the start of this buffer, on the device. */
    public void copyFrom(DeviceBuffer src, long bytes, GpuStream stream) {
        copyFrom(src, 0, 0, bytes, stream);
    }

    public void zero(GpuStream stream) {
        fill(0, bytes, (byte) 0, stream);
    }

    /** Every host/device copy of this class starts here. */
    private void checkRange(long end) {
        ensureOpen();
        DeviceFaults.strike(DeviceFaults.COPY);
        if (end > bytes) {
            throw new IllegalArgumentException("copy of " + end + " bytes exceeds buffer of " + bytes + " bytes");
        }
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("device buffer already released");
        }
    }

    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.bind();
        cuMemFree(ptr);
        device.addAllocated(-bytes);
    }
}
