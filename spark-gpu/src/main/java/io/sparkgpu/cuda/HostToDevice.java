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
 *
 * <p>A caller that copies many arrays one after another (e.g. chunks handed over while a partition is packed)
 * keeps one {@link Stager}: its slots are borrowed once and used in turn across the copies, so consecutive copies
 * are double buffered too.
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
        checkRanges(src, from, count, dst, dstByteOffset);
        checkChunk(chunkBytes);
        if (count == 0) {
            return;
        }
        try (Stager st = new Stager(stream.device(), chunkBytes)) {
            st.copy(src, from, count, dst, dstByteOffset, stream);
        }
    }

    /** A {@link Stager} for copies to {@code device} in chunks of {@link #CHUNK_BYTES}. */
    public static Stager stager(CudaDevice device) {
        return new Stager(device, CHUNK_BYTES);
    }

    /** A {@link Stager} with chunks of {@code chunkBytes} (a multiple of 8, at most {@link #CHUNK_BYTES}). */
    static Stager stager(CudaDevice device, int chunkBytes) {
        return new Stager(device, chunkBytes);
    }

    /**
     * The staging slots of one caller for a series of copies to one device, used in turn across all its copies.
     * The slots are borrowed from {@link PinnedStagingPool} at the first non-empty copy and given back by
     * {@link #close()}, which does not wait for the copies (the next user of a slot waits for its event).
     * Each {@link #copy} puts the data into the slots on the calling thread (a memory copy) and enqueues the DMA;
     * it blocks only to refill a slot whose previous copy is still running. Not thread-safe: one thread at a
     * time, as a stream.
     */
    public static final class Stager implements AutoCloseable {
        private final CudaDevice device;
        private final int perChunk;
        private PinnedStagingPool.Lease lease;
        private int next; // the slot the next chunk goes through
        private boolean closed;

        private Stager(CudaDevice device, int chunkBytes) {
            checkChunk(chunkBytes);
            this.device = device;
            this.perChunk = chunkBytes / Sizeof.DOUBLE;
        }

        /**
         * Enqueues the copy of {@code src[from, from + count)} to {@code dst} at byte offset {@code dstByteOffset} on
         * {@code stream} (a stream of this stager's device) and returns: {@code src} may be changed at once.
         */
        public void copy(double[] src, int from, int count, DeviceBuffer dst, long dstByteOffset, GpuStream stream) {
            if (closed) {
                throw new IllegalStateException("staging already given back");
            }
            checkRanges(src, from, count, dst, dstByteOffset);
            if (stream.device() != device) {
                throw new IllegalArgumentException("stream of " + stream.device() + " used with staging for " + device);
            }
            if (count == 0) {
                return;
            }
            device.bind();
            if (lease == null) {
                lease = PinnedStagingPool.borrow(device);
            }
            int done = 0;
            while (done < count) {
                PinnedStagingPool.Slot slot = lease.slot(next);
                next = (next + 1) % PinnedStagingPool.SLOTS_PER_LEASE;
                slot.awaitIdle();
                int m = Math.min(perChunk, count - done);
                slot.buffer().put(src, from + done, m);
                try {
                    DeviceFaults.strike(DeviceFaults.COPY);
                    cuMemcpyHtoDAsync(dst.pointer().withByteOffset(dstByteOffset + (long) done * Sizeof.DOUBLE),
                            slot.buffer().pointer(), (long) m * Sizeof.DOUBLE, stream.handle());
                    slot.recordUse(stream.handle());
                } catch (RuntimeException e) {
                    throw new CudaException("host-to-device copy of " + ((long) m * Sizeof.DOUBLE) + " bytes at offset "
                            + (dstByteOffset + (long) done * Sizeof.DOUBLE) + " failed on " + device + ": "
                            + CudaRuntime.describe(e), e);
                }
                done += m;
            }
        }

        /** Gives the slots back (if any were borrowed); copies still running finish on their own. */
        @Override
        public void close() {
            closed = true;
            if (lease != null) {
                PinnedStagingPool.Lease l = lease;
                lease = null;
                l.close();
            }
        }
    }

    private static void checkRanges(double[] src, int from, int count, DeviceBuffer dst, long dstByteOffset) {
        if (from < 0 || count < 0 || from > src.length - count) {
            throw new IndexOutOfBoundsException("source range [" + from + ", " + ((long) from + count)
                    + ") outside an array of " + src.length);
        }
        if (dstByteOffset < 0 || dstByteOffset + (long) count * Sizeof.DOUBLE > dst.bytes()) {
            throw new IllegalArgumentException("copy of " + count + " doubles at byte offset " + dstByteOffset
                    + " exceeds device buffer of " + dst.bytes() + " bytes");
        }
    }

    private static void checkChunk(int chunkBytes) {
        if (chunkBytes < Sizeof.DOUBLE || chunkBytes % Sizeof.DOUBLE != 0 || chunkBytes > CHUNK_BYTES) {
            throw new IllegalArgumentException("chunk of " + chunkBytes + " bytes: must be a multiple of 8 in [8, "
                    + CHUNK_BYTES + "]");
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
