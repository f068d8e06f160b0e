package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuMemFreeHost;
import static jcuda.driver.JCudaDriver.cuMemHostAlloc;

import java.nio.ByteOrder;
import java.nio.DoubleBuffer;
import java.util.concurrent.atomic.AtomicLong;
import jcuda.Pointer;
import jcuda.driver.JCudaDriver;

/**
 * Page-locked (pinned) host memory from {@code cuMemHostAlloc} (portable: usable by every context), released by
 * {@link #close()}. The GPU copies from it by DMA, so {@code cuMemcpyHtoDAsync} from it is truly asynchronous and
 * runs at full PCIe/NVLink speed, while a copy from a Java array goes through the driver's own pageable staging.
 * Java code fills it through a native-order {@link DoubleBuffer} view (bulk puts are one memory copy). Not
 * thread-safe: one owner at a time (see {@link PinnedStagingPool}). Less than 2 GiB per buffer (a ByteBuffer view).
 */
public final class PinnedHostBuffer implements AutoCloseable {
    private static final AtomicLong ALLOCATED = new AtomicLong();

    private final CudaDevice device;
    private final Pointer ptr;
    private final long bytes;
    private final DoubleBuffer doubles;
    private boolean closed;

    private PinnedHostBuffer(CudaDevice device, Pointer ptr, long bytes) {
        this.device = device;
        this.ptr = ptr;
        this.bytes = bytes;
        this.doubles = ptr.getByteBuffer(0, bytes).order(ByteOrder.nativeOrder()).asDoubleBuffer();
    }

    /** {@code bytes} (a multiple of 8, below 2 GiB) of pinned memory, allocated with {@code device}'s context current. */
    public static PinnedHostBuffer allocate(CudaDevice device, long bytes) {
        if (bytes <= 0 || bytes % 8 != 0 || bytes > Integer.MAX_VALUE - 7) {
            throw new IllegalArgumentException("pinned buffer size must be a positive multiple of 8 below 2 GiB: " + bytes);
        }
        device.bind();
        Pointer p = new Pointer();
        try {
            cuMemHostAlloc(p, bytes, JCudaDriver.CU_MEMHOSTALLOC_PORTABLE);
        } catch (RuntimeException e) {
            throw new CudaException("cannot allocate " + bytes + " bytes of pinned host memory for " + device + ": "
                    + CudaRuntime.describe(e), e);
        }
        ALLOCATED.addAndGet(bytes);
        return new PinnedHostBuffer(device, p, bytes);
    }

    /** Pinned bytes held by all open buffers of this JVM (for leak checks). */
    public static long allocatedBytes() {
        return ALLOCATED.get();
    }

    public CudaDevice device() {
        return device;
    }

    public Pointer pointer() {
        ensureOpen();
        return ptr;
    }

    public long bytes() {
        return bytes;
    }

    public int capacityDoubles() {
        return (int) (bytes / 8);
    }

    /** Copies {@code src[from, from + count)} to the start of this buffer (one bulk copy). */
    public void put(double[] src, int from, int count) {
        ensureOpen();
        if (count > capacityDoubles()) {
            throw new IllegalArgumentException(count + " doubles do not fit a pinned buffer of " + bytes + " bytes");
        }
        doubles.clear();
        doubles.put(src, from, count);
    }

    /** Copies the first {@code count} doubles of this buffer to {@code dst[from...]}. */
    public void get(double[] dst, int from, int count) {
        ensureOpen();
        doubles.clear();
        doubles.get(dst, from, count);
    }

    private void ensureOpen() {
        if (closed) {
            throw new IllegalStateException("pinned host buffer already released");
        }
    }

    /** Frees the memory; the caller makes sure no copy from or to it is still running. */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        device.bind();
        try {
            cuMemFreeHost(ptr);
        } catch (RuntimeException e) {
            throw new CudaException("cannot free " + bytes + " bytes of pinned host memory of " + device + ": "
                    + CudaRuntime.describe(e), e);
        } finally {
            ALLOCATED.addAndGet(-bytes);
        }
    }
}
