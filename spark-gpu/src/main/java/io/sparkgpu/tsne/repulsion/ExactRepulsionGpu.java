package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.common.FixedPoint;
import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.ScratchBuffers;

/**
 * GPU side of {@link ExactRepulsion} (module {@code tsne}, kernels tsne_exact_d1..d3, include/tsne/exact.cuh): one
 * warp per row. {@link #launch} is public for the device-resident iteration, which queues the kernel on its own
 * buffers.
 */
public final class ExactRepulsionGpu {
    static final int BLOCK = 256;
    /** Rows per block: one warp each. */
    static final int ROWS_PER_BLOCK = BLOCK / 32;

    private ExactRepulsionGpu() {
    }

    /**
     * Queues the rows [rowOffset, rowOffset + rows) of the n points y (device, n x dim): their forces into force
     * (rows x dim: a DeviceBuffer, or a {@link jcuda.driver.CUdeviceptr} into one) and their z_i added to the
     * fixed-point pair zacc at {@code zShift}.
     */
    public static void launch(GpuStream s, int dim, DeviceBuffer y, int n, int rowOffset, int rows, int zShift,
            double dof, Object force, DeviceBuffer zacc) {
        launch(s, dim, y, n, rowOffset, rows, zShift, dof, force, zacc, null);
    }

    /** As above; {@code zRows} (rows doubles, or null) receives each row's z_i as well. */
    public static void launch(GpuStream s, int dim, DeviceBuffer y, int n, int rowOffset, int rows, int zShift,
            double dof, Object force, DeviceBuffer zacc, DeviceBuffer zRows) {
        double[] m = FixedPoint.multipliers(zShift);
        KernelLauncher.launch(s, GridRepulsion.MODULE, "tsne_exact_d" + dim,
                (int) Math.max(1, ((long) rows + ROWS_PER_BLOCK - 1) / ROWS_PER_BLOCK), BLOCK, 0,
                y, n, rowOffset, rows, m[0], m[1], dof, force, zacc, KernelLauncher.nullable(zRows));
    }

    static Repulsion repulsion(CudaDevice dev, double[] y, int n, int dim, int rowOffset, int rows, int zShift,
            double dof, boolean perRow) {
        double[] force = new double[rows * dim];
        double[] zRows = perRow ? new double[rows] : null;
        int points = Math.max(n, rowOffset + rows); // the rows may lie past the n points they sum over
        long[] z = new long[2];
        try (GpuStream s = new GpuStream(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * points * dim);
             ScratchBuffers.Lease zrb = ScratchBuffers.borrow(dev, 8L * Math.max(1, rows));
             ScratchBuffers.Lease fb = ScratchBuffers.borrow(dev, 8L * Math.max(1, force.length));
             ScratchBuffers.Lease zb = ScratchBuffers.borrow(dev, 16)) {
            yb.buffer().upload(y, 0, points * dim, 0, s);
            zb.buffer().upload(z, s);
            launch(s, dim, yb.buffer(), n, rowOffset, rows, zShift, dof, fb.buffer(), zb.buffer(),
                    perRow ? zrb.buffer() : null);
            fb.buffer().download(force, force.length, s);
            zb.buffer().download(z, 2, s);
            if (perRow) {
                zrb.buffer().download(zRows, rows, s);
            }
            s.synchronize("t-SNE exact repulsion (rows " + rows + " of " + n + ", dim " + dim + ")");
        }
        return new Repulsion(force, z, zShift, zRows);
    }
}
