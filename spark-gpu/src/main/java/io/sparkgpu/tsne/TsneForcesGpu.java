package io.sparkgpu.tsne;

import io.sparkgpu.cuda.CudaDevice;
import io.sparkgpu.cuda.DeviceBuffer;
import io.sparkgpu.cuda.DeviceResidentCache;
import io.sparkgpu.cuda.GpuStream;
import io.sparkgpu.cuda.KernelLauncher;
import io.sparkgpu.cuda.KernelTimer;
import io.sparkgpu.cuda.ScratchBuffers;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * GPU side of {@link TsneForces} (module {@code tsne}, kernels tsne_attr_sell_d*, tsne_s2g_d*, tsne_g2s_d*). P is
 * uploaded once per slice and device (SELL-32-256, {@link SellRows}) into the {@link DeviceResidentCache} under a
 * key bound to the identity of the {@link SparseRows} object; per call only y goes up and the result comes down.
 * Per-call buffers come from {@link ScratchBuffers}, so iterations do not allocate device memory. Every method is
 * thread-safe: each call has its own stream and buffers, and resident P is shared read-only.
 */
final class TsneForcesGpu {
    static final int BLOCK = 256;
    /**
     * Offsets in the S2G/G2S parameter array (TSNE_PRM_*, include/layout/tsne.cuh): lo, centre, h, zMax, multipliers.
     */
    static final int PRM_LO = 0;
    static final int PRM_CENTRE = 3;
    static final int PRM_H = 6;
    static final int PRM_ZMAX = 7;
    static final int PRM_MULT = 8;
    private static final AtomicLong NEXT_ID = new AtomicLong();
    /** Identity of each P slice seen here (without a caller key) -> its residency id. */
    private static final Map<SparseRows, Long> IDS = new WeakHashMap<>();
    /** Per residency key seen in this JVM: {entries of col/val (SELL padded + hub CSR), meta ints, hub rows}. */
    private static final Map<String, int[]> SHAPES = new ConcurrentHashMap<>();

    /** Device time of the kernel of this thread's last GPU call, in ms (CUDA events: no transfers). */
    static final ThreadLocal<double[]> LAST_KERNEL_MS = ThreadLocal.withInitial(() -> new double[] {Double.NaN});

    private TsneForcesGpu() {
    }

    /** tsne_s2g_d2_p3 style names: kernels specialised for p = 3 and 4 (unrolled), generic ones otherwise. */
    static String gridKernel(String prefix, InterpGrid g) {
        return prefix + "_d" + g.dim + (g.p == 3 || g.p == 4 ? "_p" + g.p : "");
    }

    /** The residency key of P: "tsne-P#<id>/" for an identity-tracked slice, "tsne-P:<caller key>/" otherwise. */
    static String residencyKey(SparseRows p) {
        synchronized (IDS) {
            Long id = IDS.get(p);
            return id == null ? null : "tsne-P#" + id + "/";
        }
    }

    private static String keyOf(SparseRows p, String callerKey) {
        if (callerKey != null) {
            return "tsne-P:" + callerKey + ":" + p.rowOffset + ":" + p.rows + ":" + p.nnz() + "/";
        }
        synchronized (IDS) {
            return "tsne-P#" + IDS.computeIfAbsent(p, k -> NEXT_ID.incrementAndGet()) + "/";
        }
    }

    /**
     * P's SELL-32-256 arrays on the device while this is open: the resident copy under P's key (uploaded on first
     * use), or a private copy when the resident cache cannot hold it or another thread is filling it.
     */
    static final class DeviceP implements AutoCloseable {
        final SparseRows p;
        final int nSlices;
        final int nHubs;
        final DeviceBuffer meta;
        final DeviceBuffer col;
        final DeviceBuffer val;
        private final List<AutoCloseable> held;

        private DeviceP(SparseRows p, int nSlices, int nHubs, DeviceBuffer meta, DeviceBuffer col, DeviceBuffer val,
                List<AutoCloseable> held) {
            this.p = p;
            this.nSlices = nSlices;
            this.nHubs = nHubs;
            this.meta = meta;
            this.col = col;
            this.val = val;
            this.held = held;
        }

        @Override
        public void close() {
            closeAll(held);
        }
    }

