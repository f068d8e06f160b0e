package io.sparkgpu.cuda;

import static jcuda.driver.JCudaDriver.cuMemcpyHtoDAsync;

import jcuda.Sizeof;

/**
 * Host-to-device copies of Java arrays through pinned staging ({@link PinnedStagingPool}), chunked and double
 * buffered: while chunk i is copied by DMA ({@code cuMemcpyHtoDAsync} from a pinned slot), chunk i + 1 is put
 * into the other slot; a slot is refilled only after the event recorded behind its last copy has fired.
 *
 * <p>{@link #copy} returns once the last copy is enqueued: {@code src} may then be changed at once, and the
 * staging slots are safe to reuse (the next user of a slot waits for its event). The data are in {@code dst} when
 * {@code stream} has reached that point, as with {@link DeviceBuffer#upload}: synchronise the stream (or order
 * other streams after it) before using them elsewhere. Copies within one call are ordered on {@code stream}.
 */
public final class HostToDevice {
    /** Default chunk: one staging slot. */
    public static final int CHUNK_BYTES = (int) PinnedStagingPool.SLOT_BYTES;

    private HostToDevice() {
    }

    /** Copies {@code src[from, from + count)} to {@code dst} at byte offset {@code dstByteOffset}, on {@code stream}. */
    public static void copy(double[] src, int from, int count, DeviceBuffer dst, long dstByteOffset, GpuStream stream) {
        copy(src, from, count, dst, dstByteOffset, stream, CHUNK_BYTES);
    }

    /** {@link #copy} with chunks of {@code chunkBytes} (a multiple of 8, at most {@link #CHUNK_BYTES}). */
    static void copy(double[] src, int from, int count, DeviceBuffer dst, long dstByteOffset, GpuStream stream,
            int chunkBytes) {
        if (from < 0 || count < 0 || from > src.length - count) {
            throw new IndexOutOfBoundsException("source range [" + from + ", " + ((long) from + count)
                    + ") outside an array of " + src.length);
        }
        if (dstByteOffset < 0 || dstByteOffset + (long) count * Sizeof.DOUBLE > dst.bytes()) {
            throw new IllegalArgumentException("copy of " + count + " doubles at byte offset " + dstByteOffset
                    + " exceeds device buffer of " + dst.bytes() + " bytes");
        }
        if (chunkBytes < Sizeof.DOUBLE || chunkBytes % Sizeof.DOUBLE != 0 || chunkBytes > CHUNK_BYTES) {
            throw new IllegalArgumentException("chunk of " + chunkBytes + " bytes: must be a multiple of 8 in [8, "
                    + CHUNK_BYTES + "]");
        }
        if (count == 0) {
            return;
        }
        CudaDevice dev = stream.device();
        dev.bind();
        int perChunk = chunkBytes / Sizeof.DOUBLE;
        try (PinnedStagingPool.Lease lease = PinnedStagingPool.borrow(dev)) {
            int done = 0;
            for (int c = 0; done < count; c++) {
                PinnedStagingPool.Slot slot = lease.slot(c % PinnedStagingPool.SLOTS_PER_LEASE);
                slot.awaitIdle();
                int m = Math.min(perChunk, count - done);
                slot.buffer().put(src, from + done, m);
                try {
                    cuMemcpyHtoDAsync(dst.pointer().withByteOffset(dstByteOffset + (long) done * Sizeof.DOUBLE),
                            slot.buffer().pointer(), (long) m * Sizeof.DOUBLE, stream.handle());
                    slot.recordUse(stream.handle());
                } catch (RuntimeException e) {
                    throw new CudaException("host-to-device copy of " + ((long) m * Sizeof.DOUBLE) + " bytes at offset "
                            + (dstByteOffset + (long) done * Sizeof.DOUBLE) + " failed on " + dev + ": "
                            + CudaRuntime.describe(e), e);
                }
                done += m;
            }
        }
    }

    /** The plain path for comparison: {@code cuMemcpyHtoDAsync} straight from the (pageable) Java array. */
    public static void copyPageable(double[] src, int from, int count, DeviceBuffer dst, long dstByteOffset,
            GpuStream stream) {
        if (dstByteOffset % Sizeof.DOUBLE != 0) {
            throw new IllegalArgumentException("byte offset " + dstByteOffset + " is not a multiple of 8");
        }
        dst.upload(src, from, count, dstByteOffset / Sizeof.DOUBLE, stream);
    }
}
