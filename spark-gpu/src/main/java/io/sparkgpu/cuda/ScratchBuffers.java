package io.sparkgpu.cuda;

import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.Iterator;
import java.util.Map;

/**
 * Per-device pool of reusable scratch buffers for kernels that run every iteration (so each call does not pay
 * cuMemAlloc/cuMemFree). Capacities are rounded up to a power of two (at least 4 KiB), so a buffer serves any
 * later request of the same size class; at most {@link #MAX_IDLE_PER_DEVICE} idle buffers are kept per device,
 * the oldest is freed beyond that. A borrowed buffer belongs to one caller until {@link Lease#close()}. Thread-safe.
 */
public final class ScratchBuffers {
    public static final int MAX_IDLE_PER_DEVICE = 32;
    private static final Map<Integer, ArrayDeque<DeviceBuffer>> IDLE = new HashMap<>();

    private ScratchBuffers() {
    }

    /** A borrowed buffer of at least the requested size; close() gives it back to the pool. */
    public static final class Lease implements AutoCloseable {
        private final CudaDevice device;
        private DeviceBuffer buffer;

        private Lease(CudaDevice device, DeviceBuffer buffer) {
            this.device = device;
            this.buffer = buffer;
        }

        public DeviceBuffer buffer() {
            if (buffer == null) {
                throw new IllegalStateException("scratch buffer already returned");
            }
            return buffer;
        }

        @Override
        public void close() {
            if (buffer != null) {
                giveBack(device, buffer);
                buffer = null;
            }
        }
    }

    /** Borrows a buffer of at least {@code bytes} bytes on {@code dev} (contents undefined). */
    public static Lease borrow(CudaDevice dev, long bytes) {
        if (bytes < 0) {
            throw new IllegalArgumentException("negative scratch size: " + bytes);
        }
        long cap = Math.max(4096, Long.highestOneBit(Math.max(1, bytes - 1)) << 1);
        synchronized (IDLE) {
            ArrayDeque<DeviceBuffer> idle = IDLE.get(dev.ordinal());
            if (idle != null) {
                for (Iterator<DeviceBuffer> it = idle.iterator(); it.hasNext();) {
                    DeviceBuffer b = it.next();
                    if (b.bytes() == cap) {
                        it.remove();
                        return new Lease(dev, b);
                    }
                }
            }
        }
        return new Lease(dev, DeviceBuffer.allocate(dev, cap));
    }

    private static void giveBack(CudaDevice dev, DeviceBuffer b) {
        DeviceBuffer evicted = null;
        synchronized (IDLE) {
            ArrayDeque<DeviceBuffer> idle = IDLE.computeIfAbsent(dev.ordinal(), o -> new ArrayDeque<>());
            idle.addLast(b);
            if (idle.size() > MAX_IDLE_PER_DEVICE) {
                evicted = idle.removeFirst();
            }
        }
        if (evicted != null) {
            evicted.close();
        }
    }

    /** Frees every idle scratch buffer of every device (e.g. at the end of a fit). */
    public static void releaseIdle() {
        ArrayDeque<DeviceBuffer> all = new ArrayDeque<>();
        synchronized (IDLE) {
            IDLE.values().forEach(all::addAll);
            IDLE.clear();
        }
        all.forEach(DeviceBuffer::close);
    }
}