    /** P on {@code dev}, uploaded through stream {@code s} (synchronised before return when anything was copied). */
    static DeviceP deviceP(CudaDevice dev, SparseRows p, String callerKey, GpuStream s) {
        final String key = keyOf(p, callerKey);
        SellRows sell = null;
        int[] shape = SHAPES.get(key);
        if (shape == null) {
            sell = SellRows.of(p);
            shape = new int[] {sell.col.length, sell.meta.length, sell.nHubs};
            SHAPES.put(key, shape);
        }
        final long padded = shape[0];
        final int nSlices = (p.rows + SellRows.C - 1) / SellRows.C;
        final int nHubs = shape[2];
        final long metaBytes = 4L * shape[1];
        DeviceResidentCache cache = DeviceResidentCache.of(dev);
        List<AutoCloseable> held = new ArrayList<>();
        boolean ok = false;
        try {
            DeviceResidentCache.Lease lm = hold(held, cache.acquire(key + "meta", metaBytes));
            DeviceResidentCache.Lease lc = hold(held, cache.acquire(key + "col", Math.max(4L * padded, 8)));
            DeviceResidentCache.Lease lv = hold(held, cache.acquire(key + "val", Math.max(8L * padded, 8)));
            DeviceBuffer meta;
            DeviceBuffer col;
            DeviceBuffer val;
            if (lm == null || lc == null || lv == null) { // does not fit or being filled by another thread: private
                sell = sell != null ? sell : SellRows.of(p);
                meta = hold(held, DeviceBuffer.allocate(dev, metaBytes));
                col = hold(held, DeviceBuffer.allocate(dev, Math.max(4L * padded, 8)));
                val = hold(held, DeviceBuffer.allocate(dev, Math.max(8L * padded, 8)));
                upload(sell, meta, col, val, true, true, true, s);
                s.synchronize("upload of t-SNE P (" + p.nnz() + " entries)");
            } else {
                meta = lm.buffer();
                col = lc.buffer();
                val = lv.buffer();
                if (!lm.wasPresent() || !lc.wasPresent() || !lv.wasPresent()) {
                    sell = sell != null ? sell : SellRows.of(p);
                    upload(sell, meta, col, val, !lm.wasPresent(), !lc.wasPresent(), !lv.wasPresent(), s);
                    s.synchronize("upload of t-SNE P (" + p.nnz() + " entries)");
                    lm.markFilled();
                    lc.markFilled();
                    lv.markFilled();
                }
            }
            DeviceP d = new DeviceP(p, nSlices, nHubs, meta, col, val, held);
            ok = true;
            return d;
        } finally {
            if (!ok) {
                closeAll(held);
            }
        }
    }

    /** Queues the attractive kernel: out (slice rows x dim) from y (all n points x dim), both on the device. */
    static void launchAttractive(GpuStream s, DeviceP dp, int dim, DeviceBuffer y, DeviceBuffer out) {
        // hub blocks first: they run longest, so they start while the SELL blocks fill the rest of the device
        long blocks = (long) dp.nHubs + grid((long) dp.nSlices * SellRows.C);
        if (blocks > Integer.MAX_VALUE) {
            throw new IllegalArgumentException("attractive launch too large: " + blocks + " blocks");
        }
        KernelLauncher.launch(s, TsneForces.MODULE, "tsne_attr_sell_d" + dim, (int) blocks,
                BLOCK, 0, dp.meta, dp.nSlices, dp.nHubs, dp.val, dp.col, dp.p.rowOffset, y, out);
    }

