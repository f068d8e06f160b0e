package io.sparkgpu.tsne.repulsion;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import io.sparkgpu.cuda.ScratchBuffers;

/**
 * GPU side of {@link GridRepulsion} (module {@code tsne}, kernels tsne_s2g_d*, tsne_g2s_d*). Per-call buffers come
 * from {@link ScratchBuffers}, so iterations do not allocate device memory; each call has its own stream. The
 * launch methods and kernel parameters are public for the device-resident iteration
 * ({@link io.sparkgpu.tsne.optimize}'s TsneDeviceState), which queues the same kernels on its own buffers.
 */
public final class GridRepulsionGpu {
    static final int BLOCK = 256;

    /**
     * Offsets in the S2G/G2S parameter array (TSNE_PRM_*, include/layout/tsne.cuh): lo, centre, h, zMax, multipliers.
     */
    static final int PRM_LO = 0;

    static final int PRM_CENTRE = 3;

    static final int PRM_H = 6;

    static final int PRM_ZMAX = 7;

    static final int PRM_MULT = 8;

    /** Device time of the kernel of this thread's last GPU call, in ms (CUDA events: no transfers). */
    static final ThreadLocal<double[]> LAST_KERNEL_MS = ThreadLocal.withInitial(() -> new double[] {Double.NaN});

    private GridRepulsionGpu() {
    }

    /** tsne_s2g_d2_p3 style names: kernels specialised for p = 3 and 4 (unrolled), generic ones otherwise. */
    static String gridKernel(String prefix, InterpGrid g) {
        return prefix + "_d" + g.dim + (g.p == 3 || g.p == 4 ? "_p" + g.p : "");
    }

    /** Kernel parameters: lo, centre, h, zMax, multiplier pairs (see include/tsne/grid.cuh). */
    static double[] params(InterpGrid g, double zMax, double[] mult) {
        double[] prm = new double[PRM_MULT + mult.length];
        System.arraycopy(g.lo, 0, prm, PRM_LO, g.dim);
        double[] c = GridRepulsion.centre(g);
        System.arraycopy(c, 0, prm, PRM_CENTRE, 3);
        prm[PRM_H] = g.spacing();
        prm[PRM_ZMAX] = zMax;
        System.arraycopy(mult, 0, prm, PRM_MULT, mult.length);
        return prm;
    }

    /** S2G kernel parameters for {@code nTotal} points in all. */
    public static double[] s2gParams(InterpGrid g, long nTotal) {
        return params(g, 0, GridRepulsion.multipliers(GridRepulsion.chargeShifts(g, nTotal)));
    }

    /** G2S kernel parameters for {@code nTotal} points in all and z sums at {@code zShift}. */
    public static double[] g2sParams(InterpGrid g, long nTotal, int zShift) {
        return params(g, GridRepulsion.zMax(nTotal), GridRepulsion.multipliers(new int[] {zShift}));
    }

    /** Queues S2G of {@code rows} points of y into acc (fixed-point pairs, added to what acc holds). */
    public static void launchS2G(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm, DeviceBuffer acc) {
        KernelLauncher.launch(s, GridRepulsion.MODULE, gridKernel("tsne_s2g", g), grid(rows), BLOCK, 0,
                y, rows, g.p, g.nodesPerDim(), g.nodes(), prm, acc);
    }

    /** Queues G2S + Phi2Force of {@code rows} points: force (rows x dim) and z (fixed-point pair, added to). */
    public static void launchG2S(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm, DeviceBuffer phi,
            DeviceBuffer force, DeviceBuffer z) {
        launchG2S(s, g, rows, y, prm, phi, force, z, null);
    }

    /**
     * As above; {@code zRows} (rows doubles, or null) receives each row's z_i as well. {@code y} and {@code force} are
     * a {@link DeviceBuffer} or a {@link jcuda.driver.CUdeviceptr} into one ({@code pointer().withByteOffset(...)}: a
     * run of rows).
     */
    public static void launchG2S(GpuStream s, InterpGrid g, int rows, Object y, DeviceBuffer prm, DeviceBuffer phi,
            Object force, DeviceBuffer z, DeviceBuffer zRows) {
        KernelLauncher.launch(s, GridRepulsion.MODULE, gridKernel("tsne_g2s", g), grid(rows), BLOCK, 0,
                y, rows, g.p, g.nodesPerDim(), g.nodes(), prm, phi, force, z, g.dof, KernelLauncher.nullable(zRows));
    }

