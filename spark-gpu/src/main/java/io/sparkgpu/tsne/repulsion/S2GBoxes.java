package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuResources;
import io.sparkgpu.cuda.SparkGpuConf;
import java.util.ArrayList;
import java.util.List;

/**
 * Device index buffers of S2G by boxes ({@link GridRepulsionGpu#launchS2GByBoxes}, include/tsne/boxes.cuh): the
 * points' boxes and their counting sort (boxOf and order: one int per point; counts, offsets and cursor: one int per
 * box), grown to the largest grid and row count seen. One per caller (the device-resident state, or one S2G call);
 * not thread-safe.
 */
public final class S2GBoxes implements AutoCloseable {
    /** Threads of tsne_box_scan's one block and the counts each scans per tile (TSNE_BOX_SCAN_*). */
    static final int SCAN_THREADS = 1024;
    static final int SCAN_ITEMS = 4;
    /**
     * {@code true|false} (default true): the device-resident fit's S2G by boxes (points counting-sorted by box, each
     * warp adding one stencil per run of equal boxes) instead of the plain per-point kernel with 128-bit atomics on
     * every node, the same bits. On 10^6 clustered points (H200) 1.00 ms per iteration against 3.83, on 70,000 x 784
     * 0.25 against 0.46 (BENCHMARKS.md); its first form, one warp per box, took 62.9 ms.
     */
    public static final String BY_BOXES = "spark.sparkgpu.tsne.s2gByBoxes";

    private DeviceBuffer boxOf;
    private DeviceBuffer order;
    private DeviceBuffer counts;
    private DeviceBuffer offsets;
    private DeviceBuffer cursor;
    private long rowsAllocated = -1;
    private long boxesAllocated = -1;

    /** Whether S2G goes by boxes ({@value #BY_BOXES}, default true). */
    public static boolean enabled() {
        String v = SparkGpuConf.get(BY_BOXES, "true").trim();
        if (!v.equalsIgnoreCase("true") && !v.equalsIgnoreCase("false")) {
            throw new IllegalArgumentException(BY_BOXES + " must be true or false, got '" + v + "'");
        }
        return Boolean.parseBoolean(v);
    }

    /** Boxes of g: intervals^dim. */
    static long boxes(InterpGrid g) {
        long b = 1;
        for (int a = 0; a < g.dim; a++) {
            b *= g.intervals;
        }
        return b;
    }

    /** Makes the buffers hold {@code rows} points and g's boxes; returns the number of boxes. */
    int ensure(CudaDevice dev, InterpGrid g, int rows) {
        long nb = boxes(g);
        if (nb > Integer.MAX_VALUE - 1) {
            throw new IllegalArgumentException("t-SNE grid of " + nb + " boxes is too large for S2G by boxes");
        }
        if (rows > rowsAllocated) {
            GpuResources.closeAll(boxOf, order);
            boxOf = null;
            order = null;
            long alloc = Math.max(1, rows);
            boxOf = DeviceBuffer.allocate(dev, 4L * alloc);
            order = DeviceBuffer.allocate(dev, 4L * alloc);
            rowsAllocated = rows;
        }
        if (nb > boxesAllocated) {
            GpuResources.closeAll(counts, offsets, cursor);
            counts = null;
            offsets = null;
            cursor = null;
            long alloc = Math.max(nb, Math.min(2 * nb, Integer.MAX_VALUE - 1L));
            counts = DeviceBuffer.allocate(dev, 4L * alloc);
            offsets = DeviceBuffer.allocate(dev, 4L * (alloc + 1));
            cursor = DeviceBuffer.allocate(dev, 4L * alloc);
            boxesAllocated = alloc;
        }
        return (int) nb;
    }

    DeviceBuffer boxOf() {
        return boxOf;
    }

    DeviceBuffer order() {
        return order;
    }

    DeviceBuffer counts() {
        return counts;
    }

    DeviceBuffer offsets() {
        return offsets;
    }

    DeviceBuffer cursor() {
        return cursor;
    }

    @Override
    public void close() {
        GpuResources.closeAll(boxOf, order, counts, offsets, cursor);
        boxOf = null;
        order = null;
        counts = null;
        offsets = null;
        cursor = null;
        rowsAllocated = -1;
        boxesAllocated = -1;
    }
}