    static double[] attractive(CudaDevice dev, SparseRows p, String callerKey, double[] y, int dim) {
        double[] out = new double[p.rows * dim];
        try (GpuStream s = new GpuStream(dev);
             DeviceP dp = deviceP(dev, p, callerKey, s);
             KernelTimer timer = new KernelTimer(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * y.length);
             ScratchBuffers.Lease ob = ScratchBuffers.borrow(dev, 8L * out.length)) {
            yb.buffer().upload(y, s);
            timer.start(s);
            launchAttractive(s, dp, dim, yb.buffer(), ob.buffer());
            timer.stop(s);
            ob.buffer().download(out, out.length, s);
            s.synchronize("t-SNE attractive term (rows " + p.rows + ", nnz " + p.nnz() + ", dim " + dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return out;
    }

    /** Uploads the chosen SELL arrays (an all-empty slice has no entries to copy). */
    private static void upload(SellRows sell, DeviceBuffer meta, DeviceBuffer col, DeviceBuffer val, boolean m,
            boolean c, boolean v, GpuStream s) {
        if (m) {
            meta.upload(sell.meta, s);
        }
        if (c && sell.col.length > 0) {
            col.upload(sell.col, s);
        }
        if (v && sell.val.length > 0) {
            val.upload(sell.val, s);
        }
    }

    private static void closeAll(List<AutoCloseable> held) {
        for (AutoCloseable c : held) {
            try {
                c.close();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        }
        held.clear();
    }

    private static <T extends AutoCloseable> T hold(List<AutoCloseable> held, T c) {
        if (c != null) {
            held.add(c);
        }
        return c;
    }

    /** Kernel parameters: lo, centre, h, zMax, multiplier pairs (see include/tsne/grid.cuh). */
    static double[] params(InterpGrid g, double zMax, double[] mult) {
        double[] prm = new double[PRM_MULT + mult.length];
        System.arraycopy(g.lo, 0, prm, PRM_LO, g.dim);
        double[] c = TsneForces.centre(g);
        System.arraycopy(c, 0, prm, PRM_CENTRE, 3);
        prm[PRM_H] = g.spacing();
        prm[PRM_ZMAX] = zMax;
        System.arraycopy(mult, 0, prm, PRM_MULT, mult.length);
        return prm;
    }

    /** S2G kernel parameters for {@code nTotal} points in all. */
    static double[] s2gParams(InterpGrid g, long nTotal) {
        return params(g, 0, TsneForces.multipliers(TsneForces.chargeShifts(g, nTotal)));
    }

    /** G2S kernel parameters for {@code nTotal} points in all and z sums at {@code zShift}. */
    static double[] g2sParams(InterpGrid g, long nTotal, int zShift) {
        return params(g, TsneForces.zMax(nTotal), TsneForces.multipliers(new int[] {zShift}));
    }

    /** Queues S2G of {@code rows} points of y into acc (fixed-point pairs, added to what acc holds). */
    static void launchS2G(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm, DeviceBuffer acc) {
        KernelLauncher.launch(s, TsneForces.MODULE, gridKernel("tsne_s2g", g), grid(rows), BLOCK, 0,
                y, rows, g.p, g.nodesPerDim(), g.nodes(), prm, acc);
    }

    /** Queues G2S + Phi2Force of {@code rows} points: force (rows x dim) and z (fixed-point pair, added to). */
    static void launchG2S(GpuStream s, InterpGrid g, int rows, DeviceBuffer y, DeviceBuffer prm, DeviceBuffer phi,
            DeviceBuffer force, DeviceBuffer z) {
        KernelLauncher.launch(s, TsneForces.MODULE, gridKernel("tsne_g2s", g), grid(rows), BLOCK, 0,
                y, rows, g.p, g.nodesPerDim(), g.nodes(), prm, phi, force, z);
    }

    static long[] s2g(CudaDevice dev, InterpGrid g, long nTotal, double[] y, int rows) {
        long[] acc = new long[TsneForces.chargesLength(g)];
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
            timer.start(s);
            launchS2G(s, g, rows, yb.buffer(), pb.buffer(), a);
            timer.stop(s);
            a.download(acc, acc.length, s);
            s.synchronize("t-SNE S2G (rows " + rows + ", " + g.nodes() + " nodes, dim " + g.dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return acc;
    }

    static Repulsion g2s(CudaDevice dev, InterpGrid g, long nTotal, int zShift, double[] phi, double[] y, int rows) {
        double[] force = new double[rows * g.dim];
        long[] z = new long[2];
        double[] prm = g2sParams(g, nTotal, zShift);
        try (GpuStream s = new GpuStream(dev);
             KernelTimer timer = new KernelTimer(dev);
             ScratchBuffers.Lease yb = ScratchBuffers.borrow(dev, 8L * rows * g.dim);
             ScratchBuffers.Lease pb = ScratchBuffers.borrow(dev, 8L * prm.length);
             ScratchBuffers.Lease phb = ScratchBuffers.borrow(dev, 8L * phi.length);
             ScratchBuffers.Lease fb = ScratchBuffers.borrow(dev, 8L * force.length);
             ScratchBuffers.Lease zb = ScratchBuffers.borrow(dev, 16)) {
            yb.buffer().upload(y, 0, rows * g.dim, 0, s);
            pb.buffer().upload(prm, s);
            phb.buffer().upload(phi, s);
            zb.buffer().upload(z, s);
            timer.start(s);
            launchG2S(s, g, rows, yb.buffer(), pb.buffer(), phb.buffer(), fb.buffer(), zb.buffer());
            timer.stop(s);
            fb.buffer().download(force, force.length, s);
            zb.buffer().download(z, 2, s);
            s.synchronize("t-SNE G2S (rows " + rows + ", " + g.nodes() + " nodes, dim " + g.dim + ")");
            LAST_KERNEL_MS.get()[0] = timer.millis();
        }
        return new Repulsion(force, z, zShift);
    }

    private static int grid(long items) {
        return (int) Math.max(1, (items + BLOCK - 1) / BLOCK);
    }
}