    /**
     * Queues S2G of {@code rows} points by boxes (include/tsne/boxes.cuh: count, scan, scatter, then one thread per
     * point in box order, each warp adding one stencil per run of equal boxes) into acc, added to what it holds: the plain S2G's bits, since the fixed-point sums are
     * exact in any order. {@code boxes} holds the per-call index buffers and grows as needed.
     */
    public static void launchS2GByBoxes(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm,
            DeviceBuffer acc, S2GBoxes boxes) {
        int nb = boxes.ensure(s.device(), g, rows);
        boxes.counts().zero(s);
        KernelLauncher.launch(s, GridRepulsion.MODULE, "tsne_box_count_d" + g.dim, grid(rows), BLOCK, 0,
                y, rows, g.p, g.nodesPerDim(), prm, boxes.boxOf(), boxes.counts());
        KernelLauncher.launch(s, GridRepulsion.MODULE, "tsne_box_scan", 1, S2GBoxes.SCAN_THREADS, 0,
                boxes.counts(), nb, boxes.offsets(), boxes.cursor());
        KernelLauncher.launch(s, GridRepulsion.MODULE, "tsne_box_scatter", grid(rows), BLOCK, 0,
                boxes.boxOf(), rows, boxes.cursor(), boxes.order());
        KernelLauncher.launch(s, GridRepulsion.MODULE, gridKernel("tsne_s2g_sorted", g), grid(rows), BLOCK, 0,
                y, boxes.order(), boxes.boxOf(), rows, g.p, g.nodesPerDim(), g.nodes(), prm, acc);
    }

    /** S2G by boxes or by point ({@link S2GBoxes#enabled()}), queued on s into acc (added to). */
    public static void launchS2GPreferred(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm,
            DeviceBuffer acc, S2GBoxes boxes) {
        if (boxes != null && S2GBoxes.enabled()) {
            launchS2GByBoxes(s, g, rows, y, prm, acc, boxes);
        } else {
            launchS2G(s, g, rows, y, prm, acc);
        }
    }

    static long[] s2g(CudaDevice dev, InterpGrid g, long nTotal, double[] y, int rows) {
        long[] acc = new long[GridRepulsion.chargesLength(g)];
        double[] prm = s2gParams(g, nTotal);
        try (GpuStream s = new GpuStream(dev);
             KernelTimer timer = new KernelTimer(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * rows * g.dim);
             ScratchBuffers.Lease pb = ScratchBuffers.borrow(dev, 8L * prm.length);
             ScratchBuffers.Lease ab = ScratchBuffers.borrow(dev, 8L * acc.length)) {
            yb.buffer().upload(y, 0, rows * g.dim, 0, s);
            pb.buffer().upload(prm, s);
            DeviceBuffer a = ab.buffer();
            a.zero(s);
            // the per-call path (distributed mode's slices) keeps the plain kernel: by boxes it would allocate its
            // index buffers per call; the device-resident iteration (TsneDeviceState) goes by boxes when asked to
            timer.start(s);
            launchS2G(s, g, rows, yb.buffer(), pb.buffer(), a);
            timer.stop(s);
            a.download(acc, acc.length, s);
            s.synchronize("t-SNE S2G (rows " + rows + ", " + g.nodes() + " nodes, dim " + g.dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return acc;
    }

    static Repulsion g2s(CudaDevice dev, InterpGrid g, long nTotal, int zShift, double[] phi, double[] y, int rows,
            boolean perRow) {
        double[] force = new double[rows * g.dim];
        double[] zRows = perRow ? new double[rows] : null;
        long[] z = new long[2];
        double[] prm = g2sParams(g, nTotal, zShift);
        try (GpuStream s = new GpuStream(dev);
             KernelTimer timer = new KernelTimer(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * rows * g.dim);
             ScratchBuffers.Lease pb = ScratchBuffers.borrow(dev, 8L * prm.length);
             ScratchBuffers.Lease phb = ScratchBuffers.borrow(dev, 8L * phi.length);
             ScratchBuffers.Lease fb = ScratchBuffers.borrow(dev, 8L * force.length);
             ScratchBuffers.Lease zb = ScratchBuffers.borrow(dev, 16);
             ScratchBuffers.Lease zrb = ScratchBuffers.borrow(dev, 8L * Math.max(1, rows))) {
            yb.buffer().upload(y, 0, rows * g.dim, 0, s);
            pb.buffer().upload(prm, s);
            phb.buffer().upload(phi, s);
            zb.buffer().upload(z, s);
            timer.start(s);
            launchG2S(s, g, rows, yb.buffer(), pb.buffer(), phb.buffer(), fb.buffer(), zb.buffer(),
                    perRow ? zrb.buffer() : null);
            timer.stop(s);
            fb.buffer().download(force, force.length, s);
            zb.buffer().download(z, 2, s);
            if (perRow) {
                zrb.buffer().download(zRows, rows, s);
            }
            s.synchronize("t-SNE G2S (rows " + rows + ", " + g.nodes() + " nodes, dim " + g.dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return new Repulsion(force, z, zShift, zRows);
    }

    static int grid(long items) {
        return (int) Math.max(1, (items + BLOCK - 1) / BLOCK);
    }
}
